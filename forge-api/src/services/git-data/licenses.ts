/**
 * Which license a LICENSE file holds (Gitea reads the file named LICENSE at the root of the
 * default branch and answers the SPDX ids its classifier finds). Here the text is compared
 * with every SPDX license text (npm `spdx-license-list`) by the overlap of their word pairs,
 * which ignores copyright lines, names, years and formatting; a file that is not at least 80%
 * alike any license answers no license.
 */
import spdxFull from 'spdx-license-list/full';
import { licenseNames } from '../templates';

const texts = spdxFull as unknown as Record<string, { licenseText?: string } | undefined>;

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

let known: { id: string; pairs: Set<string> }[] | null = null;

function licenses(): { id: string; pairs: Set<string> }[] {
  if (!known) {
    known = Object.entries(texts)
      .filter(([, v]) => v?.licenseText)
      .map(([id, v]) => ({ id, pairs: wordPairs(v!.licenseText!) }));
  }
  return known;
}

/** SPDX ids of the license the text holds (at most one), or none. */
export function detectLicenses(text: string): string[] {
  const pairs = wordPairs(text);
  if (pairs.size === 0) return [];
  const preferred = new Set(licenseNames());
  let best: { id: string; score: number } | null = null;
  for (const l of licenses()) {
    // Cheap bound first: sizes alone cap the score.
    const bound = (2 * Math.min(l.pairs.size, pairs.size)) / (l.pairs.size + pairs.size);
    if (bound < 0.8 || (best && bound < best.score)) continue;
    let common = 0;
    for (const p of pairs) if (l.pairs.has(p)) common++;
    const score = (2 * common) / (l.pairs.size + pairs.size);
    if (score < 0.8) continue;
    const better = !best || score > best.score + 1e-9 || (Math.abs(score - best.score) <= 1e-9 && preferred.has(l.id) && !preferred.has(best.id));
    if (better) best = { id: l.id, score };
  }
  return best ? [best.id] : [];
}
