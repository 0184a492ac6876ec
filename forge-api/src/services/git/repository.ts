import { promises as fs } from 'fs';
import path from 'path';
import { runGit } from './run';
import { repoDiskLock } from './disk-lock';
import { commitContent, treeContent, writeBranchRef, writeObject } from './objects';
import { gitignoreText, licenseText, readmeText } from '../templates';

export interface GitSignature {
  name: string;
  email: string;
}

export interface AutoInitOptions {
  /** README.md from a readme template; `template` defaults to Gitea's only one, "Default". */
  readme?: { name: string; description?: string; template?: string; cloneUrlHttps?: string; cloneUrlSsh?: string; owner?: string };
  /** License template name (e.g. "MIT"); rendered into LICENSE with owner, email, repo and year. */
  license?: string;
  /** .gitignore template names, concatenated in order as Gitea does. */
  gitignores?: string[];
  /** Author and committer of the initial commit (the creating user). */
  author: GitSignature;
  /** Owner and repository names for the license text; default: taken from the repository path. */
  owner?: string;
  repoName?: string;
  /** Commit time; default now. */
  date?: Date;
}

export interface InitRepositoryOptions {
  defaultBranch: string;
  autoInit?: AutoInitOptions;
}

export class RepositoryExistsError extends Error {
  constructor(readonly repoPath: string) {
    super(`repository files already exist: ${repoPath}`);
    this.name = 'RepositoryExistsError';
  }
}

export class UnknownTemplateError extends Error {
  constructor(readonly kind: 'readme' | 'license' | 'gitignore', readonly template: string) {
    super(`unknown ${kind} template: ${template}`);
    this.name = 'UnknownTemplateError';
  }
}

/**
 * Settings written into every repository's config. http.receivepack lets `git http-backend`
 * accept pushes from users we authenticated ourselves (it would otherwise require REMOTE_USER);
 * allowFilter lets partial clones work; the rest keep pushes from rewriting history by accident
 * in ways Gitea also forbids by default (deleting the current branch).
 */
export const REPOSITORY_CONFIG = `[http]
\treceivepack = true
\tuploadpack = true
[uploadpack]
\tallowFilter = true
\tallowAnySHA1InWant = true
[receive]
\tdenyDeleteCurrent = true
\tadvertisePushOptions = true
[core]
\tlogAllRefUpdates = true
`;

/** `<reposDir>/<owner lowercase>/<repo lowercase>.git`, as Gitea lays repositories out. */
export function repositoryPath(reposDir: string, owner: string, name: string): string {
  return path.join(reposDir, owner.toLowerCase(), `${name.toLowerCase()}.git`);
}

export function isValidBranchName(name: string): boolean {
  // The rules of `git check-ref-format --branch`, checked without starting a process.
  if (!name || name.length > 255 || name === '@' || name.startsWith('-') || name.startsWith('/') || name.endsWith('/')) return false;
  if (name.endsWith('.') || name.endsWith('.lock') || name.includes('..') || name.includes('//') || name.includes('@{')) return false;
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name)) return false;
  return name.split('/').every((part) => part.length > 0 && !part.startsWith('.') && !part.endsWith('.lock'));
}

/** Whether a repository folder (or anything) is at this path. */
export async function repositoryExists(p: string): Promise<boolean> {
  return exists(p);
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.stat(p);
    return true;
  } catch {
    return false;
  }
}

interface InitFile {
  name: string;
  content: string;
}

function initialFiles(repoPath: string, auto: AutoInitOptions): InitFile[] {
  const repoName = auto.repoName ?? auto.readme?.name ?? path.basename(repoPath).replace(/\.git$/, '');
  const owner = auto.owner ?? auto.readme?.owner ?? path.basename(path.dirname(repoPath));
  const files: InitFile[] = [];

  const readmeTemplate = auto.readme?.template ?? 'Default';
  const readme = readmeText(readmeTemplate, {
    Name: auto.readme?.name ?? repoName,
    Description: auto.readme?.description ?? '',
    OwnerName: owner,
    'CloneURL.HTTPS': auto.readme?.cloneUrlHttps ?? '',
    'CloneURL.SSH': auto.readme?.cloneUrlSsh ?? '',
  });
  if (readme === null) throw new UnknownTemplateError('readme', readmeTemplate);
  files.push({ name: 'README.md', content: readme });

  const gitignores = (auto.gitignores ?? []).map((g) => g.trim()).filter(Boolean);
  if (gitignores.length > 0) {
    let text = '';
    for (const name of gitignores) {
      const body = gitignoreText(name);
      if (body === null) throw new UnknownTemplateError('gitignore', name);
      text += `# ---> ${name}\n${body}\n`;
    }
    files.push({ name: '.gitignore', content: text });
  }

  if (auto.license) {
    const body = licenseText(auto.license, {
      owner,
      email: auto.author.email,
      repo: repoName,
      year: String((auto.date ?? new Date()).getUTCFullYear()),
    });
    if (body === null) throw new UnknownTemplateError('license', auto.license);
    files.push({ name: 'LICENSE', content: body });
  }
  return files;
}

