/**
 * Every service of the forge, built once per app (app.services), and the notifier's listeners
 * wired to the services that announce events.
 */
import type { ForgeConfig } from '../config';
import { CrossReferenceService } from './issues/cross-references';
import { ActivityService } from './activities';
import { HotReads } from './fast-reads';
import { AdminService } from './admin';
import { Converter, AccessMode } from './convert';
import { CronService } from './cron';
import { registerCronTasks } from './cron-tasks';
import type { Prisma } from './database';
import { HttpSignatureService } from './httpsig';
import { createTrackerServices, type TrackerServices } from './issues';
import { IssueConverter } from './convert';
import { KeyService } from './keys';
import { GpgKeyService } from './gpg-keys';
import { ActivityListener, NotificationListener, Notifier, WebhookListener, type NotifyErrorLog } from './notify';
import { OrgService } from './orgs';
import { PackageService } from './packages';
import { PermissionService } from './permissions';
import { RepoService } from './repos';
import { BranchProtectionService } from './branch-protection';
import { BranchService } from './branches';
import { TagProtectionService } from './tag-protection';
import { TagService } from './tags';
import { PushRules } from './push-rules';
import { RepoSettingsService } from './repo-settings';
import { UserAvatarService } from './user-avatars';
import { BadgeService } from './badges';
import { RepoAvatarService } from './repo-avatars';
import { ForkService } from './forks';
import { TemplateGenerateService } from './template-generate';
import { DeployKeyService } from './deploy-keys';
import { TransferService } from './transfers';
import { MigrationService } from './migrations';
import { PushMirrorService } from './push-mirrors';
import { MergeUpstreamService } from './merge-upstream';
import { IssueTemplateService } from './issue-templates';
import { TeamService } from './teams';
import { TokenService } from './tokens';
import { OAuth2ApplicationService } from './oauth2/applications';
import { OAuth2Provider } from './oauth2/provider';
import { TopicService } from './topics';
import { TwoFactorService } from './two-factor';
import { WebSessionService } from './web-session';
import { ReleaseService } from './releases';
import { WikiService } from './wiki';
import { PasswordHasher } from './passwords';
import { UserService } from './users';
import { WatchService } from './watches';
import { FollowService } from './follows';
import { BlockService } from './blocks';
import { EmailService } from './emails';
import { UserSettingsService } from './user-settings';
import { OwnerRenameService } from './owner-rename';
import { CollaboratorService } from './collaborators';
import { StarService } from './stars';
import { AssigneeService } from './assignees';
import { RepoTeamService } from './repo-teams';
import { ContentService } from './content/contents';
import { ContentChangeService } from './content/changes';
import { WebhookService } from './webhooks';
import { DeliveryWorker } from './webhooks/deliver';
import { GitReaderPool } from './git/reader';
import { GitTransport } from './git/transport';
import { RepoHousekeeping } from './git/housekeeping';
import { SshAccessService } from './ssh-access';
import { GitDataService } from './git-data';
import { CommitConverter } from './git-data/commits';
import { CommitStatusService } from './git-data/statuses';
import { createPullServices, PullPushListener, type PullServices } from './pulls';

