import { promises as fs } from 'fs';
import * as path from 'path';
import { LineCounter, parseAllDocuments } from 'yaml';

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
 * Parses one multi-document YAML text. A file with any syntax error yields no documents at
 * all: applying half of a file the user is in the middle of editing would be surprising.
 */
export function parseManifestText(file: string, text: string): FileParse {
  const lineCounter = new LineCounter();
  const documents = parseAllDocuments(text, { lineCounter, prettyErrors: true });
  const errors: { line: number; column: number; message: string }[] = [];
  const docs: SourceDoc[] = [];
  // parseAllDocuments returns an EmptyStream (an array with extra fields) for an empty text.
  for (const document of Array.from(documents)) {
    for (const e of document.errors) {
      const pos = e.linePos?.[0] ?? lineCounter.linePos(e.pos[0]);
      errors.push({ line: pos.line, column: pos.col, message: e.message.split('\n')[0] });
    }
    if (errors.length) continue;
    const value: unknown = document.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) continue; // an empty document (e.g. a trailing ---)
    const start = document.contents?.range?.[0] ?? document.range[0];
    docs.push({ file, line: lineCounter.linePos(start).line, doc: value });
  }
  return errors.length ? { ok: false, file, errors } : { ok: true, file, docs };
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
