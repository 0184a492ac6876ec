/**
 * A user's own e-mail addresses (GET/POST/DELETE /user/emails, Gitea's user_service email
 * rules): an address belongs to one account (compared without case); added addresses are
 * secondary and activated (the forge sends no confirmation mail, as Gitea with
 * REGISTER_EMAIL_CONFIRM off); the primary address cannot be deleted. Unlike Gitea, which
 * writes address by address and may stop half-way, a request is checked whole before anything
 * is written.
 */
import type { Prisma } from './database';
import { AlreadyExistsError, InvalidError, NotFoundError } from './errors';
import { checkEmail } from './names';
import type { EmailAddress, User } from './records';

export class EmailService {
  constructor(private readonly prisma: Prisma) {}

  /** The user's addresses, primary first then in the order they were added. */
  list(user: User): Promise<EmailAddress[]> {
    return this.prisma.emailAddress.findMany({ where: { userId: user.id }, orderBy: [{ isPrimary: 'desc' }, { id: 'asc' }] });
  }

  async add(user: User, emails: string[]): Promise<EmailAddress[]> {
    if (!emails.length) throw new InvalidError('Email list empty');
    const seen = new Set<string>();
    for (const email of emails) {
      try {
        checkEmail(email);
      } catch {
        throw new InvalidError(`Email address ${JSON.stringify(email)} invalid`);
      }
      const lower = email.toLowerCase();
      if (seen.has(lower)) throw new AlreadyExistsError(`Email address has been used: ${email}`);
      seen.add(lower);
    }
    const taken = await this.prisma.emailAddress.findFirst({ where: { lowerEmail: { in: [...seen] } } });
    if (taken) throw new AlreadyExistsError(`Email address has been used: ${emails.find((e) => e.toLowerCase() === taken.lowerEmail) ?? taken.email}`);
    await this.prisma.emailAddress.createMany({ data: emails.map((email) => ({ userId: user.id, email, lowerEmail: email.toLowerCase(), isPrimary: false, isActivated: true })) });
    return this.list(user);
  }

  async delete(user: User, emails: string[]): Promise<void> {
    if (!emails.length) return;
    const lower = [...new Set(emails.map((e) => e.toLowerCase()))];
    const rows = await this.prisma.emailAddress.findMany({ where: { userId: user.id, lowerEmail: { in: lower } } });
    const missing = emails.find((e) => !rows.some((r) => r.lowerEmail === e.toLowerCase()));
    if (missing !== undefined) throw new NotFoundError(`Email address does not exist [email: ${missing}]`);
    const primary = rows.find((r) => r.isPrimary);
    // Gitea 1.27.3 answers this with a 500 (ErrPrimaryEmailCannotDelete is not mapped); a 422 says why.
    if (primary) throw new InvalidError(`Primary email address cannot be deleted [email: ${primary.email}]`);
    await this.prisma.emailAddress.deleteMany({ where: { id: { in: rows.map((r) => r.id) } } });
  }
}
