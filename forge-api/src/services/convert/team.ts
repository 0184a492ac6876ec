/**
 * structs.Team (Gitea's convert.ToTeams): the organization only where Gitea loads it. Imported
 * directly (not through convert/index.ts), since the team rules it reads import the converter.
 */
import { teamUnitsJson, teamVisibilityName, type TeamWithUnits } from '../teams';

export function toTeam(t: TeamWithUnits, organization: Record<string, unknown> | null = null) {
  const { permission, units, units_map } = teamUnitsJson(t);
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    organization,
    includes_all_repositories: t.includesAllRepositories,
    permission,
    units,
    units_map,
    can_create_org_repo: t.canCreateOrgRepo,
    visibility: teamVisibilityName(t.visibility),
  };
}
