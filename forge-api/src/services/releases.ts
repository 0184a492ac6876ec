/**
 * Releases and their assets, as Gitea's release service: a published release has a tag (created
 * at `target_commitish` when missing, announced like a pushed tag), a draft has none until it
 * is published; deleting a release keeps its tag; a tag deleted by a push turns its release
 * back into a draft. Drafts are seen only by writers of the release unit. Assets live in the
 * attachment storage (services/issues/attachments.ts) with a releaseId. Repository.numReleases
 * (release_counter) counts the published releases.
 */
import type { Readable } from 'node:stream';
import type { Attachment, Release } from '../../generated/prisma/client';
import type { Prisma } from './database';
import { AlreadyExistsError, ConflictError, InvalidError, MalformedError, NotFoundError } from './errors';
import { countCommits, type GitReaderPool } from './git/reader';
import { NULL_OID, RefChangedError, updateRef } from './git/commit-writer';
import { isValidTagName } from './git/ref-names';
import { ZERO_SHA, type PushedRef } from './git/push';
import { runGit } from './git/run';
import type { AttachmentService } from './issues/attachments';
import type { Notifier, NotifyListener } from './notify';
import type { User } from './records';
import type { RepoService, RepoWithOwner } from './repos';
import { ghostUser, type Converter } from './convert';
import { toAttachment } from './convert/attachment';
import { toRelease } from './convert/release';

export interface ReleaseFilter {
  /** Drafts are listed only when the caller may see them. */
  includeDrafts: boolean;
  draft?: boolean;
  prerelease?: boolean;
  skip: number;
  take: number;
}

export interface CreateReleaseInput {
  tag_name: string;
  tag_message?: string;
  target_commitish?: string;
  name?: string;
  body?: string;
  draft?: boolean;
  prerelease?: boolean;
}

export interface EditReleaseInput {
  tag_name?: string;
  target_commitish?: string;
  name?: string;
  body?: string;
  draft?: boolean;
  prerelease?: boolean;
}

export type ReleaseWithAssets = Release & { attachments: Attachment[] };

/** Gitea's util.EllipsisDisplayString(title, 255). */
function ellipsis(s: string, max: number): string {
  const chars = [...s];
  return chars.length <= max ? s : `${chars.slice(0, max - 1).join('')}…`;
}

const withAssets = { attachments: true } as const;

export class ReleaseService implements NotifyListener {
  constructor(
    private readonly prisma: Prisma,
    private readonly repos: RepoService,
    private readonly readers: GitReaderPool,
    private readonly attachments: AttachmentService,
    private readonly notifier: Notifier,
    private readonly convert: Converter,
    /** Tag protections (Gitea's IsUserAllowedToControlTag) for the tags releases create. */
    private readonly mayControlTag: (repoId: number, tag: string, userId: number) => Promise<boolean> = async () => true,
  ) {}

  /** The Release record (Gitea converts it without a viewer). */
  async json(repo: RepoWithOwner, rel: ReleaseWithAssets) {
    const publisher = (await this.publisher(rel)) ?? ghostUser();
    return toRelease(this.convert.context, repo, rel, publisher, rel.attachments);
  }

  /** One asset's own record (downloaded by uuid). */
  assetJson(a: Attachment) {
    return toAttachment(this.convert.context, a);
  }

  private repoPath(repo: RepoWithOwner): string {
    return this.repos.diskPath(repo.owner.name, repo.name);
  }

  async list(repoId: number, f: ReleaseFilter): Promise<{ rows: ReleaseWithAssets[]; total: number }> {
    const where = {
      repoId,
      ...(f.includeDrafts ? {} : { isDraft: false }),
      ...(f.draft !== undefined ? { isDraft: f.draft } : {}),
      ...(f.prerelease !== undefined ? { isPrerelease: f.prerelease } : {}),
    };
    // A caller who may not see drafts and asks for drafts gets none.
    if (!f.includeDrafts && f.draft === true) return { rows: [], total: 0 };
    const [rows, total] = await Promise.all([
      this.prisma.release.findMany({ where, include: withAssets, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip: f.skip, take: f.take }),
      this.prisma.release.count({ where }),
    ]);
    return { rows, total };
  }

