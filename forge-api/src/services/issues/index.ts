/** The issue tracker's services, built once per app (app.services.tracker). */
import type { ForgeConfig } from '../../config';
import type { Converter } from '../convert';
import type { Prisma } from '../database';
import type { HotReads } from '../fast-reads';
import type { PermissionService } from '../permissions';
import type { RepoService } from '../repos';
import { ActivityService } from '../activities';
import type { Notifier } from '../notify';
import { IssueAssignmentService } from './assignments';
import { AttachmentService } from './attachments';
import { CommentService } from './comments';
import { TrackerContext } from './context';
import { IssueConverter } from '../convert';
import { DependencyService } from './dependencies';
import { IssueService } from './issues';
import { IssueLockService } from './locks';
import { IssueSearchService } from './search';
import { IssueSubscriptionService } from './subscriptions';
import { LabelService } from './labels';
import { MilestoneService } from './milestones';
import { NotificationService } from './notifications';
import { PinService } from './pins';
import { ReactionService } from './reactions';
import { StopwatchService } from './stopwatches';
import { TrackedTimeService } from './tracked-times';
import { TimelineService } from './timeline';

export interface TrackerServices {
  context: TrackerContext;
  convert: IssueConverter;
  issues: IssueService;
  /** Adding, removing and checking an issue's assignees. */
  assignments: IssueAssignmentService;
  locks: IssueLockService;
  subscriptions: IssueSubscriptionService;
  /** Issues of every readable repository (GET /repos/issues/search). */
  search: IssueSearchService;
  comments: CommentService;
  attachments: AttachmentService;
  reactions: ReactionService;
  dependencies: DependencyService;
  labels: LabelService;
  milestones: MilestoneService;
  notifications: NotificationService;
  /** Pinned issues and pull requests. */
  pins: PinService;
  /** Tracked times and stopwatches (the time tracker). */
  times: TrackedTimeService;
  stopwatches: StopwatchService;
  /** An issue's comments and events together. */
  timeline: TimelineService;
}

export function createTrackerServices(
  prisma: Prisma,
  config: ForgeConfig,
  deps: { convert: Converter; permissions: PermissionService; repos: RepoService; notifier: Notifier; hot: HotReads },
): TrackerServices {
  const context = new TrackerContext(prisma, deps.repos, deps.permissions, config.provider, deps.hot);
  const convert = new IssueConverter(config, deps.convert);
  const notifications = new NotificationService(prisma, deps.permissions, deps.convert, convert, deps.hot);
  const issues = new IssueService(context, convert, deps.notifier);
  const attachments = new AttachmentService(context, config, convert);
  const times = new TrackedTimeService(context, issues);
  return {
    context,
    convert,
    issues,
    assignments: new IssueAssignmentService(context, issues, deps.notifier),
    locks: new IssueLockService(context),
    subscriptions: new IssueSubscriptionService(context, convert),
    search: new IssueSearchService(context, issues),
    comments: new CommentService(context, convert, issues, attachments, deps.notifier),
    attachments,
    reactions: new ReactionService(context, convert),
    dependencies: new DependencyService(context, issues, deps.repos),
    labels: new LabelService(context, convert, deps.notifier),
    milestones: new MilestoneService(context, convert),
    notifications,
    pins: new PinService(prisma),
    times,
    stopwatches: new StopwatchService(context, times),
    timeline: new TimelineService(context, convert, issues, times, deps.permissions),
  };
}

export { ActivityService };
