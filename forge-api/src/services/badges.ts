/**
 * Badges (Gitea's badge and user_badge): site admins define them (the CLI's `admin badge
 * create`, where Gitea has its admin web pages) and give them to users through
 * /admin/users/{username}/badges. A slug names a badge.
 */
import type { Prisma } from './database';
import { AlreadyExistsError, InvalidError, NotFoundError } from './errors';
import type { User } from './records';

/**
 * A badge as Gitea 1.27 sends it: its handler serialises the database model, whose fields have
 * no JSON names, so the keys are ID, Slug, Description and ImageURL (not the lower-case keys of
 * its OpenAPI document); clients see these.
 */
export interface BadgeJson {
  ID: number;
  Slug: string;
  Description: string;
  ImageURL: string;
}

const toJson = (b: { id: number; slug: string; description: string; imageUrl: string }): BadgeJson => ({ ID: b.id, Slug: b.slug, Description: b.description, ImageURL: b.imageUrl });

export class BadgeService {
  constructor(private readonly prisma: Prisma) {}

  async create(input: { slug: string; description?: string; imageUrl?: string }): Promise<BadgeJson> {
    const slug = input.slug.trim();
    if (!slug) throw new InvalidError('a badge needs a slug');
    if (await this.prisma.badge.findUnique({ where: { slug } })) throw new AlreadyExistsError(`badge already exists [slug: ${slug}]`);
    return toJson(await this.prisma.badge.create({ data: { slug, description: input.description ?? '', imageUrl: input.imageUrl ?? '' } }));
  }

  /** A user's badges, in the order they were defined (GET .../badges; one query). */
  async listOf(user: User): Promise<BadgeJson[]> {
    const rows = await this.prisma.badge.findMany({ where: { users: { some: { userId: user.id } } }, orderBy: { id: 'asc' } });
    return rows.map(toJson);
  }

  /** Gives badges; all or none: an unknown slug or one the user already has refuses the lot. */
  async add(user: User, slugs: string[]): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      for (const slug of slugs) {
        const badge = await tx.badge.findUnique({ where: { slug } });
        if (!badge) throw new NotFoundError(`badge does not exist [slug: ${slug}]`);
        if (await tx.userBadge.findUnique({ where: { badgeId_userId: { badgeId: badge.id, userId: user.id } } })) {
          throw new AlreadyExistsError(`user badge already exists [user_id: ${user.id}, badge_id: ${badge.id}]`);
        }
        await tx.userBadge.create({ data: { badgeId: badge.id, userId: user.id } });
      }
    });
  }

  /** Takes badges away; slugs the user does not have are ignored, as in Gitea. */
  async remove(user: User, slugs: string[]): Promise<void> {
    if (!slugs.length) return;
    await this.prisma.userBadge.deleteMany({ where: { userId: user.id, badge: { slug: { in: slugs } } } });
  }
}
