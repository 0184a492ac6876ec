/**
 * Per-rule body size limits. nginx checks client_max_body_size against Content-Length only
 * when it picks a location by URI (find-config phase); a request handed to a named location
 * (`error_page 418 = @rule_x`) is not checked again, only chunked bodies are counted while read.
 * A rule location can still refuse a too-large Content-Length itself with
 * `map $content_length $too_big_N { "~<regex>" 1; default 0; }` + `if ($too_big_N) { return 413; }`.
 */

/** A regex matching exactly the decimal strings (leading zeros allowed) of integers > maxBytes. */
export function contentLengthAbove(maxBytes: number): string {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new Error(`not a byte count: ${maxBytes}`);
  const d = String(maxBytes);
  const n = d.length;
  const alternatives = [`[1-9][0-9]{${n},}`];
  for (let i = 0; i < n; i++) {
    const digit = Number(d[i]);
    if (digit === 9) continue;
    const low = digit + 1;
    const cls = low === 9 ? '9' : `[${low}-9]`;
    const rest = n - i - 1;
    alternatives.push(`${d.slice(0, i)}${cls}${rest > 0 ? `[0-9]{${rest}}` : ''}`);
  }
  return `^0*(${alternatives.join('|')})$`;
}
