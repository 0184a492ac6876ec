/**
 * Branch protection rules (Gitea's protected_branch): CRUD with Gitea's validation, the rule a
 * branch falls under, and the checks a push or a branch change must pass. Rule names with glob
 * characters are globs over branch names (`*` stops at `/`, `**` does not), compiled by the
 * linear matcher of services/glob.ts, never as a RegExp.
 *
 * Everything but the name and priority is one JSON document per rule (`settings`): the rule is
 * always read and written whole and never queried by field, as Gitea keeps its lists in JSON.
 */
import type { Prisma } from './database';
import { AccessMode } from './convert';
import { InvalidError, MalformedError, NotFoundError, PermissionDeniedError } from './errors';
import { compileGlob, type Glob } from './glob';
import type { PermissionService } from './permissions';
import type { RepoWithOwner } from './repos';
import type { User } from './records';
import { USER_TYPE_ORGANIZATION } from './permissions';

export interface ProtectionSettings {
  enable_push: boolean;
  enable_push_whitelist: boolean;
  push_whitelist_user_ids: number[];
  push_whitelist_team_ids: number[];
  push_whitelist_deploy_keys: boolean;
  enable_force_push: boolean;
  enable_force_push_allowlist: boolean;
  force_push_allowlist_user_ids: number[];
  force_push_allowlist_team_ids: number[];
  force_push_allowlist_deploy_keys: boolean;
  enable_merge_whitelist: boolean;
  merge_whitelist_user_ids: number[];
  merge_whitelist_team_ids: number[];
  enable_bypass_allowlist: boolean;
  bypass_allowlist_user_ids: number[];
  bypass_allowlist_team_ids: number[];
  enable_status_check: boolean;
  /** null when never set (Gitea answers null then) */
  status_check_contexts: string[] | null;
  required_approvals: number;
  enable_approvals_whitelist: boolean;
  approvals_whitelist_user_ids: number[];
  approvals_whitelist_team_ids: number[];
  block_on_rejected_reviews: boolean;
  block_on_official_review_requests: boolean;
  block_on_outdated_branch: boolean;
  dismiss_stale_approvals: boolean;
  ignore_stale_approvals: boolean;
  require_signed_commits: boolean;
  protected_file_patterns: string;
  unprotected_file_patterns: string;
  block_admin_merge_override: boolean;
}

const DEFAULTS: ProtectionSettings = {
  enable_push: false,
  enable_push_whitelist: false,
  push_whitelist_user_ids: [],
  push_whitelist_team_ids: [],
  push_whitelist_deploy_keys: false,
  enable_force_push: false,
  enable_force_push_allowlist: false,
  force_push_allowlist_user_ids: [],
  force_push_allowlist_team_ids: [],
  force_push_allowlist_deploy_keys: false,
  enable_merge_whitelist: false,
  merge_whitelist_user_ids: [],
  merge_whitelist_team_ids: [],
  enable_bypass_allowlist: false,
  bypass_allowlist_user_ids: [],
  bypass_allowlist_team_ids: [],
  enable_status_check: false,
  status_check_contexts: null,
  required_approvals: 0,
  enable_approvals_whitelist: false,
  approvals_whitelist_user_ids: [],
  approvals_whitelist_team_ids: [],
  block_on_rejected_reviews: false,
  block_on_official_review_requests: false,
  block_on_outdated_branch: false,
  dismiss_stale_approvals: false,
  ignore_stale_approvals: false,
  require_signed_commits: false,
  protected_file_patterns: '',
  unprotected_file_patterns: '',
  block_admin_merge_override: false,
};

export interface ProtectionRule {
  id: number;
  repoId: number;
  ruleName: string;
  priority: number;
  settings: ProtectionSettings;
  createdAt: Date;
  updatedAt: Date;
}

