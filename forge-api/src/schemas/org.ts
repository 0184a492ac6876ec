import { bool, int, obj, str } from './common';

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
