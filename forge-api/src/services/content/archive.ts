/**
 * Repository archives (GET /archive/{ref}.zip|.tar.gz|.bundle): `git archive` (or `git bundle`)
 * piped straight to the response, never buffered or cached on disk, so an archive of any size
 * costs a pipe's worth of memory. Names and headers as Gitea's: `<repo>-<ref>.<ext>`, the
 * folder `<repo>/` inside, a Link rel="immutable" to the archive by commit id.
 *
 * `git bundle` packs objects as a clone's upload-pack does, and `git archive` streams them for as
 * long as the download lasts: both start once no repack of the repository runs, and hold the next
 * one back until they end (git/housekeeping.ts), when housekeeping is given.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import execa from 'execa';
import { MalformedError, NotFoundError } from '../errors';
import { gitEnv, runGit } from '../git/run';
import type { RepoWithOwner } from '../convert/repository';
import type { RepoHousekeeping } from '../git/housekeeping';
import type { GitReader } from '../git/reader';
import { cleanTreePath } from '../git/tree-path';
import { resolveRef, treeEntry } from './git-read';

export type ArchiveFormat = 'zip' | 'tar.gz' | 'bundle';

const FORMATS: ArchiveFormat[] = ['zip', 'tar.gz', 'bundle'];

/** `main.zip` -> { ref: 'main', format: 'zip' }; an unknown suffix is Gitea's 400. */
export function parseArchiveName(name: string): { ref: string; format: ArchiveFormat } {
  for (const format of FORMATS) {
    if (name.endsWith(`.${format}`) && name.length > format.length + 1) return { ref: name.slice(0, -(format.length + 1)), format };
  }
  throw new MalformedError(`unknown format: ${name}`);
}

export interface ArchiveStream {
  stream: Readable;
  filename: string;
  commit: string;
  format: ArchiveFormat;
}

/** Short ids are accepted here as Gitea's archiver does (7 or more hex digits). */
async function resolveArchiveRef(reader: GitReader, repoPath: string, ref: string): Promise<string | null> {
  const named = await resolveRef(reader, ref);
  if (named) return named.commit;
  if (/^[0-9a-f]{7,39}$/.test(ref)) {
    const out = await runGit(['rev-parse', '--verify', '-q', `${ref}^{commit}`], { cwd: repoPath }).catch(() => '');
    return out.trim() || null;
  }
  return null;
}

/**
 * The archive `name` (`<ref>.<format>`), limited to `paths` (Gitea's `path` query) when given:
 * paths are tree paths (tree-path.ts rules, 400 otherwise) that must exist in the commit (404),
 * checked before the first byte is sent.
 */
export async function openArchive(repo: RepoWithOwner, reader: GitReader, name: string, paths: string[] = [], housekeeping?: RepoHousekeeping): Promise<ArchiveStream> {
  const repoPath = reader.repoPath;
  const { ref, format } = parseArchiveName(name);
  if (format === 'bundle' && paths.length > 0) throw new MalformedError('cannot specify paths when requesting a bundle');
  let cleaned: string[];
  try {
    cleaned = paths.map((p) => cleanTreePath(p)).filter(Boolean);
  } catch (err) {
    throw new MalformedError((err as Error).message);
  }
  const commit = repo.isEmpty ? null : await resolveArchiveRef(reader, repoPath, ref);
  if (!commit) throw new NotFoundError(`unrecognized repository reference: ${ref}`);
  for (const p of cleaned) if (!(await treeEntry(reader, commit, p))) throw new NotFoundError(`object does not exist [id: , rel_path: ${p}]`);
  const filename = `${repo.name}-${ref.replace(/\//g, '-')}.${format}`;
  if (format === 'bundle') return { stream: await bundleStream(repoPath, commit, housekeeping), filename, commit, format };
  const reads = housekeeping ? await housekeeping.startRead(repoPath) : null;
  const child = execa('git', ['archive', `--format=${format}`, `--prefix=${repo.name}/`, commit, '--', ...cleaned], { cwd: repoPath, env: gitEnv(), extendEnv: false, buffer: false, reject: false });
  reads?.(child);
  child.catch(() => undefined);
  const stream = child.stdout!;
  stream.once('close', () => child.kill());
  return { stream, filename, commit, format };
}

/**
 * A bundle whose one ref, refs/heads/bundle, is the commit (Gitea's layout). git bundle needs a
 * ref to name, so a throwaway repository borrowing our objects (alternates) holds it: the
 * served repository itself never gets an extra ref.
 */
async function bundleStream(repoPath: string, commit: string, housekeeping?: RepoHousekeeping): Promise<Readable> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'forge-bundle-'));
  const cleanup = () => fs.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  try {
    await runGit(['init', '--bare', '--quiet', '--template=', tmp]);
    await fs.writeFile(path.join(tmp, 'objects', 'info', 'alternates'), `${path.resolve(repoPath, 'objects')}\n`);
    await runGit(['update-ref', 'refs/heads/bundle', commit], { cwd: tmp });
    await runGit(['symbolic-ref', 'HEAD', 'refs/heads/bundle'], { cwd: tmp });
  } catch (err) {
    await cleanup();
    throw err;
  }
  const reads = housekeeping ? await housekeeping.startRead(repoPath) : null;
  const child = execa('git', ['bundle', 'create', '-', 'refs/heads/bundle', 'HEAD'], { cwd: tmp, env: gitEnv(), extendEnv: false, buffer: false, reject: false });
  reads?.(child);
  child.finally(cleanup).catch(() => undefined);
  const stream = child.stdout!;
  stream.once('close', () => child.kill());
  return stream;
}