  /** The newest release that is neither a draft nor a pre-release. */
  async latest(repoId: number): Promise<ReleaseWithAssets> {
    const rel = await this.prisma.release.findFirst({ where: { repoId, isDraft: false, isPrerelease: false }, include: withAssets, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
    if (!rel) throw new NotFoundError('not found', ['release does not exist [id: 0, tag_name: latest]']);
    return rel;
  }

  async byId(repoId: number, id: number, canSeeDrafts: boolean): Promise<ReleaseWithAssets> {
    const rel = Number.isSafeInteger(id) ? await this.prisma.release.findUnique({ where: { id }, include: withAssets }) : null;
    if (!rel || rel.repoId !== repoId || (rel.isDraft && !canSeeDrafts)) throw new NotFoundError('not found', [`release does not exist [id: ${id}]`]);
    return rel;
  }

  async byTag(repoId: number, tag: string, canSeeDrafts: boolean): Promise<ReleaseWithAssets> {
    const rel = await this.prisma.release.findUnique({ where: { repoId_lowerTagName: { repoId, lowerTagName: tag.toLowerCase() } }, include: withAssets });
    if (!rel || (rel.isDraft && !canSeeDrafts)) throw new NotFoundError('not found', [`release does not exist [tag_name: ${tag}]`]);
    return rel;
  }

  async publisher(rel: Release): Promise<User | null> {
    return this.prisma.user.findUnique({ where: { id: rel.publisherId } });
  }

  /**
   * POST /releases. The tag is created (lightweight, or annotated with `tag_message`) at the
   * target when it does not exist yet and the release is not a draft.
   */
  async create(doer: User, repo: RepoWithOwner, input: CreateReleaseInput): Promise<ReleaseWithAssets> {
    if (repo.isEmpty) throw new InvalidError('repo is empty');
    const existing = await this.prisma.release.findUnique({ where: { repoId_lowerTagName: { repoId: repo.id, lowerTagName: input.tag_name.toLowerCase() } } });
    // Gitea keeps bare tags as release rows and converts one into a release here; a real
    // release on the tag already is its 409.
    if (existing) throw new ConflictError('Release is has no Tag');
    const draft = input.draft ?? false;
    const target = input.target_commitish || repo.defaultBranch;
    const tagName = draft ? input.tag_name : input.tag_name.replace(/^--/, '');
    const tag = draft ? null : await this.ensureTag(doer, repo, tagName, target, input.tag_message ?? '', doer.id);
    let rel: Release;
    try {
      rel = await this.prisma.release.create({
        data: {
          repoId: repo.id,
          publisherId: doer.id,
          tagName,
          lowerTagName: tagName.toLowerCase(),
          target,
          title: ellipsis(input.name ?? '', 255),
          note: input.body ?? '',
          isDraft: draft,
          isPrerelease: input.prerelease ?? false,
          sha1: tag?.sha1 ?? '',
          numCommits: tag?.numCommits ?? 0,
        },
      });
    } catch (err) {
      if ((err as { code?: string }).code === 'P2002') throw new ConflictError(`release tag already exist [name: ${tagName}]`);
      throw err;
    }
    if (tag?.created) await this.repos.refsChanged(doer, repo.id);
    await this.recount(repo.id);
    if (!draft) await this.notifier.releaseChanged(doer, repo, rel.id, 'published');
    return { ...rel, attachments: [] };
  }

  /** PATCH /releases/{id}: empty strings leave a field alone; publishing a draft creates its tag. */
  async edit(doer: User, repo: RepoWithOwner, rel: Release, input: EditReleaseInput): Promise<ReleaseWithAssets> {
    const tagName = input.tag_name || rel.tagName;
    const target = input.target_commitish || rel.target;
    const draft = input.draft ?? rel.isDraft;
    let sha1 = rel.sha1;
    let numCommits = rel.numCommits;
    let tagCreated = false;
    if (!draft) {
      // Gitea checks the protections for the release's publisher, not for the editor.
      const tag = await this.ensureTag(doer, repo, tagName, target, '', rel.publisherId);
      sha1 = tag.sha1;
      numCommits = tag.numCommits;
      tagCreated = tag.created;
    }
    let updated: Release;
    try {
      updated = await this.prisma.release.update({
        where: { id: rel.id },
        data: {
          tagName,
          lowerTagName: tagName.toLowerCase(),
          target,
          ...(input.name ? { title: ellipsis(input.name, 255) } : {}),
          ...(input.body ? { note: input.body } : {}),
          isDraft: draft,
          ...(input.prerelease !== undefined ? { isPrerelease: input.prerelease } : {}),
          sha1,
          numCommits,
          // A tag created now dates the release, as Gitea stamps it when createTag makes one.
          ...(tagCreated ? { createdAt: new Date() } : {}),
        },
      });
    } catch (err) {
      if ((err as { code?: string }).code === 'P2002') throw new ConflictError(`release tag already exist [name: ${tagName}]`);
      throw err;
    }
    if (tagCreated) await this.repos.refsChanged(doer, repo.id);
    await this.recount(repo.id);
    if (!draft) await this.notifier.releaseChanged(doer, repo, rel.id, tagCreated || rel.isDraft ? 'published' : 'updated');
    return this.byId(repo.id, rel.id, true);
  }

  /** Deletes the release and its assets; the tag stays. */
  async delete(doer: User, repo: RepoWithOwner, rel: ReleaseWithAssets): Promise<void> {
    await this.notifier.releaseChanged(doer, repo, rel.id, 'deleted');
    await this.prisma.release.delete({ where: { id: rel.id } });
    for (const a of rel.attachments) await this.attachments.removeFile(a.uuid);
    await this.recount(repo.id);
  }

  // ---- assets

  async asset(rel: Release, id: number): Promise<Attachment> {
    const a = Number.isSafeInteger(id) ? await this.prisma.attachment.findUnique({ where: { id } }) : null;
    if (!a || a.releaseId !== rel.id) throw new NotFoundError('not found', [`attachment does not exist [id: ${id}]`]);
    return a;
  }

  /** Stores an uploaded asset (any file type: Gitea's release ALLOWED_TYPES is empty). */
  async upload(doer: User, repo: RepoWithOwner, rel: Release, name: string, stream: Readable & { truncated?: boolean }): Promise<Attachment> {
    if (!name) throw new MalformedError('Could not determine name of attachment.');
    const { uuid, size } = await this.attachments.store(stream);
    return this.prisma.attachment.create({ data: { uuid, repoId: repo.id, releaseId: rel.id, uploaderId: doer.id, name, size: BigInt(size) } });
  }

  async renameAsset(rel: Release, id: number, name: string | undefined): Promise<Attachment> {
    const a = await this.asset(rel, id);
    if (!name) return a;
    return this.prisma.attachment.update({ where: { id: a.id }, data: { name } });
  }

  async deleteAsset(rel: Release, id: number): Promise<void> {
    const a = await this.asset(rel, id);
    await this.prisma.attachment.delete({ where: { id: a.id } });
    await this.attachments.removeFile(a.uuid);
  }

  /** /{owner}/{repo}/releases/download/{tag}/{name}: the asset of that name, for the download route. */
  async assetByName(repoId: number, tag: string, name: string, canSeeDrafts: boolean): Promise<Attachment> {
    const rel = await this.byTag(repoId, tag, canSeeDrafts);
    const a = rel.attachments.find((x) => x.name === name);
    if (!a) throw new NotFoundError('not found', [`attachment does not exist [name: ${name}]`]);
    return a;
  }

  // ---- tags

  /**
   * The tag of a release: created at `target` when missing and the tag protections let the
   * publisher (the caller announces the ref change), then read back for sha1 and the number of
   * commits.
   */
  private async ensureTag(doer: User, repo: RepoWithOwner, tagName: string, target: string, message: string, publisherId: number): Promise<{ sha1: string; numCommits: number; created: boolean }> {
    const repoPath = this.repoPath(repo);
    const reader = this.readers.reader(repoPath);
    let created = false;
    if (!(await reader.resolve(`refs/tags/${tagName}`))) {
      if (!isValidTagName(tagName)) throw new InvalidError(`release tag name is not valid [tag_name: ${tagName}]`);
      if (!(await this.mayControlTag(repo.id, tagName, publisherId))) throw new InvalidError(`release tag name is protected [tag_name: ${tagName}]`);
      const commit = await reader.resolveCommit(target);
      if (!commit) throw new NotFoundError('target not found');
      try {
        if (message) {
          await runGit(['tag', '-a', '-m', message, '--', tagName, commit], {
            cwd: repoPath,
            env: { GIT_COMMITTER_NAME: doer.fullName || doer.name, GIT_COMMITTER_EMAIL: doer.email },
          });
        } else {
          await updateRef(repoPath, `refs/tags/${tagName}`, commit, NULL_OID, 'release');
        }
      } catch (err) {
        if (err instanceof RefChangedError) throw new AlreadyExistsError(`tag already exists [name: ${tagName}]`);
        throw err;
      }
      created = true;
    }
    const sha1 = await reader.resolveCommit(`refs/tags/${tagName}`);
    if (!sha1) throw new NotFoundError('target not found');
    const numCommits = await countCommits(repoPath, { revs: [sha1] });
    return { sha1, numCommits, created };
  }

  /** release_counter: the published releases. */
  private async recount(repoId: number): Promise<void> {
    const n = await this.prisma.release.count({ where: { repoId, isDraft: false } });
    await this.prisma.repository.update({ where: { id: repoId }, data: { numReleases: n } });
  }

  /** A tag deleted by a push (or through the API) turns its release into a draft, as Gitea's PushUpdateDeleteTags. */
  async pushed(_pusher: User, repo: RepoWithOwner, ref: PushedRef): Promise<void> {
    if (!ref.ref.startsWith('refs/tags/') || ref.after !== ZERO_SHA) return;
    const tag = ref.ref.slice('refs/tags/'.length).toLowerCase();
    const changed = await this.prisma.release.updateMany({ where: { repoId: repo.id, lowerTagName: tag }, data: { isDraft: true, sha1: '', numCommits: 0 } });
    if (changed.count > 0) await this.recount(repo.id);
  }
}