export interface Services {
  convert: Converter;
  permissions: PermissionService;
  users: UserService;
  tokens: TokenService;
  /** OAuth2 applications (the provider's clients). */
  oauth2Apps: OAuth2ApplicationService;
  /** The OAuth2/OpenID provider (created on first use). */
  oauth2: OAuth2Provider;
  twoFactor: TwoFactorService;
  webSessions: WebSessionService;
  orgs: OrgService;
  repos: RepoService;
  /** PATCH of a repository's settings (rename, units, archive). */
  repoSettings: RepoSettingsService;
  repoAvatars: RepoAvatarService;
  userAvatars: UserAvatarService;
  badges: BadgeService;
  forks: ForkService;
  /** Repositories generated from template repositories. */
  templates: TemplateGenerateService;
  deployKeys: DeployKeyService;
  transfers: TransferService;
  migrations: MigrationService;
  /** Push mirrors: remotes that receive every branch and tag (by hand, on an interval, after pushes). */
  pushMirrors: PushMirrorService;
  /** POST /merge-upstream: a fork's branch brought up to date with its parent. */
  mergeUpstream: MergeUpstreamService;
  issueTemplates: IssueTemplateService;
  admin: AdminService;
  /** The activity feeds (rows written by the notifier's feed listener). */
  activities: ActivityService;
  /** Issues, comments, attachments, reactions, dependencies, labels, milestones, notifications. */
  tracker: TrackerServices;
  /** Pull requests and their background mergeability checker. */
  pulls: PullServices;
  teams: TeamService;
  /** Webhook CRUD and the queue of deliveries. */
  webhooks: WebhookService;
  /** Sends queued deliveries in the background. */
  deliveries: DeliveryWorker;
  keys: KeyService;
  /** Users' OpenPGP keys. */
  gpgKeys: GpgKeyService;
  packages: PackageService;
  cron: CronService;
  httpsig: HttpSignatureService;
  watches: WatchService;
  /** Users following users and organizations. */
  follows: FollowService;
  /** Users and organizations blocking users (and the rule every blocked action asks). */
  blocks: BlockService;
  /** A user's own e-mail addresses. */
  emails: EmailService;
  userSettings: UserSettingsService;
  /** Renaming users and organizations, with their repositories' directory. */
  ownerRename: OwnerRenameService;
  collaborators: CollaboratorService;
  /** Stars on repositories (stargazers, starred lists, stars_count). */
  stars: StarService;
  /** Who can be assigned to issues and asked for reviews. */
  assignees: AssigneeService;
  /** The teams of an organization's repository. */
  repoTeams: RepoTeamService;
  notifier: Notifier;
  /** Files of a repository's git tree (contents, raw, archives). */
  contents: ContentService;
  /** Commits made through the contents API (create/update/delete files, diffpatch). */
  contentChanges: ContentChangeService;
  /** Repository topics and the topic search. */
  topics: TopicService;
  /** Long-lived `git cat-file` readers, one per repository (services/git/reader.ts). */
  gitReaders: GitReaderPool;
  /** Refs, commits, trees, blobs, tags, notes, comparisons (Gitea's git data API). */
  gitData: GitDataService;
  /** Commit statuses reported by CI, and the combined status of a commit. */
  commitStatuses: CommitStatusService;
  /** Releases and release assets. */
  releases: ReleaseService;
  /** Branch protection rules, enforced on pushes and on the API's branch changes. */
  branchProtections: BranchProtectionService;
  tagProtections: TagProtectionService;
  branches: BranchService;
  tags: TagService;
  /** What a push must pass before git accepts it (the transports run it from pre-receive). */
  pushRules: PushRules;
  /** git upload-pack/receive-pack/upload-archive with the forge's pre-receive hook, for HTTP and SSH. */
  /** Background repack + commit-graph after pushes (git/housekeeping.ts). */
  gitHousekeeping: RepoHousekeeping;
  gitTransport: GitTransport;
  /** Which key may run which git command over SSH (the built-in SSH server asks it). */
  sshAccess: SshAccessService;
  /** Wiki pages in <repo>.wiki.git. */
  wiki: WikiService;
  /** Prepared read statements of the hot paths, beside Prisma (closed with the app). */
  hot: HotReads;
}

export interface ServiceOptions {
  /** Where listener failures go (the app's logger). */
  logError?: NotifyErrorLog;
}

