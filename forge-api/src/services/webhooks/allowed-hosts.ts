/**
 * Which servers a webhook may call: Gitea's ALLOWED_HOST_LIST ([security] since 1.27, formerly
 * [webhook]), a comma-separated list of
 *   - `external` (the default): global unicast addresses that are neither private nor in the
 *     reserved ranges (carrier-grade NAT, documentation nets, NAT64/6to4/Teredo that embed an
 *     IPv4 address, cloud metadata...);
 *   - `private`: RFC 1918 and fc00::/7 addresses (same reserved exclusions);
 *   - `loopback`: 127.0.0.0/8 and ::1;
 *   - `*`: everything;
 *   - CIDR networks (`10.0.0.0/8`, `fd00::/8`);
 *   - host name globs (`*.example.com`), matched on the name in the URL.
 * Link-local (169.254.0.0/16 with the metadata address, fe80::/10), unspecified (0.0.0.0, ::),
 * multicast and broadcast addresses are in no builtin: only a CIDR entry or `*` allows them.
 * The check is made on the address actually connected to (after DNS resolution) and again
 * on every redirect hop, so neither a name that resolves inward nor a redirect gets past it.
 */
import net from 'node:net';
import { compileGlob, type Glob } from '../glob';

/** The setting's name, as messages cite it (Gitea 1.27's key). */
export const ALLOWED_HOST_LIST_KEY = 'ALLOWED_HOST_LIST';

interface Cidr {
  family: 4 | 6;
  bytes: Uint8Array;
  prefix: number;
}

const RESERVED = [
  '100.64.0.0/10',
  '168.63.129.16/32',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '100::/64',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '2001::/32',
  '2001:10::/28',
  '2001:20::/28',
  '2001:db8::/32',
  '2002::/16',
].map((c) => parseCidr(c) as Cidr);

const PRIVATE = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'].map((c) => parseCidr(c) as Cidr);
const LOOPBACK = ['127.0.0.0/8', '::1/128'].map((c) => parseCidr(c) as Cidr);
/** Not global unicast: unspecified (and all of 0.0.0.0/8, which Linux routes to this host), link-local, multicast, broadcast. */
const NOT_GLOBAL = ['0.0.0.0/8', '169.254.0.0/16', '224.0.0.0/4', '255.255.255.255/32', '::/128', 'fe80::/10', 'ff00::/8'].map(
  (c) => parseCidr(c) as Cidr,
);

/** The address as bytes (IPv4-mapped IPv6 addresses become IPv4), or null. */
export function ipBytes(address: string): { family: 4 | 6; bytes: Uint8Array } | null {
  let a = address.trim();
  if (a.startsWith('[') && a.endsWith(']')) a = a.slice(1, -1);
  const zone = a.indexOf('%');
  if (zone >= 0) a = a.slice(0, zone);
  const kind = net.isIP(a);
  if (kind === 4) return { family: 4, bytes: Uint8Array.from(a.split('.').map(Number)) };
  if (kind !== 6) return null;
  // Expand "::" and a trailing dotted quad into 16 bytes.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (quad) {
    const [b0, b1, b2, b3] = quad.slice(1).map(Number);
    a = `${a.slice(0, quad.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [left, right] = a.includes('::') ? a.split('::') : [a, undefined];
  const l = left ? left.split(':').map((x) => parseInt(x, 16)) : [];
  const r = right ? right.split(':').map((x) => parseInt(x, 16)) : [];
  const words = right === undefined ? l : [...l, ...Array(Math.max(0, 8 - l.length - r.length)).fill(0), ...r];
  if (words.length !== 8) return null;
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[2 * i] = (w >> 8) & 0xff;
    bytes[2 * i + 1] = w & 0xff;
  });
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (mapped) return { family: 4, bytes: bytes.slice(12) };
  return { family: 6, bytes };
}

export function parseCidr(text: string): Cidr | null {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text.trim());
  if (!m) return null;
  const ip = ipBytes(m[1]);
  const prefix = Number(m[2]);
  if (!ip || net.isIP(m[1]) === 0 || prefix > ip.bytes.length * 8) return null;
  // "::ffff:10.0.0.0/104" style entries: keep the family the text was written in.
  if (net.isIP(m[1]) === 6 && ip.family === 4) return { family: 4, bytes: ip.bytes, prefix: Math.max(0, prefix - 96) };
  return { family: ip.family, bytes: ip.bytes, prefix };
}

function inCidr(ip: { family: 4 | 6; bytes: Uint8Array }, c: Cidr): boolean {
  if (ip.family !== c.family) return false;
  let bits = c.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((ip.bytes[i] & mask) !== (c.bytes[i] & mask)) return false;
  }
  return true;
}

const inAny = (ip: { family: 4 | 6; bytes: Uint8Array }, list: Cidr[]) => list.some((c) => inCidr(ip, c));

export interface HostAllowList {
  readonly setting: string;
  /** The URL's host name is allowed by itself (a host glob, or an allowed IP literal). */
  allowsHostName(host: string): boolean;
  /** An address the host resolved to is allowed. */
  allowsAddress(address: string): boolean;
}

export function parseAllowedHostList(setting: string): HostAllowList {
  const builtins = new Set<string>();
  const nets: Cidr[] = [];
  const patterns: Glob[] = [];
  let everything = false;
  for (const raw of setting.split(',')) {
    const item = raw.trim().toLowerCase();
    if (!item) continue;
    const cidr = item.includes('/') ? parseCidr(item) : null;
    if (cidr) nets.push(cidr);
    else if (item === 'external' || item === 'private' || item === 'loopback') builtins.add(item);
    else if (item === '*') everything = true;
    else {
      // Gitea matches host names with path.Match: no `{a,b}` alternatives there.
      try {
        patterns.push(compileGlob(item.replace(/[{}]/g, '\\$&')));
      } catch {
        // An entry that is not a valid glob allows nothing (Gitea's Match fails too).
      }
    }
  }

  const matchesPattern = (host: string) => patterns.some((g) => g.match(host.toLowerCase()));

  function allowsIp(address: string): boolean {
    if (everything) return true;
    const ip = ipBytes(address);
    if (!ip) return false;
    const global = !inAny(ip, NOT_GLOBAL) && !inAny(ip, LOOPBACK);
    const reserved = inAny(ip, RESERVED);
    const priv = inAny(ip, PRIVATE);
    if (builtins.has('external') && global && !reserved && !priv) return true;
    if (builtins.has('private') && global && !reserved && priv) return true;
    if (builtins.has('loopback') && inAny(ip, LOOPBACK)) return true;
    return inAny(ip, nets);
  }

  return {
    setting,
    allowsHostName(host: string): boolean {
      const name = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
      if (everything || matchesPattern(name)) return true;
      return net.isIP(name) !== 0 && allowsIp(name);
    },
    allowsAddress(address: string): boolean {
      return matchesPattern(address) || allowsIp(address);
    },
  };
}

/** Why a delivery was not sent, recorded on the task. */
export class HostNotAllowedError extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(`webhook delivery refused: ${host}${address && address !== host ? ` (${address})` : ''} is not an allowed target (see the ${ALLOWED_HOST_LIST_KEY} setting)`);
    this.name = 'HostNotAllowedError';
  }
}
