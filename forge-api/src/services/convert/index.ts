/**
 * Database rows -> Gitea's JSON records (Gitea's services/convert), one file per record here.
 * `Converter` and `IssueConverter` bind the functions to the configured root URL for services.
 */
import type { ForgeConfig } from '../../config';
import type { Attachment, Comment, Issue, Label, Milestone, Notification, Reaction } from '../../../generated/prisma/client';
import type { AccessToken, EmailAddress, PublicKey, User } from '../records';
import type { RepoModes } from '../permissions';
import { toAttachment } from './attachment';
import { toComment } from './comment';
import { convertContext, type ConvertConfig, type ConvertContext } from './context';
import { toEmail } from './email';
import { issueApiUrl, issueHtmlUrl, toIssue, type IssueFull } from './issue';
import { toLabel } from './label';
import { toMilestone } from './milestone';
import { toNotificationThread } from './notification-thread';
import { toOrganization } from './organization';
import { toPublicKey } from './public-key';
import { toReaction } from './reaction';
import { repoApiUrl, repoHtmlUrl, sshCloneUrl, toRepository, type RepoExtras, type RepoWithOwner } from './repository';
import { toAccessToken, toCurrentAccessToken } from './token';
import { avatarUrl, embeddedUser, placeholderEmail, toUser, userFor, userPublic, viewedUser } from './user';

export * from './common';
export { OP_TYPES } from './activity';
export { ISSUE_INCLUDE, type IssueFull } from './issue';
export { labelScope, normalizeColor } from './label';
export { ghostUser } from './user';
export type { RepoWithOwner } from './repository';
export type { ConvertContext } from './context';

export class Converter {
  readonly context: ConvertContext;
  constructor(config: ConvertConfig) {
    this.context = convertContext(config);
  }

  avatarUrl(u: Pick<User, 'email' | 'avatarUrl' | 'id' | 'avatar'>) {
    return avatarUrl(this.context, u);
  }

  placeholderEmail(u: Pick<User, 'lowerName'>) {
    return placeholderEmail(this.context, u);
  }

  user(u: User, signed: boolean, authed: boolean) {
    return toUser(this.context, u, signed, authed);
  }

  userFor(u: User, doer: User | null) {
    return userFor(this.context, u, doer);
  }

  userPublic(u: User) {
    return userPublic(this.context, u);
  }

  org(o: User) {
    return toOrganization(this.context, o);
  }

  /** `access`: the caller's mode, or its modes for unit teams (PermissionService.repoModes). */
  repo(r: RepoWithOwner & RepoExtras, access: number | RepoModes) {
    return toRepository(this.context, r, access);
  }

  /** The SSH clone URL of owner/name ('' when the forge serves no SSH). */
  sshCloneUrl(ownerName: string, repoName: string) {
    return sshCloneUrl(this.context, ownerName, repoName);
  }

  token(t: AccessToken, scopes: string[], sha1 = '') {
    return toAccessToken(t, scopes, sha1);
  }

  currentToken(t: AccessToken, scopes: string[], user: Pick<User, 'id' | 'name'>) {
    return toCurrentAccessToken(t, scopes, user);
  }

  email(e: EmailAddress, user: Pick<User, 'name' | 'id'>) {
    return toEmail(e, user);
  }

  publicKey(k: PublicKey, owner: User, doer: User | null) {
    return toPublicKey(this.context, k, owner, doer);
  }
}

export class IssueConverter {
  private readonly context: ConvertContext;
  constructor(config: ConvertConfig, base: Converter) {
    this.context = base.context ?? convertContext(config);
  }

  repoApi(repo: RepoWithOwner) {
    return repoApiUrl(this.context, repo);
  }

  repoHtml(repo: RepoWithOwner) {
    return repoHtmlUrl(this.context, repo);
  }

  user(u: User | undefined, doer: User | null) {
    return viewedUser(this.context, u, doer);
  }

  userPublic(u: User | undefined) {
    return embeddedUser(this.context, u);
  }

  label(l: Label, repo: RepoWithOwner | null, orgName?: string) {
    return toLabel(this.context, l, repo, orgName);
  }

  milestone(m: Milestone) {
    return toMilestone(m);
  }

  attachment(a: Attachment) {
    return toAttachment(this.context, a);
  }

  issueHtml(repo: RepoWithOwner, issue: Pick<Issue, 'index' | 'isPull'>) {
    return issueHtmlUrl(this.context, repo, issue);
  }

  issueApi(repo: RepoWithOwner, issue: Pick<Issue, 'index'>) {
    return issueApiUrl(this.context, repo, issue);
  }

  issue(i: IssueFull, repo: RepoWithOwner, users: Map<number, User>, doer: User | null) {
    return toIssue(this.context, i, repo, users, doer);
  }

  comment(c: Comment & { attachments: Attachment[] }, issue: Pick<Issue, 'index' | 'isPull'>, repo: RepoWithOwner, poster: User | undefined) {
    return toComment(this.context, c, issue, repo, poster);
  }

  reaction(r: Reaction, user: User | undefined, doer: User | null) {
    return toReaction(this.context, r, user, doer);
  }

  thread(n: Notification, issue: Issue, repo: RepoWithOwner, repoJson: unknown, latestComment: Comment | null) {
    return toNotificationThread(this.context, n, issue, repo, repoJson, latestComment);
  }
}
