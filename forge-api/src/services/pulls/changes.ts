/**
 * What a pull request changes, read from the base repository where refs/pull/{index}/head
 * keeps its head: the commits (base branch..head, or merge base..head once merged), the
 * changed files with their line counts, and the diff or patch text. Gitea's
 * GetPullRequestCommits / GetPullRequestFiles / DownloadPullDiffOrPatch.
 */
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { RepoWithOwner } from '../convert';
import { NotFoundError } from '../errors';
import type { GitDataService } from '../git-data';
import type { CommitJsonOptions } from '../git-data/commits';
import { escapeTreePath } from '../git/tree-path';
import { logCommitIds, type GitCommit } from '../git/reader';
import { resolveRef } from '../git/refs';
import { gitEnv, runGit } from '../git/run';
import type { PullRequest } from '../../../generated/prisma/client';
import { pullHeadRef } from './git';

export interface ChangedFile {
  filename: string;
  previous_filename?: string;
  status: string;
  additions: number;
  deletions: number;
  changes: number;
  html_url: string;
  contents_url: string;
  raw_url: string;
}

export class PullChangeService {
  constructor(
    private readonly gitData: GitDataService,
    private readonly urls: { html(repo: RepoWithOwner): string; api(repo: RepoWithOwner): string },
  ) {}

  /** The head commit and where the comparison starts (the base branch, or the merge base once merged). */
  private async range(repo: RepoWithOwner, pr: PullRequest): Promise<{ path: string; head: string; base: string }> {
    const path = this.gitData.path(repo);
    const head = await resolveRef(path, pullHeadRef(pr.index));
    const base = pr.hasMerged ? pr.mergeBase : await resolveRef(path, `refs/heads/${pr.baseBranch}`);
    if (!head || !base) throw new NotFoundError('invalid base branch or revision');
    return { path, head, base };
  }

  /** One page of the commits the head adds to the base, newest first, and how many there are. */
  async commits(repo: RepoWithOwner, pr: PullRequest, skip: number, take: number, opts: CommitJsonOptions) {
    const { path, head, base } = await this.range(repo, pr);
    const ids = await logCommitIds(path, { revs: [head], not: [base] });
    const page = ids.slice(skip, skip + take);
    const commits = (await this.gitData.reader(repo).readCommits(page)).filter((c): c is GitCommit => c !== null);
    return { total: ids.length, data: await this.gitData.commits.toJson(repo, path, commits, { ...opts, stat: true }) };
  }

  /**
   * One page of the changed files between the merge base and the head, in git's order, with
   * Gitea's status names (added, deleted, renamed with previous_filename, copied, changed, and
   * unchanged for a change without changed lines).
   */
  async files(repo: RepoWithOwner, pr: PullRequest, skip: number, take: number): Promise<{ total: number; data: ChangedFile[] }> {
    const { path, head, base } = await this.range(repo, pr);
    const start = pr.hasMerged ? base : (await runGit(['merge-base', base, head], { cwd: path }).catch(() => '')).trim() || base;
    const [names, nums] = await Promise.all([
      runGit(['diff', '-z', '--name-status', '-M', start, head, '--'], { cwd: path }),
      runGit(['diff', '-z', '--numstat', '-M', start, head, '--'], { cwd: path }),
    ]);
    const lines = parseNumstat(nums);
    const files = parseNameStatus(names);
    const html = this.urls.html(repo);
    const api = this.urls.api(repo);
    const data = files.slice(skip, skip + take).map((f, i) => {
      const n = lines[skip + i] ?? { additions: 0, deletions: 0 };
      let status = f.status === 'A' ? 'added' : f.status === 'D' ? 'deleted' : f.status === 'R' ? 'renamed' : f.status === 'C' ? 'copied' : 'changed';
      if (status === 'changed' && n.additions === 0 && n.deletions === 0) status = 'unchanged';
      const escaped = escapeTreePath(f.path);
      return {
        filename: f.path,
        ...(status === 'renamed' ? { previous_filename: f.from } : {}),
        status,
        additions: n.additions,
        deletions: n.deletions,
        changes: n.additions + n.deletions,
        html_url: `${html}/src/commit/${head}/${escaped}`,
        contents_url: `${api}/contents/${escaped}?ref=${head}`,
        raw_url: `${html}/raw/commit/${head}/${escaped}`,
      };
    });
    return { total: files.length, data };
  }

  /** `.diff` (`git diff -p merge-base...head`, with --binary on request) or `.patch` (format-patch). */
  async raw(repo: RepoWithOwner, pr: PullRequest, type: 'diff' | 'patch', binary: boolean): Promise<Readable> {
    const path = this.gitData.path(repo);
    const head = await resolveRef(path, pullHeadRef(pr.index));
    if (!head) throw new NotFoundError('the head of the pull request is gone');
    const range = `${pr.mergeBase || head}...${head}`;
    const args = type === 'patch' ? ['format-patch', '--binary', '--stdout', range, '--'] : binary ? ['diff', '-p', '--binary', '--histogram', range, '--'] : ['diff', '-p', range, '--'];
    const proc = spawn('git', args, { cwd: path, env: gitEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
    proc.on('error', () => proc.stdout.destroy());
    return proc.stdout;
  }
}

/** `git diff -z --name-status -M`: status letter (score dropped), then one path or, for R/C, two. */
export function parseNameStatus(out: string): { status: string; path: string; from?: string }[] {
  const f = out.split('\0');
  const files: { status: string; path: string; from?: string }[] = [];
  for (let i = 0; i < f.length && f[i]; ) {
    const status = f[i][0];
    if (status === 'R' || status === 'C') {
      files.push({ status, from: f[i + 1], path: f[i + 2] });
      i += 3;
    } else {
      files.push({ status, path: f[i + 1] });
      i += 2;
    }
  }
  return files;
}

/** `git diff -z --numstat -M`: "add\tdel\tpath\0" or, for a rename, "add\tdel\t\0from\0to\0"; binary is "-". */
export function parseNumstat(out: string): { additions: number; deletions: number }[] {
  const f = out.split('\0');
  const rows: { additions: number; deletions: number }[] = [];
  for (let i = 0; i < f.length && f[i]; ) {
    const [a, d, p] = f[i].split('\t');
    rows.push({ additions: Number(a) || 0, deletions: Number(d) || 0 });
    i += p === '' ? 3 : 1;
  }
  return rows;
}