/** The API's option bodies (create: all optional but a name; edit: only what is set changes). */
export interface ProtectionInput {
  branch_name?: string;
  rule_name?: string;
  priority?: number;
  enable_push?: boolean;
  enable_push_whitelist?: boolean;
  push_whitelist_usernames?: string[] | null;
  push_whitelist_teams?: string[] | null;
  push_whitelist_deploy_keys?: boolean;
  enable_force_push?: boolean;
  enable_force_push_allowlist?: boolean;
  force_push_allowlist_usernames?: string[] | null;
  force_push_allowlist_teams?: string[] | null;
  force_push_allowlist_deploy_keys?: boolean;
  enable_merge_whitelist?: boolean;
  merge_whitelist_usernames?: string[] | null;
  merge_whitelist_teams?: string[] | null;
  enable_bypass_allowlist?: boolean;
  bypass_allowlist_usernames?: string[] | null;
  bypass_allowlist_teams?: string[] | null;
  enable_status_check?: boolean;
  status_check_contexts?: string[] | null;
  required_approvals?: number;
  enable_approvals_whitelist?: boolean;
  approvals_whitelist_username?: string[] | null;
  approvals_whitelist_teams?: string[] | null;
  block_on_rejected_reviews?: boolean;
  block_on_official_review_requests?: boolean;
  block_on_outdated_branch?: boolean;
  dismiss_stale_approvals?: boolean;
  ignore_stale_approvals?: boolean;
  require_signed_commits?: boolean;
  protected_file_patterns?: string;
  unprotected_file_patterns?: string;
  block_admin_merge_override?: boolean;
}

/** Gitea's glob special bytes: a rule name with one of them is a pattern. */
export function isRulePattern(ruleName: string): boolean {
  return /[*?\\[\]{}]/.test(ruleName);
}

/** A rule's matcher: plain names compare case-insensitively (as Gitea), patterns as globs over '/'. */
export function ruleMatcher(ruleName: string): (branch: string) => boolean {
  if (!isRulePattern(ruleName)) {
    const lower = ruleName.toLowerCase();
    return (branch) => branch.toLowerCase() === lower;
  }
  let glob: Glob;
  try {
    glob = compileGlob(ruleName, '/');
  } catch {
    // Gitea falls back to the name taken literally when the glob does not compile.
    return (branch) => branch === ruleName;
  }
  return (branch) => glob.match(branch);
}

/** Gitea's order: priority, then plain names before patterns, then older rules first. */
export function sortRules<T extends { priority: number; ruleName: string; createdAt: Date; id: number }>(rules: T[]): T[] {
  return [...rules].sort(
    (a, b) =>
      a.priority - b.priority ||
      Number(isRulePattern(a.ruleName)) - Number(isRulePattern(b.ruleName)) ||
      a.createdAt.getTime() - b.createdAt.getTime() ||
      a.id - b.id,
  );
}

/** The first rule (in Gitea's order) that protects this branch. */
export function firstMatch<T extends ProtectionRule>(sorted: T[], branch: string): T | null {
  for (const rule of sorted) if (ruleMatcher(rule.ruleName)(branch)) return rule;
  return null;
}

type Row = { id: number; repoId: number; ruleName: string; priority: number; settings: string; createdAt: Date; updatedAt: Date };

function fromRow(row: Row): ProtectionRule {
  let parsed: Partial<ProtectionSettings> = {};
  try {
    parsed = JSON.parse(row.settings) as Partial<ProtectionSettings>;
  } catch {
    parsed = {};
  }
  return { id: Number(row.id), repoId: Number(row.repoId), ruleName: row.ruleName, priority: Number(row.priority), settings: { ...DEFAULTS, ...parsed }, createdAt: row.createdAt, updatedAt: row.updatedAt };
}

export interface RefUpdate {
  ref: string;
  oldOid: string;
  newOid: string;
  /** The new commit does not contain the old one (only meaningful when both exist). */
  force: boolean;
}

const ZERO = /^0+$/;

export class BranchProtectionService {
  constructor(
    private readonly prisma: Prisma,
    private readonly permissions: PermissionService,
  ) {}

  async list(repoId: number): Promise<ProtectionRule[]> {
    const rows = await this.prisma.protectedBranch.findMany({ where: { repoId }, orderBy: { createdAt: 'asc' } });
    return sortRules(rows.map(fromRow));
  }

  async byName(repoId: number, ruleName: string): Promise<ProtectionRule | null> {
    const row = await this.prisma.protectedBranch.findUnique({ where: { repoId_ruleName: { repoId, ruleName } } });
    return row ? fromRow(row) : null;
  }

  async get(repoId: number, ruleName: string): Promise<ProtectionRule> {
    const rule = await this.byName(repoId, ruleName);
    if (!rule) throw new NotFoundError('not found');
    return rule;
  }

