/** structs.Organization. */
import type { User } from '../records';
import { visibilityName } from './common';
import type { ConvertContext } from './context';
import { avatarUrl } from './user';

export function toOrganization(c: ConvertContext, o: User) {
  return {
    id: o.id,
    name: o.name,
    full_name: o.fullName,
    email: o.email,
    avatar_url: avatarUrl(c, o),
    description: o.description,
    website: o.website,
    location: o.location,
    visibility: visibilityName(o.visibility),
    repo_admin_change_team_access: o.repoAdminChangeTeamAccess,
    username: o.name,
  };
}
