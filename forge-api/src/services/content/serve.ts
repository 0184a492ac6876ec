/**
 * Serving a blob as a download (/raw, /media) with Gitea's headers: the type sniffed from the
 * first KiB (browsable images, audio, video and PDF as themselves, text as text/plain, the rest
 * application/octet-stream; never HTML, so a repository cannot serve pages), a sandboxing CSP,
 * `inline` disposition, ETag = blob id, Last-Modified = the path's last commit, and 304 for a
 * matching If-None-Match. Large blobs are streamed from git, never held in memory.
 */
import { PassThrough, type Readable } from 'node:stream';
import execa from 'execa';
import { gitEnv } from '../git/run';

const CSP_DEFAULT = "default-src 'none'; style-src 'unsafe-inline'; sandbox";
const CSP_PDF = "default-src 'none'; style-src 'unsafe-inline'; object-src 'self'; frame-src 'self'";
const CSP_MEDIA = "default-src 'none'; style-src 'unsafe-inline'; media-src 'self'";
/** Gitea's [server] STATIC_CACHE_TIME default (6 h). */
const STATIC_CACHE_SECONDS = 21600;

const MAGIC: [RegExp | ((b: Buffer) => boolean), string][] = [
  [(b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'image/png'],
  [(b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff, 'image/jpeg'],
  [(b) => b.subarray(0, 6).toString('latin1') === 'GIF87a' || b.subarray(0, 6).toString('latin1') === 'GIF89a', 'image/gif'],
  [(b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP', 'image/webp'],
  [(b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WAVE', 'audio/wav'],
  [(b) => b.subarray(0, 5).toString('latin1') === '%PDF-', 'application/pdf'],
  [(b) => b.subarray(4, 8).toString('latin1') === 'ftyp', 'video/mp4'],
  [(b) => b.subarray(0, 4).equals(Buffer.from([0x1a, 0x45, 0xdf, 0xa3])), 'video/webm'],
  [(b) => b.subarray(0, 4).toString('latin1') === 'OggS', 'audio/ogg'],
  [(b) => b.subarray(0, 3).toString('latin1') === 'ID3', 'audio/mpeg'],
];

function isUtf8(b: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(b);
    return true;
  } catch {
    // A multi-byte character cut at the end of the sniffed prefix is still text.
    for (let cut = 1; cut <= 3 && cut < b.length; cut++) {
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(b.subarray(0, b.length - cut));
        return true;
      } catch {
        /* try a shorter prefix */
      }
    }
    return false;
  }
}

/** The Content-Type Gitea would send for content starting with `head`. */
export function sniffContentType(head: Buffer): string {
  for (const [test, type] of MAGIC) if (typeof test === 'function' && test(head)) return type;
  const text = head.toString('utf8');
  if (/^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(text)) return 'image/svg+xml';
  if (!head.includes(0) && isUtf8(head)) return 'text/plain; charset=utf-8';
  return 'application/octet-stream';
}

/** Go's mime.FormatMediaType for `inline; filename=...` (quoted when needed, RFC 2231 for non-ASCII). */
export function contentDisposition(kind: 'inline' | 'attachment', filename: string): string {
  if (/^[\x21-\x7e]+$/.test(filename) && !/[()<>@,;:\\"/[\]?=]/.test(filename)) return `${kind}; filename=${filename}`;
  if (/^[\x20-\x7e]*$/.test(filename)) return `${kind}; filename="${filename.replace(/(["\\])/g, '\\$1')}"`;
  return `${kind}; filename*=utf-8''${encodeURIComponent(filename).replace(/['()*!]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

export interface ServeHeaders {
  contentType: string;
  headers: Record<string, string>;
}

export function blobHeaders(o: { head: Buffer; size: number; filename: string; oid: string; lastModified: Date | null; isPublic: boolean; objectType: string }): ServeHeaders {
  const contentType = sniffContentType(o.head);
  const csp = contentType.startsWith('application/pdf') ? CSP_PDF : /^(video|audio)\//.test(contentType) ? CSP_MEDIA : CSP_DEFAULT;
  const headers: Record<string, string> = {
    'x-gitea-object-type': o.objectType,
    etag: `"${o.oid}"`,
    'content-type': contentType,
    'x-content-type-options': 'nosniff',
    'content-security-policy': csp,
    'content-disposition': contentDisposition('inline', o.filename),
    'access-control-expose-headers': 'Content-Disposition',
    'cache-control': `${o.isPublic ? 'public' : 'private'}, max-age=${STATIC_CACHE_SECONDS}`,
    'content-length': String(o.size),
  };
  if (o.lastModified) headers['last-modified'] = o.lastModified.toUTCString();
  return { contentType, headers };
}

/** Whether If-None-Match names this ETag (Gitea answers 304 then). */
export function notModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((item) => item.trim().replace(/^W\//, '') === etag);
}

/**
 * The blob as a stream plus its first KiB (for sniffing), from one `git cat-file` process; the
 * process is killed when the consumer goes away.
 */
export async function openBlob(repoPath: string, oid: string): Promise<{ head: Buffer; stream: Readable; kill: () => void }> {
  const child = execa('git', ['cat-file', 'blob', oid], { cwd: repoPath, env: gitEnv(), extendEnv: false, buffer: false, reject: false });
  const out = new PassThrough();
  const stdout = child.stdout!;
  let ended = false;
  const head = await new Promise<Buffer>((resolve) => {
    const chunks: Buffer[] = [];
    let have = 0;
    const onData = (c: Buffer) => {
      chunks.push(c);
      have += c.length;
      if (have >= 1024) finish();
    };
    const finish = () => {
      stdout.off('data', onData);
      stdout.off('end', finish);
      stdout.pause();
      resolve(Buffer.concat(chunks));
    };
    stdout.on('data', onData);
    stdout.once('end', () => {
      ended = true;
      finish();
    });
  });
  if (ended) out.end(head);
  else {
    out.write(head);
    stdout.pipe(out);
    stdout.resume();
  }
  child.catch(() => undefined);
  return { head: head.subarray(0, 1024), stream: out, kill: () => child.kill() };
}
