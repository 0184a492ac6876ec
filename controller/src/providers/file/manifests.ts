import { promises as fs } from 'fs';
import * as path from 'path';
import * as jsYaml from 'js-yaml';
import { freezeDocument } from '../../resources/readonly';

/** One YAML document of a manifest file, with where it came from (for messages). */
export interface SourceDoc {
  file: string; // path relative to the manifests folder
  line: number; // 1-based line where the document starts
  doc: unknown;
}

export type FileParse =
  | { ok: true; file: string; docs: SourceDoc[] }
  | { ok: false; file: string; errors: { line: number; column: number; message: string }[] };

const MANIFEST_EXTENSIONS = ['.yaml', '.yml'];

/** A name the scan reads: a manifest extension, not hidden. */
export function isManifestName(name: string): boolean {
  return !name.startsWith('.') && MANIFEST_EXTENSIONS.some((ext) => name.endsWith(ext));
}

/** Manifest files directly in `dir` and in its subfolders (hidden entries skipped), sorted. */
export async function listManifestFiles(dir: string): Promise<string[]> {
  return (await listManifestTree(dir)).files;
}

/** Manifest files and the subfolders holding them (relative paths; '' is `dir` itself). */
export async function listManifestTree(dir: string): Promise<{ files: string[]; dirs: string[] }> {
  const out: string[] = [];
  const dirs: string[] = [''];
  const walk = async (rel: string): Promise<void> => {
    let entries;
    try {
      entries = await fs.readdir(path.join(dir, rel), { withFileTypes: true });
    } catch (err) {
      // A folder removed while we walk it is simply gone.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const child = rel ? path.join(rel, entry.name) : entry.name;
      if (entry.isDirectory()) {
        dirs.push(child);
        await walk(child);
      }
      else if (entry.isFile() && MANIFEST_EXTENSIONS.includes(path.extname(entry.name))) out.push(child);
    }
  };
  await walk('');
  return { files: out.sort(), dirs };
}

/**
 * Where each document of a YAML stream starts: a document marker (`---`) at column 0 always
 * starts a new document (the YAML spec forbids it inside any scalar), and the text before the
 * first marker is a document too.
 */
export function splitDocuments(text: string): { line: number; text: string }[] {
  // Searched for rather than split into lines: a scan of a 1,000-document file after a
  // one-line edit spent more time splitting and joining its 40,000 lines than on anything else.
  const chunks: { line: number; text: string }[] = [];
  let start = 0;
  let line = 1;
  for (let nl = text.indexOf('\n---'); nl >= 0; nl = text.indexOf('\n---', nl + 1)) {
    const after = nl + 4 < text.length ? text[nl + 4] : '';
    if (after !== '' && !/\s/.test(after)) continue; // "---x": not a marker
    chunks.push({ line, text: text.slice(start, nl) });
    for (let i = text.indexOf('\n', start); i >= 0 && i <= nl; i = text.indexOf('\n', i + 1)) line++;
    start = nl + 1;
  }
  chunks.push({ line, text: text.slice(start) });
  return chunks;
}

/** A document of a file as last parsed: its text (marker line included) and what it parsed to. */
interface KeptChunk {
  text: string;
  /** Absent: the text did not parse (its error is reported again). */
  known?: { value: unknown; offset: number };
}

/** The last parse of a file, chunk by chunk in file order: reused by the next parse of it. */
export type ChunkMemo = KeptChunk[];

/**
 * Each new chunk's kept parse: a document whose text is unchanged is the same object. An edited
 * file keeps most documents where they were, so the chunks are matched in order from the start
 * and from the end, comparing texts (`===`: a memory compare); only the chunks between (the
 * edit) are looked up by text among the old chunks between. Looking every chunk up in a map by
 * its text hashed the whole file (1,000 routes: 1.2 MB, ~5 ms) on every scan.
 */
