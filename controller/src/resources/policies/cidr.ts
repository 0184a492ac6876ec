/**
 * Client networks as IPAccessPolicy accepts them: an IPv4 or IPv6 address, optionally with a
 * prefix length (no prefix: the one address). IPv6 is written in hex groups (`::` allowed; the
 * dotted IPv4 tail of `::ffff:192.0.2.1` is not accepted: write `::ffff:c000:201`). The pattern is
 * the CRD's too (charts/portcullis/crds), so the API server and the controller accept the same.
 */

const V4_OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const V4 = `${V4_OCTET}(\\.${V4_OCTET}){3}(/(3[0-2]|[12]?[0-9]))?`;
const H = '[0-9a-fA-F]{1,4}';
const V6_ADDRESS = [
  `(${H}:){7}${H}`,
  `(${H}:){1,7}:`,
  `(${H}:){1,6}:${H}`,
  `(${H}:){1,5}(:${H}){1,2}`,
  `(${H}:){1,4}(:${H}){1,3}`,
  `(${H}:){1,3}(:${H}){1,4}`,
  `(${H}:){1,2}(:${H}){1,5}`,
  `${H}:(:${H}){1,6}`,
  `:((:${H}){1,7}|:)`,
].join('|');
const V6 = `(${V6_ADDRESS})(/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))?`;

export const CIDR_PATTERN = `^((${V4})|(${V6}))$`;
export const CIDR_RE = new RegExp(CIDR_PATTERN);
/** Longest text of an address with prefix ("ffff:...:ffff/128"). */
export const CIDR_MAX_LENGTH = 43;

export interface Network {
  family: 4 | 6;
  /** Address bytes with the bits past the prefix cleared. */
  bytes: number[];
  prefix: number;
}

function v6Bytes(text: string): number[] {
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return all.flatMap((g) => {
    const v = parseInt(g, 16);
    return [v >> 8, v & 255];
  });
}

/** A network of a value that matches CIDR_PATTERN. */
export function parseNetwork(text: string): Network {
  const [address, prefixText] = text.split('/');
  const family = address.includes(':') ? 6 : 4;
  const bytes = family === 4 ? address.split('.').map(Number) : v6Bytes(address);
  const prefix = prefixText === undefined ? bytes.length * 8 : Number(prefixText);
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    bytes[i] &= (0xff << (8 - keep)) & 0xff;
  }
  return { family, bytes, prefix };
}

/**
 * The network in the form nginx reads without a warning (host bits cleared: nginx warns "low
 * address bits are meaningless"): `10.0.0.0/8`, `2001:db8:0:0:0:0:0:0/32`. Equal networks written
 * differently get the same text.
 */
export function networkText(n: Network): string {
  if (n.family === 4) return `${n.bytes.join('.')}/${n.prefix}`;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((n.bytes[i] << 8) | n.bytes[i + 1]).toString(16));
  return `${groups.join(':')}/${n.prefix}`;
}

export function canonicalNetwork(text: string): string {
  return networkText(parseNetwork(text));
}

/** Whether `address` (a network of one address, or any network) lies inside `network`. */
export function contains(network: Network, address: Network): boolean {
  if (network.family !== address.family || address.prefix < network.prefix) return false;
  for (let bit = 0; bit < network.prefix; bit++) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if ((network.bytes[byte] & mask) !== (address.bytes[byte] & mask)) return false;
  }
  return true;
}
