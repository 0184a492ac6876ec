/**
 * Editing a repository (PATCH /repos/{owner}/{repo}, Gitea's EditRepoOption): name (the folder
 * on disk moves with it), description, website, visibility, template flag, default branch, the
 * units (code, issues or an external tracker, wiki or an external wiki, pull requests and their
 * merge settings, projects, releases, packages, actions), the archived flag and, for a pull
 * mirror, its interval. Only the fields sent change; the order of the steps is Gitea's (name
 * and basics, then units, then archiving, then the mirror), so an error in a later step leaves
 * the earlier ones applied as it does.
 */
import { clearRepoStars } from './stars';
import { promises as fs } from 'node:fs';
import type { ForgeConfig } from '../config';
import type { Prisma } from './database';
import { InvalidError } from './errors';
import * as git from './git';
import { checkRepoName } from './names';
import type { RepoWithOwner } from './repos';
import type { User } from './records';
import { parseGoDuration } from './go-duration';

export interface EditRepoInput {
  name?: string;
  description?: string;
  website?: string;
  private?: boolean;
  template?: boolean;
  has_code?: boolean;
  has_issues?: boolean;
  internal_tracker?: { enable_time_tracker?: boolean; allow_only_contributors_to_track_time?: boolean; enable_issue_dependencies?: boolean };
  external_tracker?: { external_tracker_url?: string; external_tracker_format?: string; external_tracker_style?: string; external_tracker_regexp_pattern?: string };
  has_wiki?: boolean;
  external_wiki?: { external_wiki_url?: string };
  default_branch?: string;
  has_pull_requests?: boolean;
  has_projects?: boolean;
  projects_mode?: string;
  has_releases?: boolean;
  has_packages?: boolean;
  has_actions?: boolean;
  ignore_whitespace_conflicts?: boolean;
  allow_merge_commits?: boolean;
  allow_rebase?: boolean;
  allow_rebase_explicit?: boolean;
  allow_squash_merge?: boolean;
  allow_fast_forward_only_merge?: boolean;
  allow_manual_merge?: boolean;
  autodetect_manual_merge?: boolean;
  allow_merge_update?: boolean;
  allow_rebase_update?: boolean;
  default_delete_branch_after_merge?: boolean;
  default_merge_style?: string;
  default_update_style?: string;
  default_allow_maintainer_edit?: boolean;
  archived?: boolean;
  mirror_interval?: string;
  enable_prune?: boolean;
  mirror_username?: string;
  mirror_password?: string;
  mirror_token?: string;
}

/** Gitea's validation.IsValidURL: an http(s) URL with a host. */
export function isValidUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.host !== '';
  } catch {
    return false;
  }
}

/** Gitea's IsValidExternalTrackerURLFormat: a URL whose {placeholders} are known ones. */
function isValidTrackerFormat(s: string): boolean {
  if (!isValidUrl(s.replace(/\{(user|repo|index|issue_index)\}/g, 'x'))) return false;
  const names = [...s.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]);
  return names.every((n) => ['user', 'repo', 'index', 'issue_index'].includes(n));
}

export class RepoSettingsService {
  constructor(
    private readonly prisma: Prisma,
    private readonly config: ForgeConfig,
    /** After the folder moved: forks borrowing its objects follow (ForkService.relinkForksOf). */
    private readonly folderMoved: (repoId: number) => Promise<void> = async () => undefined,
  ) {}

  private diskPath(owner: string, name: string): string {
    return git.repositoryPath(this.config.reposDir, owner, name);
  }

