/**
 * Names derived from what they stand for. A name the shared registries hand out (a map
 * variable, a split_clients variable, an upstream) is a function of its content, never of the
 * order things were asked for: a part of the model kept from an earlier build therefore still
 * names the right blocks, and keeping it needs no replay of how it was built (model/uses.ts).
 */
import { createHash } from 'crypto';

/**
 * 64 bits of the SHA-256 of `text` in base 36 (at most 13 characters: names are repeated
 * through the config, and nginx reads every byte at each reload; nginx variable names ignore
 * case, so no upper-case letters). Two contents under one name would be one block for two
 * meanings: with the ~10,000 names of a large config, a 1-in-10^11 chance.
 */
export function contentHash(text: string): string {
  // A build asks again for the names of what it keeps using (short texts: query names, flags).
  const keep = text.length <= 512;
  let hash = keep ? hashes.get(text) : undefined;
  if (hash === undefined) {
    hash = createHash('sha256').update(text).digest().readBigUInt64BE(0).toString(36);
    if (keep) {
      if (hashes.size >= 50000) hashes.clear();
      hashes.set(text, hash);
    }
  }
  return hash;
}
const hashes = new Map<string, string>();
