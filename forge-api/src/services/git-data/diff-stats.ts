/**
 * What each commit of a page changed, against its first parent (the empty tree for a root
 * commit), as Gitea reports it: the changed files by status (`git log --name-status
 * --first-parent --no-renames`) and the line counts of `git diff --shortstat` (renames found,
 * binary files counting no lines). One `git diff-tree --stdin` process answers a whole page,
 * where Gitea starts two processes per commit.
 */
import execa from 'execa';
import { gitEnv } from '../git/run';
import type { GitCommit } from '../git/reader';

export interface CommitFiles {
  added: string[];
  removed: string[];
  modified: string[];
}

export interface CommitStat {
  additions: number;
  deletions: number;
}

const OID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** One line per commit: "<commit> <first parent>" (a diff against that parent) or "<commit>". */
function stdinFor(commits: readonly GitCommit[]): string {
  return commits.map((c) => (c.parents.length > 0 ? `${c.oid} ${c.parents[0]}` : c.oid)).join('\n') + '\n';
}

async function diffTree(repoPath: string, args: string[], commits: readonly GitCommit[]): Promise<string[]> {
  if (commits.length === 0) return [];
  const r = await execa('git', ['diff-tree', '--stdin', '-z', '-r', '--root', '--always', ...args], {
    cwd: repoPath,
    input: stdinFor(commits),
    env: gitEnv(),
    extendEnv: false,
    reject: false,
    stripFinalNewline: false,
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.exitCode !== 0) throw new Error(`git diff-tree failed: ${r.stderr}`);
  return String(r.stdout).split('\0');
}

export async function commitFiles(repoPath: string, commits: readonly GitCommit[]): Promise<Map<string, CommitFiles>> {
  const tokens = await diffTree(repoPath, ['--no-renames', '--name-status'], commits);
  const out = new Map<string, CommitFiles>();
  let current: CommitFiles | null = null;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i].replace(/^\n/, '');
    if (!t) continue;
    if (OID.test(t)) {
      current = { added: [], removed: [], modified: [] };
      out.set(t, current);
      continue;
    }
    const file = tokens[++i];
    if (!current || file === undefined) continue;
    if (t[0] === 'A') current.added.push(file);
    else if (t[0] === 'D') current.removed.push(file);
    else if (t[0] === 'M') current.modified.push(file);
  }
  return out;
}

export async function commitStats(repoPath: string, commits: readonly GitCommit[]): Promise<Map<string, CommitStat>> {
  const tokens = await diffTree(repoPath, ['-M', '--numstat'], commits);
  const out = new Map<string, CommitStat>();
  let current: CommitStat | null = null;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i].replace(/^\n/, '');
    if (!t) continue;
    if (!t.includes('\t')) {
      if (OID.test(t)) {
        current = { additions: 0, deletions: 0 };
        out.set(t, current);
      }
      continue;
    }
    const [add, del, name] = t.split('\t');
    if (name === '') i += 2; // a rename: source and destination follow as their own tokens
    if (!current) continue;
    current.additions += Number(add) || 0; // "-" for binary files
    current.deletions += Number(del) || 0;
  }
  return out;
}