async function writeInitialCommit(repoPath: string, branch: string, author: GitSignature, when: Date, files: InitFile[]): Promise<void> {
  const entries = await Promise.all(
    files.map(async (f) => ({ name: f.name, blobId: await writeObject(repoPath, 'blob', Buffer.from(f.content, 'utf8')) })),
  );
  const treeId = await writeObject(repoPath, 'tree', treeContent(entries));
  const who = { name: author.name, email: author.email, when };
  const commitId = await writeObject(repoPath, 'commit', commitContent(treeId, who, who, 'Initial commit\n'));
  await writeBranchRef(repoPath, branch, commitId);
}

/**
 * Creates a bare repository whose HEAD names `defaultBranch`. With autoInit it also writes one
 * commit "Initial commit" (README.md, optional LICENSE and .gitignore) authored by the creating
 * user, as objects written directly (objects.ts): creation costs one `git init`, where Gitea
 * clones into a temporary work tree, commits and pushes (bench:git measures both).
 * Template names are checked before anything is written to disk. No template directory is
 * copied (no sample hooks): the repository holds only what git needs.
 */
export async function initRepository(repoPath: string, options: InitRepositoryOptions): Promise<void> {
  const branch = options.defaultBranch || 'main';
  if (!isValidBranchName(branch)) throw new Error(`invalid branch name: ${branch}`);
  const files = options.autoInit ? initialFiles(repoPath, options.autoInit) : null;
  if (await exists(repoPath)) throw new RepositoryExistsError(repoPath);

  await fs.mkdir(path.dirname(repoPath), { recursive: true });
  try {
    await runGit(['init', '--bare', '--quiet', '--template=', `--initial-branch=${branch}`, repoPath]);
    await fs.appendFile(path.join(repoPath, 'config'), REPOSITORY_CONFIG);
    if (options.autoInit && files) {
      await writeInitialCommit(repoPath, branch, options.autoInit.author, options.autoInit.date ?? new Date(), files);
    }
  } catch (err) {
    await fs.rm(repoPath, { recursive: true, force: true });
    throw err;
  }
}

/** Deletes a repository folder, after any housekeeping running in it (disk-lock.ts). */
export async function deleteRepository(repoPath: string): Promise<void> {
  await repoDiskLock.withMove([repoPath], () => fs.rm(repoPath, { recursive: true, force: true }));
}

/** Moves a repository folder (rename of the repository or of its owner). */
export async function renameRepository(from: string, to: string): Promise<void> {
  if (path.resolve(from) === path.resolve(to)) return;
  // Housekeeping inside either folder ends first (disk-lock.ts).
  await repoDiskLock.withMove([from, to], () => moveFolder(from, to));
}

async function moveFolder(from: string, to: string): Promise<void> {
  if (await exists(to)) throw new RepositoryExistsError(to);
  await fs.mkdir(path.dirname(to), { recursive: true });
  try {
    await fs.rename(from, to);
  } catch (err) {
    // Another creation of the same name won between the check above and the rename.
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST') throw new RepositoryExistsError(to);
    throw err;
  }
}

export interface RepositoryDir {
  owner: string;
  name: string;
  /** "owner/name" as Gitea lists unadopted repositories. */
  fullName: string;
  path: string;
}

/** Every `<reposDir>/<owner>/<name>.git` folder, sorted by owner then name. */
export async function listRepositoryDirs(reposDir: string): Promise<RepositoryDir[]> {
  const out: RepositoryDir[] = [];
  let owners: import('fs').Dirent[];
  try {
    owners = await fs.readdir(reposDir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  for (const owner of owners) {
    // Dot folders are the forge's own (repository creation in progress), never an owner.
    if (!owner.isDirectory() || owner.name.startsWith('.')) continue;
    const entries = await fs.readdir(path.join(reposDir, owner.name), { withFileTypes: true });
    for (const entry of entries) {
      if (!entry.isDirectory() || !entry.name.endsWith('.git') || entry.name === '.git') continue;
      const name = entry.name.slice(0, -'.git'.length);
      out.push({ owner: owner.name, name, fullName: `${owner.name}/${name}`, path: path.join(reposDir, owner.name, entry.name) });
    }
  }
  return out.sort((a, b) => (a.owner === b.owner ? a.name.localeCompare(b.name) : a.owner.localeCompare(b.owner)));
}