  /** The rule protecting this branch, or null. */
  async ruleFor(repoId: number, branch: string): Promise<ProtectionRule | null> {
    return firstMatch(await this.list(repoId), branch);
  }

  private async userIds(names: string[] | null | undefined): Promise<number[]> {
    if (!names?.length) return [];
    const ids: number[] = [];
    for (const name of names) {
      const u = await this.prisma.user.findFirst({ where: { lowerName: name.toLowerCase() }, select: { id: true } });
      if (!u) throw new InvalidError(`user does not exist [uid: 0, name: ${name}]`);
      ids.push(Number(u.id));
    }
    return ids;
  }

  private async teamIds(repo: RepoWithOwner, names: string[] | null | undefined): Promise<number[]> {
    if (!names?.length || repo.owner.type !== USER_TYPE_ORGANIZATION) return [];
    const ids: number[] = [];
    for (const name of names) {
      const t = await this.prisma.team.findFirst({ where: { orgId: repo.ownerId, lowerName: name.toLowerCase() }, select: { id: true } });
      if (!t) throw new InvalidError(`team does not exist [org_id ${repo.ownerId}, team_id 0, name: ${name}]`);
      ids.push(Number(t.id));
    }
    return ids;
  }

  /** Gitea keeps only allow-listed users who can write code (and teams with access to the repository). */
  private async writers(repo: RepoWithOwner, ids: number[]): Promise<number[]> {
    const kept: number[] = [];
    for (const id of ids) {
      const user = await this.prisma.user.findUnique({ where: { id } });
      if (user && (await this.permissions.repoAccessMode(user as User, repo, 'repo.code')) >= AccessMode.Write) kept.push(id);
    }
    return kept;
  }

  private async readers(repo: RepoWithOwner, ids: number[]): Promise<number[]> {
    const kept: number[] = [];
    for (const id of ids) {
      const user = await this.prisma.user.findUnique({ where: { id } });
      if (user && (await this.permissions.repoAccessMode(user as User, repo, 'repo.pulls')) >= AccessMode.Read) kept.push(id);
    }
    return kept;
  }

  private async teamsWithAccess(repo: RepoWithOwner, ids: number[]): Promise<number[]> {
    if (!ids.length) return [];
    const teams = await this.prisma.team.findMany({
      where: { id: { in: ids }, orgId: repo.ownerId, OR: [{ includesAllRepositories: true }, { repos: { some: { repoId: repo.id } } }] },
      select: { id: true },
    });
    const ok = new Set(teams.map((t) => Number(t.id)));
    return ids.filter((id) => ok.has(id));
  }