export function createServices(prisma: Prisma, config: ForgeConfig, options: ServiceOptions = {}): Services {
  const notifier = new Notifier(options.logError ?? ((err, event) => console.error(`notify ${event} failed`, err)));
  const hot = new HotReads(config.databaseUrl, prisma);
  const permissions = new PermissionService(prisma);
  const users = new UserService(prisma, new PasswordHasher(config.passwordHashAlgo));
  const oauth2Apps = new OAuth2ApplicationService(prisma, config.oauth2DefaultApplications);
  const repos = new RepoService(prisma, config, permissions, notifier, hot);
  const convert = new Converter(config);
  const gitReaders = new GitReaderPool();
  const forks = new ForkService(prisma, config, permissions, repos, notifier);
  const activities = new ActivityService(prisma, permissions, convert, new IssueConverter(config, convert), hot);
  const tracker = createTrackerServices(prisma, config, { convert, permissions, repos, notifier, hot });
  const webhooks = new WebhookService(prisma, convert, hot);
  const deliveries = new DeliveryWorker(prisma, config);
  webhooks.onQueued = () => deliveries.kick();
  const tagProtections = new TagProtectionService(prisma);
  const releases = new ReleaseService(prisma, repos, gitReaders, tracker.attachments, notifier, convert, (repoId, tag, userId) => tagProtections.mayControl(repoId, tag, userId));

  notifier.add(new ActivityListener(activities));
  notifier.add(
    new WebhookListener(webhooks, {
      rootUrl: config.rootUrl,
      repo: (id) => repos.byId(id),
      // Webhook payloads show records without a viewer, as Gitea converts them for hooks.
      issueJson: async (issueId, repo) => (await tracker.issues.json(issueId, repo, null)) as unknown as Record<string, unknown>,
      commentJson: async (comment, issue, repo) =>
        (await tracker.comments.toJson([{ ...comment, issue }], { repo, mode: AccessMode.Owner, doer: null, canWrite: true, isAdmin: false }))[0] as unknown as Record<string, unknown>,
      pullJson: async (issueId, repo) => {
        const pr = await prisma.pullRequest.findUnique({ where: { issueId } });
        return pr ? ((await pulls.pulls.json({ repo, mode: AccessMode.Owner, doer: null, canWrite: true, isAdmin: false }, pr)) as unknown as Record<string, unknown>) : null;
      },
      releaseJson: async (releaseId, repo) => {
        const rel = await prisma.release.findUnique({ where: { id: releaseId }, include: { attachments: true } });
        return rel ? ((await releases.json(repo, rel)) as unknown as Record<string, unknown>) : null;
      },
    }),
  );
  notifier.add(new NotificationListener(tracker.notifications));
  // Mentions of issues in titles, bodies, comments and pushed commits: timeline references, closing keywords.
  notifier.add(
    new CrossReferenceService(tracker.context, permissions, tracker.issues, {
      appUrl: config.rootUrl,
      repoByName: (owner, name) => repos.findByOwnerAndName(owner, name),
      repoById: (id) => repos.byId(id),
      diskPath: (r) => repos.diskPath(r.owner.name, r.name),
      repoHtml: (r) => tracker.convert.repoHtml(r),
    }),
  );
  notifier.add(tracker.stopwatches);
  // A deleted tag turns its release back into a draft.
  notifier.add(releases);

  const gitData = new GitDataService(config, gitReaders, repos, new CommitConverter(prisma, convert, config.rootUrl, config.noReplyAddress));
  const branchProtections = new BranchProtectionService(prisma, permissions);
  const pulls = createPullServices(prisma, config, {
    protections: branchProtections,
    convert,
    permissions,
    repos,
    forks,
    tracker,
    gitData,
    logError: (err, what) => notifier.logError(err, what),
    notifier,
    latestStatuses: async (repo, sha) => (await services.commitStatuses.latest(repo, sha, 0, Number.MAX_SAFE_INTEGER)).rows,
  });
  // Pushes to a base or head branch queue its open pull requests for a check; success statuses
  // may complete a scheduled merge.
  notifier.add(new PullPushListener(pulls, (r) => repos.diskPath(r.owner.name, r.name)));
  const branches = new BranchService(prisma, config, permissions, branchProtections, repos);
  const migrations = new MigrationService(prisma, config, permissions, repos);
  const teams = new TeamService(prisma, permissions);
  const wiki = new WikiService(config, repos, gitReaders, notifier);
  const pushMirrors = new PushMirrorService(prisma, config, repos, migrations, (r) => wiki.wikiPath(r), (err, what) => notifier.logError(err, what));
  // Pushes (and forge-made ref changes) sync the push mirrors that sync on commit.
  notifier.add(pushMirrors);
  const pushRules = new PushRules(branchProtections, tagProtections, permissions);
  const gitHousekeeping = new RepoHousekeeping({
    delayMs: config.gitHousekeepingDelayMs,
    onError: (repoPath, err) => notifier.logError(err, `git housekeeping of ${repoPath}`),
  });
  const contents = new ContentService(config, (repo) => repos.diskPath(repo.owner.name, repo.name), gitReaders);
  const services: Services = {
    convert,
    permissions,
    users,
    tokens: new TokenService(prisma),
    oauth2Apps,
    oauth2: new OAuth2Provider(prisma, config, users, oauth2Apps, (u) => convert.avatarUrl(u)),
    // Gitea's TOTP issuer: the site name and its domain.
    twoFactor: new TwoFactorService(prisma, `${config.appName} (${new URL(config.rootUrl).hostname})`),
    webSessions: new WebSessionService(prisma, users, config.rootUrl.startsWith('https:')),
    orgs: new OrgService(prisma, users, permissions),
    repos,
    repoSettings: new RepoSettingsService(prisma, config, (id) => forks.relinkForksOf(id)),
    repoAvatars: new RepoAvatarService(prisma, config),
    userAvatars: new UserAvatarService(prisma, config),
    badges: new BadgeService(prisma),
    forks,
    templates: new TemplateGenerateService(prisma, config, permissions, repos),
    deployKeys: new DeployKeyService(prisma),
    migrations,
    pushMirrors,
    mergeUpstream: new MergeUpstreamService(permissions, repos, pushRules),
    transfers: new TransferService(prisma, permissions, repos, (id) => forks.relinkForksOf(id)),
    issueTemplates: new IssueTemplateService(gitReaders, (o, n) => repos.diskPath(o, n)),
    admin: new AdminService(prisma, config),
    activities,
    tracker,
    pulls,
    teams,
    webhooks,
    deliveries,
    keys: new KeyService(prisma),
    gpgKeys: new GpgKeyService(prisma),
    packages: new PackageService(prisma, config, permissions, convert),
    cron: new CronService(prisma),
    httpsig: new HttpSignatureService(prisma, () => config.sshTrustedUserCaKeys),
    watches: new WatchService(prisma),
    follows: new FollowService(prisma),
    blocks: new BlockService(prisma, (userId, orgId) => permissions.isOrgOwner(userId, orgId)),
    emails: new EmailService(prisma),
    userSettings: new UserSettingsService(prisma),
    ownerRename: new OwnerRenameService(users, config.reposDir),
    collaborators: new CollaboratorService(prisma, permissions),
    stars: new StarService(prisma, permissions),
    assignees: new AssigneeService(prisma, permissions),
    repoTeams: new RepoTeamService(prisma, permissions, teams),
    notifier,
    gitData,
    commitStatuses: new CommitStatusService(prisma, config.rootUrl, convert, gitData, notifier),
    contents,
    contentChanges: new ContentChangeService(contents, (doer, repoId) => repos.refsChanged(doer, repoId)),
    topics: new TopicService(prisma),
    gitReaders,
    releases,
    branchProtections,
    tagProtections,
    branches,
    tags: new TagService(branches, tagProtections, () => `${config.rootUrl}api/v1/`, async (repoId, tag) => (await prisma.release.count({ where: { repoId, lowerTagName: tag.toLowerCase() } })) > 0),
    pushRules,
    gitHousekeeping,
    gitTransport: new GitTransport(gitHousekeeping),
    wiki,
    sshAccess: new SshAccessService(prisma, permissions, users, repos, wiki),
    hot,
  };
  services.contentChanges.branchGuard = (doer, repo, branch, paths) => branchProtections.verifyCommit(doer, repo, branch, paths);
  registerCronTasks(services);
  return services;
}
