/**
 * Tag protections (Gitea's protected_tag): who may create or delete the tags a pattern matches.
 * A pattern between slashes (`/^v\d+$/`) is a regular expression in Go's RE2 syntax, matched by
 * RE2 compiled to WASM (re2-wasm: linear time, the syntax Gitea accepts), never by a JavaScript
 * RegExp, which could backtrack for minutes on a user's pattern; any other pattern is a glob
 * (services/glob.ts).
 */
import type { RE2 } from 're2-wasm';
import type { Prisma } from './database';
import { InvalidError, MalformedError, NotFoundError, PermissionDeniedError } from './errors';
import { compileGlob } from './glob';
import { USER_TYPE_ORGANIZATION } from './permissions';
import type { RepoWithOwner } from './repos';

export interface TagProtection {
  id: number;
  repoId: number;
  namePattern: string;
  userIds: number[];
  teamIds: number[];
  createdAt: Date;
  updatedAt: Date;
}

export interface TagProtectionInput {
  name_pattern?: string | null;
  whitelist_usernames?: string[] | null;
  whitelist_teams?: string[] | null;
}

/**
 * re2-wasm, loaded by the first regular-expression pattern: loading it sets up its 16 MiB WASM
 * heap, which a forge without such patterns should not carry.
 */
function re2(): typeof import('re2-wasm') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('re2-wasm') as typeof import('re2-wasm');
}

/** A tag-name matcher for a pattern; throws InvalidError when the pattern does not compile. */
export function tagPatternMatcher(pattern: string): (tag: string) => boolean {
  if (pattern.length >= 2 && pattern.startsWith('/') && pattern.endsWith('/')) {
    let re: RE2;
    try {
      re = new (re2().RE2)(pattern.slice(1, -1), 'u');
    } catch (err) {
      throw new InvalidError(`invalid regular expression: ${(err as Error).message}`);
    }
    return (tag) => re.test(tag);
  }
  try {
    const glob = compileGlob(pattern);
    return (tag) => glob.match(tag);
  } catch (err) {
    throw new InvalidError(`invalid glob: ${(err as Error).message}`);
  }
}

type Row = { id: number; repoId: number; namePattern: string; allowlistUserIds: string; allowlistTeamIds: string; createdAt: Date; updatedAt: Date };

function ids(json: string): number[] {
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? v.map(Number) : [];
  } catch {
    return [];
  }
}

function fromRow(r: Row): TagProtection {
  return { id: Number(r.id), repoId: Number(r.repoId), namePattern: r.namePattern, userIds: ids(r.allowlistUserIds), teamIds: ids(r.allowlistTeamIds), createdAt: r.createdAt, updatedAt: r.updatedAt };
}

export class TagProtectionService {
  constructor(private readonly prisma: Prisma) {}

  async list(repoId: number): Promise<TagProtection[]> {
    return (await this.prisma.protectedTag.findMany({ where: { repoId }, orderBy: { id: 'asc' } })).map(fromRow);
  }

  async get(repoId: number, id: number): Promise<TagProtection> {
    const row = Number.isSafeInteger(id) ? await this.prisma.protectedTag.findFirst({ where: { id, repoId } }) : null;
    if (!row) throw new NotFoundError('not found');
    return fromRow(row);
  }

  private async userIds(names: string[] | null | undefined): Promise<number[]> {
    const out: number[] = [];
    for (const name of names ?? []) {
      const u = await this.prisma.user.findFirst({ where: { lowerName: name.toLowerCase() }, select: { id: true } });
      if (!u) throw new InvalidError(`user does not exist [uid: 0, name: ${name}]`);
      out.push(Number(u.id));
    }
    return out;
  }

  private async teamIds(repo: RepoWithOwner, names: string[] | null | undefined): Promise<number[]> {
    if (repo.owner.type !== USER_TYPE_ORGANIZATION) return [];
    const out: number[] = [];
    for (const name of names ?? []) {
      const t = await this.prisma.team.findFirst({ where: { orgId: repo.ownerId, lowerName: name.toLowerCase() }, select: { id: true } });
      if (!t) throw new InvalidError(`team does not exist [org_id ${repo.ownerId}, team_id 0, name: ${name}]`);
      out.push(Number(t.id));
    }
    return out;
  }