  /** Applies an option body to settings, as Gitea's create (all fields) or edit (set fields only). */
  private async apply(repo: RepoWithOwner, base: ProtectionSettings, input: ProtectionInput, creating: boolean): Promise<ProtectionSettings> {
    const s: ProtectionSettings = { ...base };
    const set = <K extends keyof ProtectionInput>(k: K) => input[k] !== undefined && input[k] !== null;
    // Push and force push: a dependent flag is on only when its parent switch is (Gitea's rules).
    if (creating) {
      s.enable_push = Boolean(input.enable_push);
      s.enable_push_whitelist = s.enable_push && Boolean(input.enable_push_whitelist);
      s.push_whitelist_deploy_keys = s.enable_push_whitelist && Boolean(input.push_whitelist_deploy_keys);
      s.enable_force_push = s.enable_push && Boolean(input.enable_force_push);
      s.enable_force_push_allowlist = s.enable_force_push && Boolean(input.enable_force_push_allowlist);
      s.force_push_allowlist_deploy_keys = s.enable_force_push_allowlist && Boolean(input.force_push_allowlist_deploy_keys);
    } else {
      if (set('enable_push')) {
        s.enable_push = Boolean(input.enable_push);
        if (!s.enable_push) {
          s.enable_push_whitelist = false;
          s.push_whitelist_deploy_keys = false;
        } else if (set('enable_push_whitelist')) {
          s.enable_push_whitelist = Boolean(input.enable_push_whitelist);
          if (!s.enable_push_whitelist) s.push_whitelist_deploy_keys = false;
          else if (set('push_whitelist_deploy_keys')) s.push_whitelist_deploy_keys = Boolean(input.push_whitelist_deploy_keys);
        }
      }
      if (set('enable_force_push')) {
        s.enable_force_push = Boolean(input.enable_force_push);
        if (!s.enable_force_push) {
          s.enable_force_push_allowlist = false;
          s.force_push_allowlist_deploy_keys = false;
        } else if (set('enable_force_push_allowlist')) {
          s.enable_force_push_allowlist = Boolean(input.enable_force_push_allowlist);
          if (!s.enable_force_push_allowlist) s.force_push_allowlist_deploy_keys = false;
          else if (set('force_push_allowlist_deploy_keys')) s.force_push_allowlist_deploy_keys = Boolean(input.force_push_allowlist_deploy_keys);
        }
      }
    }
    const flags = [
      'enable_merge_whitelist',
      'enable_bypass_allowlist',
      'enable_status_check',
      'enable_approvals_whitelist',
      'block_on_rejected_reviews',
      'block_on_official_review_requests',
      'block_on_outdated_branch',
      'dismiss_stale_approvals',
      'ignore_stale_approvals',
      'require_signed_commits',
      'block_admin_merge_override',
    ] as const;
    for (const f of flags) if (creating || set(f)) s[f] = Boolean(input[f]);
    for (const f of ['protected_file_patterns', 'unprotected_file_patterns'] as const) if (creating || set(f)) s[f] = input[f] ?? '';
    if (creating || set('status_check_contexts')) s.status_check_contexts = input.status_check_contexts ?? null;
    if (set('required_approvals') && (input.required_approvals as number) >= 0) s.required_approvals = input.required_approvals as number;
    else if (creating) s.required_approvals = 0;

    const lists: [keyof ProtectionInput, keyof ProtectionInput, keyof ProtectionSettings, keyof ProtectionSettings, 'write' | 'read'][] = [
      ['push_whitelist_usernames', 'push_whitelist_teams', 'push_whitelist_user_ids', 'push_whitelist_team_ids', 'write'],
      ['force_push_allowlist_usernames', 'force_push_allowlist_teams', 'force_push_allowlist_user_ids', 'force_push_allowlist_team_ids', 'write'],
      ['merge_whitelist_usernames', 'merge_whitelist_teams', 'merge_whitelist_user_ids', 'merge_whitelist_team_ids', 'write'],
      ['approvals_whitelist_username', 'approvals_whitelist_teams', 'approvals_whitelist_user_ids', 'approvals_whitelist_team_ids', 'read'],
      ['bypass_allowlist_usernames', 'bypass_allowlist_teams', 'bypass_allowlist_user_ids', 'bypass_allowlist_team_ids', 'write'],
    ];
    for (const [usersKey, teamsKey, userIdsKey, teamIdsKey, need] of lists) {
      // Gitea reads the bypass lists only when the bypass allow-list is enabled.
      if (usersKey === 'bypass_allowlist_usernames' && creating && !input.enable_bypass_allowlist) continue;
      if (creating || set(usersKey)) {
        const ids = await this.userIds(input[usersKey] as string[] | undefined);
        (s[userIdsKey] as number[]) = need === 'write' ? await this.writers(repo, ids) : await this.readers(repo, ids);
      }
      if (creating || set(teamsKey)) (s[teamIdsKey] as number[]) = await this.teamsWithAccess(repo, await this.teamIds(repo, input[teamsKey] as string[] | undefined));
    }
    for (const pattern of [s.protected_file_patterns, s.unprotected_file_patterns]) for (const p of pattern.split(';')) if (p.trim()) compileOrNull(p.trim());
    return s;
  }

  async create(repo: RepoWithOwner, input: ProtectionInput): Promise<ProtectionRule> {
    const ruleName = input.rule_name || input.branch_name || '';
    if (!ruleName) throw new MalformedError('both rule_name and branch_name are empty');
    if (await this.byName(repo.id, ruleName)) throw new PermissionDeniedError('Branch protection already exist');
    const settings = await this.apply(repo, DEFAULTS, input, true);
    let priority = input.priority ?? 0;
    if (!priority) {
      const max = await this.prisma.protectedBranch.aggregate({ where: { repoId: repo.id }, _max: { priority: true } });
      priority = Number(max._max.priority ?? 0) + 1;
    }
    const row = await this.prisma.protectedBranch.create({ data: { repoId: repo.id, ruleName, priority, settings: JSON.stringify(settings) } });
    return fromRow(row);
  }