  async edit(doer: User, repo: RepoWithOwner, o: EditRepoInput): Promise<RepoWithOwner> {
    const data: Record<string, unknown> = {};
    // --- name and basics
    if (o.name !== undefined && o.name !== '' && o.name.toLowerCase() !== repo.lowerName) {
      await this.rename(repo, o.name);
    } else if (o.name && o.name !== repo.name) {
      data.name = o.name; // a change of case only: same folder, same lower name
    }
    if (o.description !== undefined) data.description = o.description;
    if (o.website !== undefined) data.website = o.website;
    if (o.private !== undefined) {
      let priv = o.private;
      // A fork's visibility follows its parent's.
      if (repo.isFork && repo.forkId) {
        const parent = await this.prisma.repository.findUnique({ where: { id: repo.forkId }, select: { isPrivate: true } });
        if (parent) priv = parent.isPrivate;
      }
      data.isPrivate = priv;
    }
    if (o.template !== undefined) data.isTemplate = o.template;
    if (o.default_branch !== undefined && o.default_branch !== repo.defaultBranch) {
      const current = await this.prisma.repository.findUniqueOrThrow({ where: { id: repo.id }, include: { owner: true } });
      const disk = this.diskPath(current.owner.name, current.name);
      if (repo.isEmpty) data.defaultBranch = o.default_branch;
      else if ((await git.listBranches(disk)).includes(o.default_branch)) {
        await git.setDefaultBranch(disk, o.default_branch);
        data.defaultBranch = o.default_branch;
      }
      // A branch that does not exist is ignored, as Gitea does.
    }
    if (Object.keys(data).length) {
      await this.prisma.$transaction(async (tx) => {
        await tx.repository.update({ where: { id: repo.id }, data: { ...data, updatedAt: new Date() } });
        // A repository turning private loses its stars, as Gitea clears them (ClearRepoStars).
        if (data.isPrivate === true && !repo.isPrivate) await clearRepoStars(tx, repo.id);
      });
    }

    // --- units
    const units = this.unitChanges(repo, o);
    if (Object.keys(units).length) await this.prisma.repository.update({ where: { id: repo.id }, data: units });

    // --- archived
    if (o.archived !== undefined) {
      if (repo.isMirror) throw new InvalidError('repo is a mirror, cannot archive/un-archive');
      if (o.archived !== repo.isArchived) {
        await this.prisma.repository.update({ where: { id: repo.id }, data: { isArchived: o.archived, archivedAt: o.archived ? new Date() : null } });
      }
    }

    // --- mirror (ignored for a repository that is not a pull mirror, as Gitea does)
    if (repo.isMirror && (o.mirror_interval !== undefined || o.enable_prune !== undefined)) {
      const m: Record<string, unknown> = {};
      if (o.mirror_interval !== undefined) {
        const ms = parseGoDuration(o.mirror_interval);
        if (ms === null) throw new InvalidError(`time: invalid duration "${o.mirror_interval}"`);
        if (ms !== 0 && ms < this.config.mirrorMinIntervalMs) {
          throw new InvalidError(`invalid mirror interval: ${o.mirror_interval} is below minimum interval: ${formatGoDuration(this.config.mirrorMinIntervalMs)}`);
        }
        m.mirrorInterval = formatGoDuration(ms);
        // Gitea's ScheduleNextUpdate: the next fetch is one new interval from now (never for 0).
        m.mirrorNextUpdateAt = ms > 0 ? new Date(Date.now() + ms) : null;
      }
      if (o.enable_prune !== undefined) m.mirrorEnablePrune = o.enable_prune;
      await this.prisma.repository.update({ where: { id: repo.id }, data: m });
    }
    void doer;
    return this.prisma.repository.findUniqueOrThrow({ where: { id: repo.id }, include: { owner: true } });
  }

  /** Gitea's ChangeRepositoryName: the row and the folder (and the wiki's) move together. */
  private async rename(repo: RepoWithOwner, newName: string): Promise<void> {
    checkRepoName(newName);
    const lower = newName.toLowerCase();
    const taken = await this.prisma.repository.count({ where: { ownerId: repo.ownerId, lowerName: lower } });
    const from = this.diskPath(repo.owner.name, repo.name);
    const to = this.diskPath(repo.owner.name, newName);
    if (taken || (await git.repositoryExists(to))) {
      throw new InvalidError(`repository already exists [uname: ${repo.owner.name}, name: ${newName}]`);
    }
    await git.renameRepository(from, to);
    try {
      await this.prisma.repository.update({ where: { id: repo.id }, data: { name: newName, lowerName: lower, updatedAt: new Date() } });
    } catch (err) {
      await git.renameRepository(to, from).catch(() => undefined);
      throw err;
    }
    const wikiFrom = from.replace(/\.git$/, '.wiki.git');
    const wikiTo = to.replace(/\.git$/, '.wiki.git');
    if (await git.repositoryExists(wikiFrom)) await git.renameRepository(wikiFrom, wikiTo).catch(() => undefined);
    await this.folderMoved(repo.id);
  }

