import { ApiErrorSchema } from './common';
import { OrganizationPermissionsSchema, OrganizationSchema, TeamSchema } from './org';
import { CreateRepoOptionSchema, PermissionSchema, RepositorySchema, SearchResultsSchema } from './repo';
import { AccessTokenSchema, CronSchema, EmailSchema, OAuth2ApplicationSchema, PublicKeySchema, UserSchema } from './user';
import { ISSUE_SCHEMAS } from './issue';
import { GIT_DATA_SCHEMAS } from './git-data';
import { BRANCH_SCHEMAS } from './branch';
import { REPO_SETTINGS_SCHEMAS } from './repo-settings';
import { PULL_SCHEMAS } from './pull';

export * from './common';
export * from './user';
export * from './org';
export * from './repo';

/** Every shared schema, added once with app.addSchema so routes use { $ref: 'User#' }. */
export const SHARED_SCHEMAS = [
  ApiErrorSchema,
  UserSchema,
  AccessTokenSchema,
  OAuth2ApplicationSchema,
  EmailSchema,
  PublicKeySchema,
  CronSchema,
  OrganizationSchema,
  OrganizationPermissionsSchema,
  TeamSchema,
  PermissionSchema,
  RepositorySchema,
  CreateRepoOptionSchema,
  SearchResultsSchema,
  ...ISSUE_SCHEMAS,
  ...GIT_DATA_SCHEMAS,
  ...BRANCH_SCHEMAS,
  ...REPO_SETTINGS_SCHEMAS,
  ...PULL_SCHEMAS,
];

export const ref = (id: string) => ({ $ref: `${id}#` });
export const listOf = (id: string) => ({ type: 'array', items: { $ref: `${id}#` } });