  async edit(repo: RepoWithOwner, ruleName: string, input: ProtectionInput): Promise<ProtectionRule> {
    const rule = await this.get(repo.id, ruleName);
    const settings = await this.apply(repo, rule.settings, input, false);
    const row = await this.prisma.protectedBranch.update({
      where: { id: rule.id },
      data: { settings: JSON.stringify(settings), ...(input.priority !== undefined && input.priority !== null ? { priority: input.priority } : {}), updatedAt: new Date() },
    });
    return fromRow(row);
  }

  async delete(repo: RepoWithOwner, ruleName: string): Promise<void> {
    const rule = await this.get(repo.id, ruleName);
    await this.prisma.protectedBranch.delete({ where: { id: rule.id } });
  }

  /** Gitea's priority update: the ids in order get priorities 1, 2, 3, ...; other repositories' ids are ignored. */
  async reorder(repo: RepoWithOwner, ids: number[]): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      let priority = 1;
      for (const id of ids) {
        await tx.protectedBranch.updateMany({ where: { id, repoId: repo.id }, data: { priority } });
        priority++;
      }
    });
  }

  /** A rule renamed with its branch (Gitea renames a rule whose name is exactly the old branch). */
  async renameRule(repoId: number, from: string, to: string): Promise<void> {
    await this.prisma.protectedBranch.updateMany({ where: { repoId, ruleName: from }, data: { ruleName: to, updatedAt: new Date() } });
  }

  private async names(userIds: number[], teamIds: number[]): Promise<{ users: Map<number, string>; teams: Map<number, string> }> {
    const users = new Map<number, string>();
    const teams = new Map<number, string>();
    if (userIds.length) for (const u of await this.prisma.user.findMany({ where: { id: { in: userIds } }, select: { id: true, name: true } })) users.set(Number(u.id), u.name);
    if (teamIds.length) for (const t of await this.prisma.team.findMany({ where: { id: { in: teamIds } }, select: { id: true, name: true } })) teams.set(Number(t.id), t.name);
    return { users, teams };
  }

  /** Gitea's BranchProtection JSON (allow-lists by name; branch_name only for a plain rule). */
  async json(rule: ProtectionRule): Promise<Record<string, unknown>> {
    const s = rule.settings;
    const userLists = [s.push_whitelist_user_ids, s.force_push_allowlist_user_ids, s.merge_whitelist_user_ids, s.approvals_whitelist_user_ids, s.bypass_allowlist_user_ids];
    const teamLists = [s.push_whitelist_team_ids, s.force_push_allowlist_team_ids, s.merge_whitelist_team_ids, s.approvals_whitelist_team_ids, s.bypass_allowlist_team_ids];
    const { users, teams } = await this.names([...new Set(userLists.flat())], [...new Set(teamLists.flat())]);
    const u = (ids: number[]) => ids.map((id) => users.get(id)).filter((n): n is string => Boolean(n));
    const t = (ids: number[]) => ids.map((id) => teams.get(id)).filter((n): n is string => Boolean(n));
    return {
      branch_name: isRulePattern(rule.ruleName) ? '' : rule.ruleName,
      rule_name: rule.ruleName,
      priority: rule.priority,
      enable_push: s.enable_push,
      enable_push_whitelist: s.enable_push_whitelist,
      push_whitelist_usernames: u(s.push_whitelist_user_ids),
      push_whitelist_teams: t(s.push_whitelist_team_ids),
      push_whitelist_deploy_keys: s.push_whitelist_deploy_keys,
      enable_force_push: s.enable_force_push,
      enable_force_push_allowlist: s.enable_force_push_allowlist,
      force_push_allowlist_usernames: u(s.force_push_allowlist_user_ids),
      force_push_allowlist_teams: t(s.force_push_allowlist_team_ids),
      force_push_allowlist_deploy_keys: s.force_push_allowlist_deploy_keys,
      enable_merge_whitelist: s.enable_merge_whitelist,
      merge_whitelist_usernames: u(s.merge_whitelist_user_ids),
      merge_whitelist_teams: t(s.merge_whitelist_team_ids),
      enable_bypass_allowlist: s.enable_bypass_allowlist,
      bypass_allowlist_usernames: u(s.bypass_allowlist_user_ids),
      bypass_allowlist_teams: t(s.bypass_allowlist_team_ids),
      enable_status_check: s.enable_status_check,
      status_check_contexts: s.status_check_contexts,
      required_approvals: s.required_approvals,
      enable_approvals_whitelist: s.enable_approvals_whitelist,
      approvals_whitelist_username: u(s.approvals_whitelist_user_ids),
      approvals_whitelist_teams: t(s.approvals_whitelist_team_ids),
      block_on_rejected_reviews: s.block_on_rejected_reviews,
      block_on_official_review_requests: s.block_on_official_review_requests,
      block_on_outdated_branch: s.block_on_outdated_branch,
      dismiss_stale_approvals: s.dismiss_stale_approvals,
      ignore_stale_approvals: s.ignore_stale_approvals,
      require_signed_commits: s.require_signed_commits,
      protected_file_patterns: s.protected_file_patterns,
      unprotected_file_patterns: s.unprotected_file_patterns,
      block_admin_merge_override: s.block_admin_merge_override,
      created_at: rule.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      updated_at: rule.updatedAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
  }

  private async inTeams(userId: number, teamIds: number[]): Promise<boolean> {
    if (!teamIds.length) return false;
    return (await this.prisma.teamUser.count({ where: { userId, teamId: { in: teamIds } } })) > 0;
  }

  private async canWriteCode(user: User, repo: RepoWithOwner): Promise<boolean> {
    return (await this.permissions.repoAccessMode(user, repo, 'repo.code')) >= AccessMode.Write;
  }

  /** Gitea's CanUserPush. */
  async canUserPush(rule: ProtectionRule, user: User, repo: RepoWithOwner): Promise<boolean> {
    const s = rule.settings;
    if (!s.enable_push) return false;
    if (!s.enable_push_whitelist) return this.canWriteCode(user, repo);
    if (s.push_whitelist_user_ids.includes(Number(user.id))) return true;
    return this.inTeams(Number(user.id), s.push_whitelist_team_ids);
  }

  /** Gitea's CanUserForcePush. */
  async canUserForcePush(rule: ProtectionRule, user: User, repo: RepoWithOwner): Promise<boolean> {
    const s = rule.settings;
    if (!s.enable_force_push) return false;
    if (!s.enable_force_push_allowlist) return this.canUserPush(rule, user, repo);
    if (s.force_push_allowlist_user_ids.includes(Number(user.id))) return this.canUserPush(rule, user, repo);
    return (await this.inTeams(Number(user.id), s.force_push_allowlist_team_ids)) && this.canUserPush(rule, user, repo);
  }

  /** Gitea's IsUserOfficialReviewer: whose approvals count towards the rule's required approvals. */
  async isOfficialReviewer(rule: ProtectionRule, user: User, repo: RepoWithOwner): Promise<boolean> {
    const s = rule.settings;
    if (!s.enable_approvals_whitelist) return this.canWriteCode(user, repo);
    if (s.approvals_whitelist_user_ids.includes(Number(user.id))) return true;
    return this.inTeams(Number(user.id), s.approvals_whitelist_team_ids);
  }

  /** Gitea's IsUserMergeWhitelisted. */
  async canUserMerge(rule: ProtectionRule, user: User, repo: RepoWithOwner): Promise<boolean> {
    const s = rule.settings;
    if (!s.enable_merge_whitelist) return this.canWriteCode(user, repo);
    if (s.merge_whitelist_user_ids.includes(Number(user.id))) return true;
    return this.inTeams(Number(user.id), s.merge_whitelist_team_ids);
  }

  /**
   * Gitea's CanBypassBranchProtection: who may merge with force_merge although the rule's
   * checks fail: a repository administrator unless the rule blocks that, or someone on the
   * rule's bypass allow-list.
   */
  async canBypass(rule: ProtectionRule, user: User, isRepoAdmin: boolean): Promise<boolean> {
    const s = rule.settings;
    if (isRepoAdmin && !s.block_admin_merge_override) return true;
    if (!s.enable_bypass_allowlist) return false;
    if (s.bypass_allowlist_user_ids.includes(Number(user.id))) return true;
    return this.inTeams(Number(user.id), s.bypass_allowlist_team_ids);
  }

  /**
   * Gitea's VerifyBranchProtection for a commit the forge writes itself (/contents, /diffpatch):
   * throws 403 "user cannot commit to repo" when the doer may not push to the branch (unless
   * every path is an unprotected file), or "path is protected" for a protected file.
   */
  async verifyCommit(doer: User, repo: RepoWithOwner, branch: string, treePaths: string[]): Promise<void> {
    const rule = await this.ruleFor(repo.id, branch);
    if (!rule) return;
    const unprotected = filePatterns(rule.settings.unprotected_file_patterns);
    const protectedGlobs = filePatterns(rule.settings.protected_file_patterns);
    const canPush = await this.canUserPush(rule, doer, repo);
    const cannot = new PermissionDeniedError(`user cannot commit to repo [user: ${doer.lowerName}]`);
    if (!treePaths.length && !canPush) throw cannot;
    for (const p of treePaths) {
      const lower = p.trim().toLowerCase();
      if (!canPush && !unprotected.some((g) => g.match(lower))) throw cannot;
      if (protectedGlobs.some((g) => g.match(lower))) throw new PermissionDeniedError(`path is protected and can not be changed [path: ${p}]`);
    }
    // Signed commits cannot be made here (no signing key is configured), as Gitea without one.
    if (rule.settings.require_signed_commits) throw cannot;
  }

  /**
   * Gitea's pre-receive checks for the branches of a push: the message the git client must see
   * for the first refused update, or null when every update may go in. `changedFiles` gives the
   * paths an update changes, for protected file patterns (asked only when a rule has them).
   * `deployKey`: the push comes with a deploy key (the rules' deploy-key switches decide).
   */
  async checkBranchUpdates(
    repo: RepoWithOwner,
    pusher: User | null,
    updates: RefUpdate[],
    changedFiles?: (u: RefUpdate) => Promise<string[]>,
    opts: { deployKey?: boolean } = {},
  ): Promise<string | null> {
    const branchUpdates = updates.filter((u) => u.ref.startsWith('refs/heads/'));
    if (!branchUpdates.length) return null;
    const rules = await this.list(repo.id);
    for (const u of branchUpdates) {
      const branch = u.ref.slice('refs/heads/'.length);
      const deleting = ZERO.test(u.newOid);
      if (deleting && branch === repo.defaultBranch) return `branch ${branch} is the default branch and cannot be deleted`;
      const rule = firstMatch(rules, branch);
      if (!rule) continue;
      if (deleting) return `branch ${branch} is protected from deletion`;
      const isForce = !ZERO.test(u.oldOid) && u.force;
      if (isForce && !rule.settings.enable_force_push) return `branch ${branch} is protected from force push`;
      let protectedFile: string | null = null;
      const globs = filePatterns(rule.settings.protected_file_patterns);
      if (globs.length && changedFiles) {
        for (const file of await changedFiles(u)) {
          const lower = file.trim().toLowerCase();
          if (globs.some((g) => g.match(lower))) {
            protectedFile = file;
            break;
          }
        }
      }
      let canPush = false;
      if (opts.deployKey) {
        // A deploy key has no user: it passes where the rule lets any writer push, or lets deploy keys in.
        const s = rule.settings;
        canPush = !protectedFile && s.enable_push && (isForce ? !s.enable_force_push_allowlist || s.force_push_allowlist_deploy_keys : !s.enable_push_whitelist || s.push_whitelist_deploy_keys);
      } else if (pusher && !protectedFile) canPush = isForce ? await this.canUserForcePush(rule, pusher, repo) : await this.canUserPush(rule, pusher, repo);
      if (canPush) continue;
      if (protectedFile) return `branch ${branch} is protected from changing file ${protectedFile}`;
      const unprotected = filePatterns(rule.settings.unprotected_file_patterns);
      if (unprotected.length && changedFiles) {
        const files = await changedFiles(u);
        if (files.length && files.every((f) => unprotected.some((g) => g.match(f.trim().toLowerCase())))) continue;
      }
      return isForce ? `Not allowed to force-push to protected branch ${branch}` : `Not allowed to push to protected branch ${branch}`;
    }
    return null;
  }
}

function compileOrNull(pattern: string): Glob | null {
  try {
    return compileGlob(pattern, './');
  } catch {
    return null;
  }
}

/** Gitea's file patterns: `;`-separated globs, lower-cased, separators '.' and '/'; bad ones skipped. */
export function filePatterns(patterns: string): Glob[] {
  const out: Glob[] = [];
  for (const expr of patterns.toLowerCase().split(';')) {
    const e = expr.trim();
    if (!e) continue;
    const g = compileOrNull(e);
    if (g) out.push(g);
  }
  return out;
}
