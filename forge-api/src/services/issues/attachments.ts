/**
 * Attachments of issues and comments: uploads stream to <dataDir>/attachments/<u0>/<u1>/<uuid>
 * through a temporary file (renamed into place when complete), with Gitea's size limit (413)
 * and allowed file types (422); downloads go through /attachments/<uuid> and count.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable } from 'node:stream';
import { InvalidError, NotFoundError, TooLargeError, ValidationError } from '../errors';
import type { ForgeConfig } from '../../config';
import { AccessMode } from '../convert';
import type { User } from '../records';
import type { RepoCtx, TrackerContext } from './context';
import type { IssueConverter } from '../convert';
import type { Attachment } from '../../../generated/prisma/client';

/** Gitea's default [attachment] ALLOWED_TYPES. */
export const ALLOWED_TYPES = [
  '.avif', '.cpuprofile', '.csv', '.dmp', '.docx', '.fodg', '.fodp', '.fods', '.fodt', '.gif', '.gz', '.jpeg', '.jpg', '.json', '.jsonc', '.log',
  '.md', '.mov', '.mp4', '.odf', '.odg', '.odp', '.ods', '.odt', '.patch', '.pdf', '.png', '.pptx', '.svg', '.tgz', '.txt', '.webm', '.webp',
  '.xls', '.xlsx', '.zip',
];

export class FileTooLargeError extends Error {}

export interface AttachmentOwner {
  issueId: number;
  commentId: number | null;
}

export class AttachmentService {
  constructor(
    private readonly ctx: TrackerContext,
    private readonly config: ForgeConfig,
    private readonly convert: IssueConverter,
  ) {}

  private get prisma() {
    return this.ctx.prisma;
  }

  get maxSize(): number {
    return this.config.attachmentMaxSize;
  }

  filePath(uuid: string): string {
    return path.join(this.config.attachmentsDir, uuid[0], uuid[1], uuid);
  }

  async removeFile(uuid: string): Promise<void> {
    await fs.promises.rm(this.filePath(uuid), { force: true });
  }

  checkType(name: string): void {
    const ext = path.extname(name).toLowerCase();
    if (!ALLOWED_TYPES.includes(ext)) throw new InvalidError(`This file extension or type is not allowed to be uploaded. Type: ${ext || name}`);
  }

  /**
   * Streams an upload into the attachment storage (a temporary file renamed into place when
   * complete) and answers its new uuid and size; the caller records the row. A stream that
   * fails with the multipart limit, sets `truncated`, or passes the configured maximum is a 413
   * and leaves nothing behind. Release assets are stored here too.
   */
  async store(stream: Readable & { truncated?: boolean }): Promise<{ uuid: string; size: number }> {
    const uuid = crypto.randomUUID();
    const final = this.filePath(uuid);
    await fs.promises.mkdir(path.dirname(final), { recursive: true });
    const tmp = `${final}.${process.pid}.tmp`;
    const limit = this.maxSize;
    let seen = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        seen += chunk.length;
        if (seen > limit) done(new FileTooLargeError());
        else done(null, chunk);
      },
    });
    try {
      await pipeline(stream, counter, fs.createWriteStream(tmp));
      if (stream.truncated) throw new FileTooLargeError();
    } catch (err) {
      await fs.promises.rm(tmp, { force: true });
      if (err instanceof FileTooLargeError || (err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
        throw new TooLargeError(`attachment is too large: the limit is ${this.maxSize} bytes`);
      }
      throw err;
    }
    const size = (await fs.promises.stat(tmp)).size;
    await fs.promises.rename(tmp, final);
    return { uuid, size };
  }

  /**
   * Streams an upload to disk and records it. `stream` ends early with an error (or sets
   * `truncated`) when the multipart size limit is hit: that is a 413 and nothing is kept.
   */
  async upload(rc: RepoCtx & { doer: User }, owner: AttachmentOwner, name: string, stream: Readable & { truncated?: boolean }) {
    if (!name) throw new ValidationError('[Name]: Required');
    this.checkType(name);
    const { uuid, size } = await this.store(stream);
    const row = await this.prisma.attachment.create({
      data: { uuid, repoId: rc.repo.id, issueId: owner.issueId, commentId: owner.commentId, uploaderId: rc.doer.id, name, size: BigInt(size) },
    });
    return this.convert.attachment(row);
  }

  async list(owner: AttachmentOwner) {
    const rows = await this.prisma.attachment.findMany({ where: { issueId: owner.issueId, commentId: owner.commentId }, orderBy: { id: 'asc' } });
    return rows.map((a) => this.convert.attachment(a));
  }

  async find(owner: AttachmentOwner, id: number): Promise<Attachment> {
    const a = Number.isSafeInteger(id) ? await this.prisma.attachment.findUnique({ where: { id } }) : null;
    if (!a || a.issueId !== owner.issueId || (a.commentId ?? null) !== owner.commentId) {
      throw new NotFoundError('not found', [`attachment does not exist [id: ${id}]`]);
    }
    return a;
  }

  async rename(owner: AttachmentOwner, id: number, name: string | undefined) {
    const a = await this.find(owner, id);
    if (name === undefined || name === '') return this.convert.attachment(a);
    this.checkType(name);
    return this.convert.attachment(await this.prisma.attachment.update({ where: { id: a.id }, data: { name } }));
  }

  async delete(owner: AttachmentOwner, id: number): Promise<void> {
    const a = await this.find(owner, id);
    await this.prisma.attachment.delete({ where: { id: a.id } });
    await this.removeFile(a.uuid);
  }

  /** GET /attachments/<uuid>: readable repository required (404 otherwise); counts the download. */
  async openForDownload(uuid: string, viewer: User | null) {
    const a = /^[0-9a-f-]{36}$/.test(uuid) ? await this.prisma.attachment.findUnique({ where: { uuid } }) : null;
    if (!a) throw new NotFoundError('not found', [`attachment does not exist [uuid: ${uuid}]`]);
    const repo = await this.prisma.repository.findUnique({ where: { id: a.repoId }, include: { owner: true } });
    const mode = repo ? await this.ctx.accessMode(viewer, repo) : AccessMode.None;
    // A release asset needs the release unit, and a draft's assets only show to writers.
    const release = a.releaseId ? await this.prisma.release.findUnique({ where: { id: a.releaseId } }) : null;
    const unitOn = a.releaseId ? repo?.hasReleases && release && (!release.isDraft || mode >= AccessMode.Write) : repo?.hasIssues;
    if (!repo || mode < AccessMode.Read || !unitOn) {
      throw new NotFoundError('not found', [`attachment does not exist [uuid: ${uuid}]`]);
    }
    await this.prisma.attachment.update({ where: { id: a.id }, data: { downloadCount: { increment: 1 } } });
    return { attachment: a, path: this.filePath(a.uuid) };
  }
}
