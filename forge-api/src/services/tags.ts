/**
 * Tags of a repository (Gitea's /tags): list, get, create (lightweight, or annotated when a
 * message is given), delete; tag protections apply to the API as to a push. Changes are
 * compare-and-swap `update-ref` calls announced like a push.
 */
import type { BranchService } from './branches';
import { gitDate } from './branches';
import { ConflictError, InvalidError, NotFoundError, ValidationError } from './errors';
import { isValidTagName } from './git/ref-names';
import { deleteRef, listRefTips, readCommits, readTagObject, RefConflictError, resolveCommit, resolveRef, updateRef, writeTagObject, ZERO_OID } from './git/refs';
import type { User } from './records';
import type { RepoWithOwner } from './repos';
import type { TagProtectionService } from './tag-protection';

export interface TagJson {
  name: string;
  message: string;
  id: string;
  commit: { url: string; sha: string; created: string };
  zipball_url: string;
  tarball_url: string;
}

export interface TagCtx {
  repo: RepoWithOwner;
  doer: User | null;
}

export class TagService {
  constructor(
    private readonly branches: BranchService,
    readonly protections: TagProtectionService,
    private readonly apiBase: () => string,
    /** Whether a release is made on this tag (such a tag is deleted with its release, not alone). */
    private readonly hasRelease: (repoId: number, tag: string) => Promise<boolean> = async () => false,
  ) {}

  private repoPath(repo: RepoWithOwner): string {
    return this.branches.diskPath(repo);
  }

  /** Gitea's ToTag for one tag: its object id, the commit it leads to, message and date. */
  private async json(repo: RepoWithOwner, name: string, oid: string, commit: string): Promise<TagJson> {
    const repoPath = this.repoPath(repo);
    const tagObject = oid !== commit ? await readTagObject(repoPath, oid) : null;
    let message: string;
    let created: string;
    if (tagObject) {
      message = tagObject.message;
      created = tagObject.tagger ? gitDate(tagObject.tagger.date) : '';
    } else {
      const c = (await readCommits(repoPath, [commit])).get(commit);
      message = c?.message ?? '';
      created = c ? gitDate(c.committer.date) : '';
    }
    const html = this.branches.htmlUrl(repo);
    return {
      name,
      message,
      id: oid,
      commit: { url: `${this.apiBase()}repos/${repo.owner.name}/${repo.name}/git/commits/${oid}`, sha: commit, created },
      zipball_url: `${html}/archive/${encodeURIComponent(`${name}.zip`)}`,
      tarball_url: `${html}/archive/${encodeURIComponent(`${name}.tar.gz`)}`,
    };
  }

  async list(ctx: TagCtx, skip: number, take: number): Promise<{ data: TagJson[]; total: number }> {
    const tips = await listRefTips(this.repoPath(ctx.repo), 'tags');
    const data: TagJson[] = [];
    for (const t of tips.slice(skip, skip + take)) data.push(await this.json(ctx.repo, t.name, t.oid, t.commit));
    return { data, total: tips.length };
  }

  private async find(repo: RepoWithOwner, name: string): Promise<{ oid: string; commit: string } | null> {
    if (!name || !isValidTagName(name)) return null;
    const repoPath = this.repoPath(repo);
    const oid = await resolveRef(repoPath, `refs/tags/${name}`);
    if (!oid) return null;
    const commit = await resolveCommit(repoPath, oid);
    return commit ? { oid, commit } : null;
  }

  async get(ctx: TagCtx, name: string): Promise<TagJson> {
    const found = await this.find(ctx.repo, name);
    if (!found) throw new NotFoundError(`tag doesn't exist: ${name}`);
    return this.json(ctx.repo, name, found.oid, found.commit);
  }

  async create(ctx: TagCtx & { doer: User }, input: { tag_name?: string; message?: string; target?: string }): Promise<TagJson> {
    const name = input.tag_name ?? '';
    if (!name) throw new ValidationError('[TagName]: Required');
    const repoPath = this.repoPath(ctx.repo);
    const target = input.target || ctx.repo.defaultBranch;
    const commit = ctx.repo.isEmpty ? null : await resolveCommit(repoPath, target);
    if (!commit) throw new NotFoundError(`target not found: object does not exist [id: ${target}, rel_path: ]`);
    if (!isValidTagName(name)) throw new InvalidError(`release tag name is not valid [tag_name: ${name}]`);
    if (await resolveRef(repoPath, `refs/tags/${name}`)) throw new ConflictError(`tag already exists [name: ${name}]`);
    if (!(await this.protections.mayControl(ctx.repo.id, name, Number(ctx.doer.id)))) throw new InvalidError('user not allowed to create protected tag');
    let oid = commit;
    const message = (input.message ?? '').trim();
    if (message) {
      const who = { name: clean(ctx.doer.fullName || ctx.doer.name), email: clean(ctx.doer.email) };
      oid = await writeTagObject(repoPath, name, commit, who, message);
    }
    try {
      await updateRef(repoPath, `refs/tags/${name}`, oid, ZERO_OID, 'tag: created from API');
    } catch (err) {
      if (err instanceof RefConflictError) throw new ConflictError(`tag already exists [name: ${name}]`);
      throw err;
    }
    await this.branches.announceChange(ctx.doer, ctx.repo);
    return this.json(ctx.repo, name, oid, commit);
  }

  async delete(ctx: TagCtx & { doer: User }, name: string): Promise<void> {
    const found = await this.find(ctx.repo, name);
    if (!found) throw new NotFoundError('not found');
    if (await this.hasRelease(ctx.repo.id, name)) throw new ConflictError('a tag attached to a release cannot be deleted directly');
    if (!(await this.protections.mayControl(ctx.repo.id, name, Number(ctx.doer.id)))) throw new InvalidError('user not allowed to delete protected tag');
    try {
      await deleteRef(this.repoPath(ctx.repo), `refs/tags/${name}`, found.oid);
    } catch (err) {
      if (err instanceof RefConflictError) throw new ConflictError('the tag changed meanwhile');
      throw err;
    }
    await this.branches.announceChange(ctx.doer, ctx.repo);
  }
}

/** A name or e-mail as git's tagger line allows (no angle brackets or line breaks). */
function clean(s: string): string {
  return s.replace(/[<>\n\r\0]/g, '').trim() || 'unknown';
}
