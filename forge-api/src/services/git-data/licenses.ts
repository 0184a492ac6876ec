/**
 * Which license a LICENSE file holds (Gitea reads the file named LICENSE at the root of the
 * default branch and answers the SPDX ids its classifier finds). Here the text is compared
 * with every SPDX license text (npm `spdx-license-list`) by the overlap of their word pairs,
 * which ignores copyright lines, names, years and formatting; a file that is not at least 80%
 * alike any license answers no license.
 *
 * The ~730 texts are read once, when the first file is classified, and kept only as sorted
 * 32-bit hashes of their word pairs (~3 MB); kept as sets of strings they took ~45 MB, and the
 * texts themselves ~6 MB, for as long as the process lives.
 */
import fs from 'node:fs';
import { licenseNames } from '../templates';

/** The distinct lowercased word pairs of a text (copyright lines and placeholders left out). */
function wordPairs(text: string): Set<string> {
  const words = text
    .toLowerCase()
    .split('\n')
    .filter((line) => !/^\s*(copyright|\(c\)|©)/.test(line))
    .join(' ')
    .replace(/<[^>]*>|\[[^\]]*\]/g, ' ') // template placeholders
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean);
  const pairs = new Set<string>();
  for (let i = 1; i < words.length; i++) pairs.add(`${words[i - 1]} ${words[i]}`);
  return pairs;
}

/** FNV-1a of a pair: two different pairs sharing a hash move a score by ~1/size, far below what decides a match. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The word pairs of a text as sorted distinct hashes. */
function pairHashes(text: string): Uint32Array {
  const hashes = Uint32Array.from(wordPairs(text), hash).sort();
  let n = 0;
  for (let i = 0; i < hashes.length; i++) if (i === 0 || hashes[i] !== hashes[n - 1]) hashes[n++] = hashes[i];
  return hashes.slice(0, n);
}

/** How many values two sorted arrays share. */
function common(a: Uint32Array, b: Uint32Array): number {
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) {
    if (a[i] < b[j]) i++;
    else if (a[i] > b[j]) j++;
    else {
      n++;
      i++;
      j++;
    }
  }
  return n;
}

let known: { id: string; pairs: Uint32Array }[] | null = null;

function licenses(): { id: string; pairs: Uint32Array }[] {
  if (!known) {
    // Read, not required: the parsed list is dropped once hashed (require would keep it cached).
    const file = require.resolve('spdx-license-list/spdx-full.json');
    const texts = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, { licenseText?: string } | undefined>;
    known = Object.entries(texts)
      .filter(([, v]) => v?.licenseText)
      .map(([id, v]) => ({ id, pairs: pairHashes(v!.licenseText!) }));
  }
  return known;
}

/** SPDX ids of the license the text holds (at most one), or none. */
export function detectLicenses(text: string): string[] {
  const pairs = pairHashes(text);
  if (pairs.length === 0) return [];
  const preferred = new Set(licenseNames());
  let best: { id: string; score: number } | null = null;
  for (const l of licenses()) {
    // Cheap bound first: sizes alone cap the score.
    const bound = (2 * Math.min(l.pairs.length, pairs.length)) / (l.pairs.length + pairs.length);
    if (bound < 0.8 || (best && bound < best.score)) continue;
    const score = (2 * common(l.pairs, pairs)) / (l.pairs.length + pairs.length);
    if (score < 0.8) continue;
    const better = !best || score > best.score + 1e-9 || (Math.abs(score - best.score) <= 1e-9 && preferred.has(l.id) && !preferred.has(best.id));
    if (better) best = { id: l.id, score };
  }
  return best ? [best.id] : [];
}
