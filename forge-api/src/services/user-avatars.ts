/**
 * Uploaded avatars of users and organizations (POST/DELETE /user/avatar and /orgs/{org}/avatar,
 * Gitea's UploadAvatar / DeleteAvatar): the image goes through processAvatarImage and is kept
 * under <data>/avatars/<sha256 of "<id>-" + the upload> (Gitea's HashAvatar), the name the
 * user's `avatar` column holds; avatar_url then points at GET /avatars/{name}. Every other name
 * there (the e-mail hash links of users without an upload, removed uploads) gets a generated
 * placeholder, as Gitea answers such links with a default picture rather than a 404.
 */
import crypto from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { PNG } from 'pngjs';
import type { ForgeConfig } from '../config';
import { processAvatarImage } from './avatar-image';
import type { Prisma } from './database';
import { IMAGE_CONTENT_TYPE, imageInfo } from './image-info';
import type { User } from './records';

const NAME = /^[0-9a-f]{64}$/;
const PLACEHOLDER_SIDE = 64;

export class UserAvatarService {
  constructor(
    private readonly prisma: Prisma,
    private readonly config: Pick<ForgeConfig, 'dataDir'>,
  ) {}

  private dir(): string {
    return path.join(this.config.dataDir, 'avatars');
  }

  async upload(owner: User, data: Buffer): Promise<void> {
    const stored = processAvatarImage(data, 'UploadAvatar: failed to process user avatar image: ');
    const name = crypto.createHash('sha256').update(`${owner.id}-`).update(data).digest('hex');
    await fs.mkdir(this.dir(), { recursive: true });
    await fs.writeFile(path.join(this.dir(), name), stored);
    await this.prisma.user.update({ where: { id: owner.id }, data: { avatar: name } });
    if (owner.avatar && owner.avatar !== name && NAME.test(owner.avatar)) await fs.rm(path.join(this.dir(), owner.avatar), { force: true });
  }

  async remove(owner: User): Promise<void> {
    if (!owner.avatar) return;
    await this.prisma.user.update({ where: { id: owner.id }, data: { avatar: '' } });
    if (NAME.test(owner.avatar)) await fs.rm(path.join(this.dir(), owner.avatar), { force: true });
  }

  /** What GET /avatars/{name} serves: the stored upload, else the placeholder. */
  async read(name: string): Promise<{ data: Buffer; contentType: string }> {
    if (NAME.test(name)) {
      const data = await fs.readFile(path.join(this.dir(), name)).catch(() => null);
      if (data) {
        const info = imageInfo(data);
        return { data, contentType: info ? IMAGE_CONTENT_TYPE[info.type] : 'application/octet-stream' };
      }
    }
    return { data: placeholder(name), contentType: 'image/png' };
  }
}

/** A plain square in a colour taken from the name, so different users look different. */
function placeholder(name: string): Buffer {
  const [r, g, b] = crypto.createHash('md5').update(name).digest();
  const png = new PNG({ width: PLACEHOLDER_SIDE, height: PLACEHOLDER_SIDE });
  for (let i = 0; i < png.data.length; i += 4) {
    png.data[i] = 64 + (r >> 1);
    png.data[i + 1] = 64 + (g >> 1);
    png.data[i + 2] = 64 + (b >> 1);
    png.data[i + 3] = 255;
  }
  return PNG.sync.write(png);
}
