/**
 * What a database error means for the client, decided in one place for both databases.
 *
 * Races reach the database as errors, not as a 500: two requests deleting one row (the loser's
 * DELETE or UPDATE finds nothing: P2025), a row removed while another request points a new row
 * at it (foreign key: P2003), two requests creating one unique name (P2002), two transactions
 * that PostgreSQL cannot serialise (P2034). Services check first and answer Gitea's message
 * where they know it; whatever slips through a check-then-act window lands here.
 */
import { AlreadyExistsError, ConflictError, DomainError, NotFoundError } from './errors';

interface DbError {
  code?: string;
  name?: string;
  meta?: Record<string, unknown>;
  message?: string;
}

export function dbErrorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as DbError).code;
  return typeof code === 'string' && /^P\d{4}$/.test(code) ? code : undefined;
}

/** A unique constraint refused the row (the other request won the race). */
export function isUniqueViolation(err: unknown): boolean {
  return dbErrorCode(err) === 'P2002';
}

/** The row an update or delete was aimed at is gone. */
export function isRecordNotFound(err: unknown): boolean {
  return dbErrorCode(err) === 'P2025';
}

/** The client error a database error stands for, or null when it is a real server fault. */
export function clientErrorOf(err: unknown): DomainError | null {
  switch (dbErrorCode(err)) {
    case 'P2025': // record to update/delete does not exist
    case 'P2003': // the row it refers to was deleted meanwhile
    case 'P2015': // a related record could not be found
    case 'P2018': // required connected records were not found
      return new NotFoundError('not found');
    case 'P2002':
      return new AlreadyExistsError('the record already exists');
    case 'P2034': // write conflict or deadlock: the other request went first
      return new ConflictError('the request conflicted with a concurrent change, please retry');
    default:
      return null;
  }
}
