/**
 * Who may read a repository is written in the forms each use needs: repoAccessMode for one
 * repository (with or without the collaboration the route's prepared statement loaded),
 * repoAccessModes for a page of them, the Prisma filter readableRepoFilter and the SQL
 * readableRepoSql for lists, and the public-only rule beside each. This suite builds random
 * worlds (individual users and organizations of every visibility, site admins, restricted
 * users, organization members, teams of every mode with chosen or all repositories,
 * collaborators of every mode, public and private repositories) and checks that every form
 * gives every viewer (anonymous, each user, each user with a public-only token) the same
 * answer for every repository.
 */
import { AccessMode } from '../src/services/convert';
import { hiddenFromPublicOnly, publicOnlyViewer, readableRepoFilter, readableRepoSql, type Viewer } from '../src/services/permissions';
import type { RepoWithOwner } from '../src/services/repos';
import type { User } from '../src/services/records';
import { providers, startForge, type Forge } from './support/forge';

/** A small seeded generator, so that a failure names the world that shows it. */
function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    chance: (p: number) => next() < p,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)],
  };
}

const SEEDS = (process.env.PERMISSION_SEEDS ?? '1,2,3').split(',').map(Number);

async function buildWorld(forge: Forge, seed: number): Promise<{ users: User[]; repos: RepoWithOwner[] }> {
  const db = forge.app.prisma;
  const rnd = generator(seed);
  const tag = `s${seed}`;
  const users: User[] = [];
  for (let i = 0; i < 9; i++) {
    const name = `${tag}-u${i}`;
    users.push(
      await db.user.create({
        data: {
          name,
          lowerName: name,
          visibility: rnd.pick([0, 0, 1, 2]),
          isAdmin: rnd.chance(0.1),
          isRestricted: rnd.chance(0.2),
        },
      }),
    );
  }
  const orgs: User[] = [];
  for (let i = 0; i < 4; i++) {
    const name = `${tag}-org${i}`;
    orgs.push(await db.user.create({ data: { name, lowerName: name, type: 1, visibility: [0, 1, 2, rnd.pick([0, 1, 2])][i] } }));
  }
  const repos: RepoWithOwner[] = [];
  for (let i = 0; i < 24; i++) {
    const owner = rnd.chance(0.5) ? rnd.pick(orgs) : rnd.pick(users);
    const name = `r${i}`;
    repos.push(await db.repository.create({ data: { ownerId: owner.id, ownerName: owner.name, name, lowerName: name, isPrivate: rnd.chance(0.5) }, include: { owner: true } }));
  }
  for (const org of orgs) {
    const members = users.filter(() => rnd.chance(0.45));
    for (const u of members) await db.orgUser.create({ data: { orgId: org.id, userId: u.id } });
    const orgRepos = repos.filter((r) => r.ownerId === org.id);
    for (let t = 0; t < 3; t++) {
      const name = `team${t}`;
      const team = await db.team.create({
        data: {
          orgId: org.id,
          name,
          lowerName: name,
          authorize: t === 0 ? AccessMode.Owner : rnd.pick([AccessMode.Read, AccessMode.Write, AccessMode.Admin]),
          includesAllRepositories: t > 0 && rnd.chance(0.3),
        },
      });
      // Team members are members of the organization (Gitea adds them together).
      for (const u of members.filter(() => rnd.chance(0.4))) await db.teamUser.create({ data: { orgId: org.id, teamId: team.id, userId: u.id } });
      for (const r of orgRepos.filter(() => rnd.chance(0.4))) await db.teamRepo.create({ data: { orgId: org.id, teamId: team.id, repoId: r.id } });
    }
  }
  for (const r of repos) {
    for (const u of users.filter(() => rnd.chance(0.15))) {
      if (u.id !== r.ownerId) await db.collaboration.create({ data: { repoId: r.id, userId: u.id, mode: rnd.pick([AccessMode.Read, AccessMode.Write, AccessMode.Admin]) } });
    }
  }
  return { users, repos };
}

for (const provider of providers()) {
  describe(`one readable-repository rule in every form [${provider}]`, () => {
    let forge: Forge;
    beforeAll(async () => {
      forge = await startForge(provider);
    });
    afterAll(async () => {
      await forge?.close();
    });

    test.each(SEEDS)('random world %i: every form gives every viewer the same repositories and modes', async (seed) => {
      const { users, repos } = await buildWorld(forge, seed);
      const { permissions, hot } = forge.app.services;
      const db = forge.app.prisma;
      const ids = repos.map((r) => r.id);
      // One prepared statement per distinct text (the statements are named by their caller).
      const names = new Map<string, string>();
      const statementName = (sql: string) => names.get(sql) ?? (names.set(sql, `permission_forms_${seed}_${names.size}`), names.get(sql)!);
      const viewers: (Viewer | null)[] = [null, ...users, ...users.map(publicOnlyViewer)];
      let readable = 0;
      let hidden = 0;
      for (const viewer of viewers) {
        const label = viewer ? `${viewer.name}${viewer.publicOnly ? ' (public-only token)' : ''}${viewer.isAdmin ? ' (admin)' : ''}${viewer.isRestricted ? ' (restricted)' : ''}` : 'anonymous';
        const user: User | null = viewer ? { ...viewer, publicOnly: undefined } as User : null;
        const publicOnly = viewer?.publicOnly === true;
        // One repository at a time, as routes do: with the collaboration loaded by the
        // prepared statement, and without.
        const single: number[] = [];
        const routed: number[] = [];
        for (const repo of repos) {
          single.push(await permissions.repoAccessMode(user, repo));
          const found = await hot.repoByName(repo.owner.name, repo.name, user?.id ?? null);
          routed.push(await permissions.repoAccessMode(user, { ...found!.repo, collaborators: found!.collabMode === null ? [] : [{ mode: found!.collabMode }] }));
        }
        const batch = await permissions.repoAccessModes(user, repos);
        expect({ viewer: label, modes: batch }).toEqual({ viewer: label, modes: single });
        expect({ viewer: label, modes: routed }).toEqual({ viewer: label, modes: single });

        const expected = repos.filter((r, i) => single[i] >= AccessMode.Read && !(publicOnly && hiddenFromPublicOnly(r))).map((r) => r.id);
        const viaPrisma = (await db.repository.findMany({ where: { AND: [{ id: { in: ids } }, readableRepoFilter(viewer)] }, select: { id: true }, orderBy: { id: 'asc' } })).map((r) => r.id);
        const cond = readableRepoSql(viewer);
        const sqlText = (where: string | undefined) => `SELECT r."id" AS "id" FROM "Repository" r WHERE ${hot.inList('r."id"')}${where ? ` AND ${where}` : ''} ORDER BY r."id"`;
        const viaSql = (
          await hot.all(statementName(sqlText(cond?.sql)), sqlText(cond?.sql), [hot.listParam(ids), ...(cond?.params ?? [])])
        ).map((r) => Number(r.id));
        expect({ viewer: label, prisma: viaPrisma }).toEqual({ viewer: label, prisma: expected });
        expect({ viewer: label, sql: viaSql }).toEqual({ viewer: label, sql: expected });
        readable += expected.length;
        hidden += repos.length - expected.length;
      }
      // The world is mixed enough to mean something: viewers both read and miss repositories.
      expect(readable).toBeGreaterThan(repos.length);
      expect(hidden).toBeGreaterThan(repos.length);
    });
  });
}