function keptParses(chunks: { text: string }[], memo: ChunkMemo | undefined): (KeptChunk['known'] | undefined)[] {
  const out: (KeptChunk['known'] | undefined)[] = new Array(chunks.length);
  if (!memo || memo.length === 0) return out;
  let head = 0;
  while (head < chunks.length && head < memo.length && chunks[head].text === memo[head].text) {
    out[head] = memo[head].known;
    head++;
  }
  let tail = 0;
  while (tail < chunks.length - head && tail < memo.length - head && chunks[chunks.length - 1 - tail].text === memo[memo.length - 1 - tail].text) {
    out[chunks.length - 1 - tail] = memo[memo.length - 1 - tail].known;
    tail++;
  }
  if (head + tail < chunks.length && head + tail < memo.length) {
    const byText = new Map<string, KeptChunk['known']>();
    for (let i = head; i < memo.length - tail; i++) if (memo[i].known) byText.set(memo[i].text, memo[i].known);
    for (let i = head; i < chunks.length - tail; i++) out[i] = byText.get(chunks[i].text);
  }
  return out;
}

/**
 * The document rebuilt by JSON.parse when JSON writes it unchanged. js-yaml's objects and
 * strings are built up piece by piece (properties added one at a time, scalars as joined and
 * sliced strings) and take ~5.6 KB for an HTTPRoute of three rules where JSON.parse's flat
 * ones take ~2 KB; the provider keeps every document for as long as its text is unchanged
 * (5,000 routes: 28 MB against 10 MB). Left as parsed: a cycle through a YAML alias, which
 * JSON cannot write, and a non-finite number (.nan, .inf), which JSON would turn into null.
 */
function compactDocument(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  let finite = true;
  let text: string;
  try {
    text = JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === 'number' && !Number.isFinite(v)) finite = false;
      return v;
    });
  } catch {
    return value;
  }
  return finite ? JSON.parse(text) : value;
}

/**
 * Parses one multi-document YAML text (YAML 1.2 core schema: timestamps stay strings). A file
 * with any syntax error yields no documents at all: applying half of a file the user is in
 * the middle of editing would be surprising.
 *
 * js-yaml rather than the `yaml` package: it parses manifests about 10x faster (measured on
 * 100 HTTPRoutes: 12-33 ms against 230-590 ms), which matters when a change must be served
 * within 150 ms. Each document is parsed on its own so its start line is known.
 *
 * Documents come out frozen (resources/readonly.ts). With `memo` (the previous parse's of the
 * same file), a document whose text did not change is the same object as last time and is not
 * parsed again: editing one route of a file of 100 parses one document, and the pipeline
 * remembers everything it derived from the other 99.
 */
export function parseManifestText(file: string, text: string, memo?: ChunkMemo): FileParse & { memo: ChunkMemo } {
  const errors: { line: number; column: number; message: string }[] = [];
  const docs: SourceDoc[] = [];
  const chunks = splitDocuments(text);
  const kept = keptParses(chunks, memo);
  const next: ChunkMemo = new Array(chunks.length);
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i];
    let known = kept[i];
    if (!known) {
      let value: unknown;
      try {
        value = jsYaml.load(chunk.text, { filename: file, schema: jsYaml.CORE_SCHEMA, json: false });
      } catch (err) {
        const e = err as { mark?: { line: number; column: number }; reason?: string; message: string };
        errors.push({
          line: chunk.line + (e.mark?.line ?? 0),
          column: (e.mark?.column ?? 0) + 1,
          message: e.reason ?? e.message.split('\n')[0],
        });
        next[i] = { text: chunk.text };
        continue;
      }
      // The document's first content line, for messages (skip the marker, comments, blanks).
      const lines = chunk.text.split('\n');
      let offset = 0;
      while (offset < lines.length - 1 && /^(---\s*$|\s*(#.*)?$)/.test(lines[offset])) offset++;
      known = { value: freezeDocument(compactDocument(value)), offset };
    }
    next[i] = { text: chunk.text, known };
    if (known.value === null || known.value === undefined) continue; // an empty document (e.g. a trailing ---)
    docs.push({ file, line: chunk.line + known.offset, doc: known.value });
  }
  return errors.length ? { ok: false, file, errors, memo: next } : { ok: true, file, docs, memo: next };
}

export async function readManifestFile(dir: string, file: string): Promise<FileParse | undefined> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, file), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // deleted meanwhile
    throw err;
  }
  return parseManifestText(file, text);
}
