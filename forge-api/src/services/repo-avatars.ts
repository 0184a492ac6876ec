/**
 * Repository avatars (POST/DELETE /repos/{owner}/{repo}/avatar): the image is checked (a PNG,
 * JPEG, GIF or WebP within Gitea's [avatar] limits), processed as user avatars are (a large
 * one cropped and scaled, see avatar-image.ts) and kept under <data>/repo-avatars/<repo id>-<md5
 * of the upload>, the name Gitea gives it, which avatar_url points at and GET /repo-avatars/{name}
 * serves.
 */
import crypto from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { ForgeConfig } from '../config';
import type { Prisma } from './database';
import { processAvatarImage } from './avatar-image';
import { InvalidError, NotFoundError, TooLargeError } from './errors';
import { IMAGE_CONTENT_TYPE, imageInfo } from './image-info';
import type { RepoWithOwner } from './repos';

/** Gitea's [avatar] MAX_WIDTH / MAX_HEIGHT and MAX_ORIGIN_SIZE defaults. */
const MAX_SIDE = 4096;
const MAX_BYTES = 1024 * 1024;
const NAME = /^\d+-[0-9a-f]{32}$/;

export class RepoAvatarService {
  constructor(
    private readonly prisma: Prisma,
    private readonly config: Pick<ForgeConfig, 'dataDir'>,
  ) {}

  private dir(): string {
    return path.join(this.config.dataDir, 'repo-avatars');
  }

  async upload(repo: RepoWithOwner, data: Buffer): Promise<void> {
    const info = imageInfo(data);
    if (!info) throw new InvalidError('UploadAvatar: failed to process repo avatar image: unsupported image format');
    if (info.width > MAX_SIDE || info.height > MAX_SIDE) {
      throw new InvalidError(`UploadAvatar: failed to process repo avatar image: image width or height is too large: ${info.width}x${info.height}`);
    }
    if (data.length > MAX_BYTES) throw new TooLargeError(`UploadAvatar: failed to process repo avatar image: image is too large: ${data.length} bytes`);
    const name = `${repo.id}-${crypto.createHash('md5').update(data).digest('hex')}`;
    if (repo.avatar === name) return;
    await fs.mkdir(this.dir(), { recursive: true });
    await fs.writeFile(path.join(this.dir(), name), processAvatarImage(data, 'UploadAvatar: failed to process repo avatar image: '));
    await this.prisma.repository.update({ where: { id: repo.id }, data: { avatar: name } });
    if (repo.avatar && NAME.test(repo.avatar)) await fs.rm(path.join(this.dir(), repo.avatar), { force: true });
  }

  async remove(repo: RepoWithOwner): Promise<void> {
    if (!repo.avatar) return;
    await this.prisma.repository.update({ where: { id: repo.id }, data: { avatar: '' } });
    if (NAME.test(repo.avatar)) await fs.rm(path.join(this.dir(), repo.avatar), { force: true });
  }

  /** The stored file for GET /repo-avatars/{name}. */
  async read(name: string): Promise<{ data: Buffer; contentType: string }> {
    if (!NAME.test(name)) throw new NotFoundError();
    let data: Buffer;
    try {
      data = await fs.readFile(path.join(this.dir(), name));
    } catch {
      throw new NotFoundError();
    }
    const info = imageInfo(data);
    return { data, contentType: info ? IMAGE_CONTENT_TYPE[info.type] : 'application/octet-stream' };
  }
}
