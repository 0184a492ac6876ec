/**
 * Escapes with the exact rules of the Go functions Gitea formats its messages with, so the
 * forge's text is Gitea's byte for byte (links, HTML, the bytes a Matrix transaction id hashes).
 */

/** Go's url.QueryEscape: like encodeURIComponent, but also !'()* escaped and space as '+'. */
export function goQueryEscape(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+');
}

/** Each '/'-separated segment escaped, the slashes kept (Gitea's PathEscapeSegments). */
export const pathSegments = (s: string) => s.split('/').map(encodeURIComponent).join('/');

/** Go's html.EscapeString: the five characters HTML gives meaning to. */
export function goHtmlEscape(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll("'", '&#39;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&#34;');
}

/**
 * JSON as Go's encoder writes it, indented by two spaces: <, >, & and the two JavaScript line
 * separators as \u escapes. Receivers parse it to the same value; the bytes matter where they
 * are hashed (signatures, Matrix's transaction id).
 */
export function goJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
