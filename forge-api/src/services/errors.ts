/**
 * The forge's domain errors: what went wrong, in the domain's words. Services, routes and
 * plugins throw these; only the error plugin (plugins/errors.ts) turns a kind into an HTTP
 * status, so a service never decides a status code. Where Gitea answers the same kind with a
 * different status on one route (an e-mail in use is 422 when a user is created but 400 when
 * one is edited), the route says so in its `errorStatus` config.
 *
 * `details` say which record was missing or what collided, for logs and for the CLI; Gitea
 * 1.27's error body carries only `message` and `url`, so they are not sent.
 */
export type ErrorKind =
  /** The thing named does not exist or the caller may not know it exists (404). */
  | 'NotFound'
  /** Credentials are missing or do not verify (401). */
  | 'Unauthenticated'
  /** The caller is known but may not do this (403). */
  | 'PermissionDenied'
  /** A name or key that must be unique is taken (422; 409 for repositories). */
  | 'AlreadyExists'
  /** The request breaks a domain rule (422). */
  | 'Invalid'
  /** The request body or query does not have the declared shape: Gitea's binding errors (422, `[Field]: Rule`). */
  | 'Validation'
  /** The request body or a parameter cannot be parsed at all (400). */
  | 'Malformed'
  /** A password fails the length or complexity policy (400). */
  | 'InvalidPassword'
  /** The request is well formed but its precondition does not hold (412). */
  | 'PreconditionFailed'
  /** An upload exceeds the configured size (413). */
  | 'TooLarge'
  /** The repository is archived and cannot change (423). */
  | 'Archived'
  /** The request lost a race with a concurrent change the database refused to serialise (409). */
  | 'Conflict'
  /** The operation does not apply to this kind of resource (405, e.g. teams of a personal repository). */
  | 'NotAllowed'
  /** Too many failed sign-in attempts: refused until the time given has passed (429, Retry-After). */
  | 'TooManyRequests';

export type ErrorDetails = string[] | null;

export class DomainError extends Error {
  /** Gitea's handler answers this error with its status alone (ctx.Status), no error body. */
  bare = false;

  /** Gitea's handler encodes its error value itself (ctx.JSON(status, err)): this body instead of message and url. */
  body?: Record<string, unknown>;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly details?: ErrorDetails,
  ) {
    super(message);
    this.name = `${kind}Error`;
  }
}

export class NotFoundError extends DomainError {
  constructor(message = 'not found', errors?: ErrorDetails) {
    super('NotFound', message, errors);
  }
}

export class UnauthenticatedError extends DomainError {
  constructor(message = 'token is required', errors?: ErrorDetails) {
    super('Unauthenticated', message, errors);
  }
}

export class PermissionDeniedError extends DomainError {
  constructor(message: string, errors?: ErrorDetails) {
    super('PermissionDenied', message, errors);
  }
}

export class AlreadyExistsError extends DomainError {
  constructor(message: string, errors?: ErrorDetails) {
    super('AlreadyExists', message, errors);
  }
}

export class InvalidError extends DomainError {
  constructor(message: string, errors?: ErrorDetails) {
    super('Invalid', message, errors);
  }
}

export class ValidationError extends DomainError {
  constructor(message: string, errors?: ErrorDetails) {
    super('Validation', message, errors);
  }
}

export class MalformedError extends DomainError {
  constructor(message: string) {
    super('Malformed', message);
  }
}

export class InvalidPasswordError extends DomainError {
  constructor(message: string) {
    super('InvalidPassword', message);
  }
}

export class PreconditionFailedError extends DomainError {
  constructor(message: string) {
    super('PreconditionFailed', message);
  }
}

export class TooLargeError extends DomainError {
  constructor(message: string) {
    super('TooLarge', message);
  }
}

export class ArchivedError extends DomainError {
  constructor(message = 'repo is archived') {
    super('Archived', message);
  }
}

export class ConflictError extends DomainError {
  constructor(message: string) {
    super('Conflict', message);
  }
}

export class NotAllowedError extends DomainError {
  constructor(message: string) {
    super('NotAllowed', message);
  }
}

export class TooManyRequestsError extends DomainError {
  constructor(
    message: string,
    /** Seconds until an attempt is accepted again (the Retry-After header). */
    readonly retryAfterSeconds: number,
  ) {
    super('TooManyRequests', message);
  }
}

/** `err`, answered with its status alone (see DomainError.bare). */
export function withoutBody<T extends DomainError>(err: T): T {
  err.bare = true;
  return err;
}

export function isNotFound(err: unknown): err is NotFoundError {
  return err instanceof DomainError && err.kind === 'NotFound';
}
