/**
 * nginx sizes as the policies accept them. nginx reads buffer and zone sizes with
 * ngx_parse_size (units k/K, m/M; no g) and client_max_body_size with ngx_parse_offset
 * (k/K, m/M, g/G). A value without unit is bytes. The digit limits keep every value below
 * 2^53 so it is exact as a JavaScript number.
 */

/** proxy_buffer_size, proxy_buffers size, proxy_busy_buffers_size, limit_req_zone size. */
export const BUFFER_SIZE_PATTERN = '^(\\d{1,9}|\\d{1,6}[kKmM])$';
/** client_max_body_size. */
export const BODY_SIZE_PATTERN = '^(\\d{1,12}|\\d{1,6}[kKmMgG])$';

export const BUFFER_SIZE_RE = new RegExp(BUFFER_SIZE_PATTERN);
export const BODY_SIZE_RE = new RegExp(BODY_SIZE_PATTERN);

const UNIT: Record<string, number> = { k: 1024, m: 1024 * 1024, g: 1024 * 1024 * 1024 };

/** Bytes of a size string already validated by one of the patterns above. */
export function sizeBytes(size: string): number {
  const last = size.slice(-1).toLowerCase();
  const unit = UNIT[last];
  return unit === undefined ? Number(size) : Number(size.slice(0, -1)) * unit;
}

/** A short human form for messages: 28672 -> "28k (28672 bytes)". */
export function describeBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0 && bytes > 0) return `${bytes / (1024 * 1024)}m (${bytes} bytes)`;
  if (bytes % 1024 === 0 && bytes > 0) return `${bytes / 1024}k (${bytes} bytes)`;
  return `${bytes} bytes`;
}

/** nginx refuses a limit_req zone smaller than 8 pages ("zone ... is too small"). */
export const MIN_ZONE_BYTES = 32 * 1024;
/** Our own cap: a larger zone passes `nginx -t` but can fail the reload when memory runs out. */
export const MAX_ZONE_BYTES = 1024 * 1024 * 1024;
