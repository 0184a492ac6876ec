/** structs.Email. */
import type { EmailAddress, User } from '../records';

export function toEmail(e: EmailAddress, user: Pick<User, 'name' | 'id'>) {
  return { email: e.email, verified: e.isActivated, primary: e.isPrimary, user_id: user.id, username: user.name };
}
