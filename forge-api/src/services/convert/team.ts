/**
 * structs.Team (Gitea's convert.ToTeams): the organization only where Gitea loads it. Imported
 * directly (not through convert/index.ts), since the team rules it reads import the converter.
 */
import { modeName, teamVisibilityName, UNIT_KEYS, type TeamWithUnits } from '../teams';

export function toTeam(t: TeamWithUnits, organization: Record<string, unknown> | null = null) {
  const units = [...t.units].sort((a, b) => UNIT_KEYS.indexOf(a.unitType) - UNIT_KEYS.indexOf(b.unitType));
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    organization,
    includes_all_repositories: t.includesAllRepositories,
    permission: modeName(t.authorize),
    units: units.map((u) => u.unitType),
    units_map: Object.fromEntries(units.map((u) => [u.unitType, modeName(u.accessMode)])),
    can_create_org_repo: t.canCreateOrgRepo,
    visibility: teamVisibilityName(t.visibility),
  };
}