  async create(repo: RepoWithOwner, input: TagProtectionInput): Promise<TagProtection> {
    const pattern = (input.name_pattern ?? '').trim();
    if (!pattern) throw new MalformedError('name_pattern are empty');
    if (!input.whitelist_usernames?.length && !input.whitelist_teams?.length) throw new MalformedError('both whitelist_usernames and whitelist_teams are empty');
    if (await this.prisma.protectedTag.findFirst({ where: { repoId: repo.id, namePattern: pattern } })) throw new PermissionDeniedError('Tag protection already exist');
    tagPatternMatcher(pattern);
    const userIds = await this.userIds(input.whitelist_usernames);
    const teamIds = await this.teamIds(repo, input.whitelist_teams);
    const row = await this.prisma.protectedTag.create({ data: { repoId: repo.id, namePattern: pattern, allowlistUserIds: JSON.stringify(userIds), allowlistTeamIds: JSON.stringify(teamIds) } });
    return fromRow(row);
  }

  async edit(repo: RepoWithOwner, id: number, input: TagProtectionInput): Promise<TagProtection> {
    const pt = await this.get(repo.id, id);
    const data: { namePattern?: string; allowlistUserIds?: string; allowlistTeamIds?: string; updatedAt: Date } = { updatedAt: new Date() };
    if (input.name_pattern !== undefined && input.name_pattern !== null) {
      const pattern = input.name_pattern.trim();
      tagPatternMatcher(pattern);
      data.namePattern = pattern;
    }
    if (input.whitelist_usernames != null) data.allowlistUserIds = JSON.stringify(await this.userIds(input.whitelist_usernames));
    if (input.whitelist_teams != null) data.allowlistTeamIds = JSON.stringify(await this.teamIds(repo, input.whitelist_teams));
    return fromRow(await this.prisma.protectedTag.update({ where: { id: pt.id }, data }));
  }

  async delete(repo: RepoWithOwner, id: number): Promise<void> {
    const pt = await this.get(repo.id, id);
    await this.prisma.protectedTag.delete({ where: { id: pt.id } });
  }

  /** Gitea's TagProtection JSON (allow-lists by name). */
  async json(pt: TagProtection): Promise<Record<string, unknown>> {
    const users = pt.userIds.length ? await this.prisma.user.findMany({ where: { id: { in: pt.userIds } }, select: { id: true, name: true } }) : [];
    const teams = pt.teamIds.length ? await this.prisma.team.findMany({ where: { id: { in: pt.teamIds } }, select: { id: true, name: true } }) : [];
    const byId = <T extends { id: number; name: string }>(rows: T[], ids: number[]) => ids.map((id) => rows.find((r) => Number(r.id) === id)?.name).filter((n): n is string => Boolean(n));
    return {
      id: pt.id,
      name_pattern: pt.namePattern,
      whitelist_usernames: byId(users, pt.userIds),
      whitelist_teams: byId(teams, pt.teamIds),
      created_at: pt.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      updated_at: pt.updatedAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
  }

  /**
   * Gitea's IsUserAllowedToControlTag: a tag no pattern matches is free; a matched tag may be
   * created or deleted by a user any matching protection allow-lists (directly or by team).
   */
  async mayControl(repoId: number, tag: string, userId: number | null): Promise<boolean> {
    const rules = await this.list(repoId);
    let allowed = true;
    for (const rule of rules) {
      let match: (t: string) => boolean;
      try {
        match = tagPatternMatcher(rule.namePattern);
      } catch {
        return false; // a pattern that no longer compiles protects everything rather than nothing
      }
      if (!match(tag)) continue;
      allowed = userId !== null && (rule.userIds.includes(userId) || (rule.teamIds.length > 0 && (await this.prisma.teamUser.count({ where: { userId, teamId: { in: rule.teamIds } } })) > 0));
      if (allowed) break;
    }
    return allowed;
  }
}