  /** The unit columns an EditRepoOption changes (Gitea's updateRepoUnits). */
  private unitChanges(repo: RepoWithOwner, o: EditRepoInput): Record<string, unknown> {
    const d: Record<string, unknown> = {};
    if (o.has_issues !== undefined) {
      if (o.has_issues && o.external_tracker) {
        const t = o.external_tracker;
        if (!isValidUrl(t.external_tracker_url ?? '')) throw new InvalidError('External tracker URL not valid');
        if (t.external_tracker_format && !isValidTrackerFormat(t.external_tracker_format)) throw new InvalidError('External tracker URL format not valid');
        Object.assign(d, {
          hasIssues: false,
          useExternalTracker: true,
          externalTrackerUrl: t.external_tracker_url ?? '',
          externalTrackerFormat: t.external_tracker_format ?? '',
          externalTrackerStyle: t.external_tracker_style ?? '',
          externalTrackerRegexp: t.external_tracker_regexp_pattern ?? '',
        });
      } else if (o.has_issues) {
        Object.assign(d, { hasIssues: true, useExternalTracker: false });
        if (o.internal_tracker) {
          // Gitea replaces the whole config: a field left out becomes false.
          d.enableTimeTracker = o.internal_tracker.enable_time_tracker ?? false;
          d.allowOnlyContributorsToTrackTime = o.internal_tracker.allow_only_contributors_to_track_time ?? false;
          d.enableDependencies = o.internal_tracker.enable_issue_dependencies ?? false;
        } else if (!repo.hasIssues) {
          Object.assign(d, { enableTimeTracker: true, allowOnlyContributorsToTrackTime: true, enableDependencies: true });
        }
      } else {
        Object.assign(d, { hasIssues: false, useExternalTracker: false });
      }
    }
    if (o.has_wiki !== undefined) {
      if (o.has_wiki && o.external_wiki) {
        if (!isValidUrl(o.external_wiki.external_wiki_url ?? '')) throw new InvalidError('Invalid external wiki URL');
        Object.assign(d, { hasWiki: false, useExternalWiki: true, externalWikiUrl: o.external_wiki.external_wiki_url });
      } else if (o.has_wiki) Object.assign(d, { hasWiki: true, useExternalWiki: false });
      else Object.assign(d, { hasWiki: false, useExternalWiki: false });
    }
    if (o.has_code !== undefined) d.hasCode = o.has_code;
    if (o.has_pull_requests === false) d.hasPullRequests = false;
    else {
      const pr = {
        ignoreWhitespaceConflicts: o.ignore_whitespace_conflicts,
        allowMerge: o.allow_merge_commits,
        allowRebase: o.allow_rebase,
        allowRebaseExplicit: o.allow_rebase_explicit,
        allowSquash: o.allow_squash_merge,
        allowFastForwardOnly: o.allow_fast_forward_only_merge,
        allowManualMerge: o.allow_manual_merge,
        autodetectManualMerge: o.autodetect_manual_merge,
        allowMergeUpdate: o.allow_merge_update,
        allowRebaseUpdate: o.allow_rebase_update,
        defaultDeleteBranchAfterMerge: o.default_delete_branch_after_merge,
        defaultAllowMaintainerEdit: o.default_allow_maintainer_edit,
        defaultMergeStyle: o.default_merge_style,
        defaultUpdateStyle: o.default_update_style,
      };
      const set = Object.fromEntries(Object.entries(pr).filter(([, v]) => v !== undefined));
      if (o.allow_merge_update !== undefined || o.allow_rebase_update !== undefined || o.default_update_style !== undefined) {
        const merged = { allowMergeUpdate: repo.allowMergeUpdate, allowRebaseUpdate: repo.allowRebaseUpdate, defaultUpdateStyle: repo.defaultUpdateStyle, ...set };
        if (merged.defaultUpdateStyle !== 'merge' && merged.defaultUpdateStyle !== 'rebase') throw new InvalidError('default update style must be merge or rebase');
        if (!merged.allowMergeUpdate && !merged.allowRebaseUpdate) throw new InvalidError('at least one pull request branch update style must be enabled');
        if (merged.defaultUpdateStyle === 'merge' ? !merged.allowMergeUpdate : !merged.allowRebaseUpdate) throw new InvalidError('default update style must be enabled');
      }
      Object.assign(d, set);
      if (o.has_pull_requests === true) d.hasPullRequests = true;
    }
    if (o.has_projects !== undefined) {
      d.hasProjects = o.has_projects;
      if (o.has_projects && o.projects_mode) d.projectsMode = o.projects_mode;
    }
    if (o.has_releases !== undefined) d.hasReleases = o.has_releases;
    if (o.has_packages !== undefined) d.hasPackages = o.has_packages;
    if (o.has_actions !== undefined) d.hasActions = o.has_actions;
    return d;
  }
}

/** Go's time.Duration.String() for whole milliseconds ("8h0m0s", "10m0s", "0s"). */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  let s = ms / 1000;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const sec = Number.isInteger(s) ? String(s) : String(Number(s.toFixed(3)));
  if (h) return `${h}h${m}m${sec}s`;
  if (m) return `${m}m${sec}s`;
  return `${sec}s`;
}
