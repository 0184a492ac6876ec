/**
 * The rules a push must pass before git accepts it (Gitea's pre-receive checks): the default
 * branch is never deleted; a protected branch refuses deletion, force pushes unless allowed,
 * pushes by anyone outside its allow-lists and changes to protected files; a protected tag may
 * be created, moved or deleted only by its allow-listed users and teams. The answer is the
 * message the git client shows, word for word as Gitea prints it, or null to accept.
 *
 * An AGit push (refs/for/<base>[/<topic>]) opens or updates a pull request instead of writing a
 * ref, so it asks only that the pusher may open pull requests; every other ref needs write
 * access to the code (a reader may push, since AGit pushes need only read access).
 */
import type { BranchProtectionService, RefUpdate } from './branch-protection';
import { changedFiles } from './branches';
import { runGit } from './git/run';
import type { User } from './records';
import type { RepoWithOwner } from './repos';
import type { TagProtectionService } from './tag-protection';
import { AccessMode } from './convert/common';
import type { PermissionService } from './permissions';
import { PROC_RECEIVE_REFS } from './git/transport';

/** One line git gives a pre-receive hook: `<old> <new> <ref>`. */
export interface PushedUpdate {
  oldOid: string;
  newOid: string;
  ref: string;
}

const ZERO = /^0+$/;
const AGIT_PREFIX = `${PROC_RECEIVE_REFS}/`;

/** Gitea's words for a reader's push to a ref other than refs/for/*. */
export const WRITE_DENIED = 'User permission denied for writing.';

export class PushRules {
  constructor(
    private readonly branchProtections: BranchProtectionService,
    private readonly tagProtections: TagProtectionService,
    private readonly permissions: PermissionService,
  ) {}

  /**
   * `env` is the hook's object environment (git's quarantine directory of the incoming pack),
   * so the new commits can be read before git moves them into the repository. `deployKey`:
   * the push was made with a deploy key (`pusher` is then the repository's owner, as in Gitea).
   */
  async check(
    repo: RepoWithOwner,
    repoPath: string,
    pusher: User | null,
    pushed: PushedUpdate[],
    env: Record<string, string> = {},
    opts: { deployKey?: boolean; canWrite?: boolean } = {},
  ): Promise<string | null> {
    const updates: RefUpdate[] = [];
    for (const p of pushed) {
      if (p.ref.startsWith(AGIT_PREFIX)) {
        const refusal = await this.agitRefusal(repo, pusher);
        if (refusal) return refusal;
        continue;
      }
      if (opts.canWrite === false) return WRITE_DENIED;
      let force = false;
      if (p.ref.startsWith('refs/heads/') && !ZERO.test(p.oldOid) && !ZERO.test(p.newOid)) {
        const out = await runGit(['rev-list', '--max-count=1', p.oldOid, `^${p.newOid}`, '--'], { cwd: repoPath, env }).catch(() => '');
        force = out.trim() !== '';
      }
      updates.push({ ref: p.ref, oldOid: p.oldOid, newOid: p.newOid, force });
    }
    for (const u of updates) {
      if (!u.ref.startsWith('refs/tags/')) continue;
      const tag = u.ref.slice('refs/tags/'.length);
      if (!(await this.tagProtections.mayControl(repo.id, tag, pusher ? Number(pusher.id) : null))) return `Tag ${tag} is protected`;
    }
    if (!updates.length) return null;
    return this.branchProtections.checkBranchUpdates(repo, pusher, updates, (u) => changedFilesIn(repoPath, u.oldOid, u.newOid, env), opts);
  }

  /** Gitea's pre-receive for refs/for/*: the pusher may open pull requests on a repository with code. */
  private async agitRefusal(repo: RepoWithOwner, pusher: User | null): Promise<string | null> {
    const mayOpen = repo.hasPullRequests && (await this.permissions.repoAccessMode(pusher, repo, 'repo.pulls')) >= AccessMode.Read;
    if (!mayOpen) return 'User permission denied for creating pull-request.';
    if (repo.isEmpty) return "Can't create pull request for an empty repository.";
    return null;
  }
}

async function changedFilesIn(repoPath: string, oldOid: string, newOid: string, env: Record<string, string>): Promise<string[]> {
  if (!Object.keys(env).length) return changedFiles(repoPath, oldOid, newOid);
  if (ZERO.test(newOid)) return [];
  const args = ZERO.test(oldOid) ? ['diff-tree', '-r', '--name-only', '--no-commit-id', '-z', '--root', newOid] : ['diff', '--name-only', '-z', oldOid, newOid];
  const out = await runGit(args, { cwd: repoPath, env }).catch(() => '');
  return out.split('\0').filter(Boolean);
}
