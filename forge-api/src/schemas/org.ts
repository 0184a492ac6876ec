import { bool, int, obj, str, strList } from './common';

/** structs.Organization */
export const OrganizationSchema = obj(
  {
    id: int,
    name: str,
    full_name: str,
    email: str,
    avatar_url: str,
    description: str,
    website: str,
    location: str,
    visibility: str,
    repo_admin_change_team_access: bool,
    username: str,
  },
  [],
  { $id: 'Organization' },
);

/** structs.OrganizationPermissions */
export const OrganizationPermissionsSchema = obj(
  { is_owner: bool, is_admin: bool, can_write: bool, can_read: bool, can_create_repository: bool },
  [],
  { $id: 'OrganizationPermissions' },
);

/** structs.Team. */
export const TeamSchema = obj(
  {
    id: int,
    name: str,
    description: str,
    organization: { anyOf: [{ $ref: 'Organization#' }, { type: 'null' }] },
    includes_all_repositories: bool,
    permission: str,
    units: strList,
    units_map: { type: 'object', additionalProperties: { type: 'string' } },
    can_create_org_repo: bool,
    visibility: str,
  },
  [],
  { $id: 'Team' },
);

