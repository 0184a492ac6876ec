/**
 * The one rule naming the forge user behind a commit e-mail (Gitea's GetUsersByEmails, checked
 * against Gitea 1.27.3): an activated address of the user; else, at the no-reply domain,
 * `{id}+{anything}@` names the user with that id (the git identity of users who hide their
 * e-mail) and `{name}@` the user with that name (the placeholder e-mail). Case-insensitive.
 */
import type { Prisma } from './database';
import type { User } from './records';

/** The git e-mail of a user who hides their address. */
export function noReplyEmail(u: Pick<User, 'id' | 'lowerName'>, noReplyAddress: string): string {
  return `${u.id}+${u.lowerName}@${noReplyAddress}`;
}

/** Forge users of these commit e-mails, by lowercase e-mail (unknown e-mails are absent). */
export async function usersByCommitEmails(prisma: Prisma, noReplyAddress: string, emails: Iterable<string>): Promise<Map<string, User>> {
  const lower = [...new Set([...emails].filter(Boolean).map((e) => e.toLowerCase()))];
  const out = new Map<string, User>();
  if (lower.length === 0) return out;
  const rows = await prisma.emailAddress.findMany({ where: { lowerEmail: { in: lower }, isActivated: true }, include: { user: true } });
  for (const row of rows) out.set(row.lowerEmail, row.user as User);

  const suffix = `@${noReplyAddress.toLowerCase()}`;
  const byId = new Map<number, string[]>();
  const byName = new Map<string, string[]>();
  for (const email of lower) {
    if (out.has(email) || !email.endsWith(suffix)) continue;
    const local = email.slice(0, -suffix.length);
    const id = /^(\d+)\+/.exec(local);
    if (id) {
      // Ids are 32-bit in the database: a longer number names nobody.
      if (Number(id[1]) <= 2 ** 31 - 1) push(byId, Number(id[1]), email);
    } else if (local) push(byName, local, email);
  }
  if (byId.size === 0 && byName.size === 0) return out;
  const users = await prisma.user.findMany({ where: { OR: [{ id: { in: [...byId.keys()] } }, { lowerName: { in: [...byName.keys()] } }] } });
  for (const u of users as User[]) {
    for (const email of byId.get(u.id) ?? []) out.set(email, u);
    for (const email of byName.get(u.lowerName) ?? []) out.set(email, u);
  }
  return out;
}

function push<K>(map: Map<K, string[]>, key: K, email: string): void {
  const list = map.get(key);
  if (list) list.push(email);
  else map.set(key, [email]);
}
