/** structs.User: what a viewer may see of a user (Gitea's convert.ToUser). */
import crypto from 'node:crypto';
import type { User } from '../records';
import { fmtTime, GO_ZERO_TIME, visibilityName } from './common';
import type { ConvertContext } from './context';

export function avatarUrl(c: ConvertContext, u: Pick<User, 'email' | 'avatarUrl' | 'id' | 'avatar'>): string {
  if (u.avatar) return `${c.rootUrl}avatars/${u.avatar}`;
  if (u.avatarUrl) return u.avatarUrl;
  const hash = crypto.createHash('md5').update((u.email || String(u.id)).trim().toLowerCase()).digest('hex');
  return `${c.rootUrl}avatars/${hash}`;
}

export function placeholderEmail(c: ConvertContext, u: Pick<User, 'lowerName'>): string {
  return `${u.lowerName}@${c.noReplyAddress}`;
}

/**
 * convert.toUser: `signed` = the viewer is signed in (or has access for repo owners),
 * `authed` = the viewer is the user or a site admin (private fields).
 */
export function toUser(c: ConvertContext, u: User, signed: boolean, authed: boolean) {
  const showEmail = signed && (!u.keepEmailPrivate || authed);
  return {
    id: u.id,
    login: u.name,
    login_name: authed ? u.loginName : '',
    source_id: authed ? u.loginSource : 0,
    full_name: u.fullName,
    email: showEmail ? u.email : placeholderEmail(c, u),
    avatar_url: avatarUrl(c, u),
    html_url: `${c.rootUrl}${u.name}`,
    language: authed ? u.language : '',
    is_admin: authed ? u.isAdmin : false,
    last_login: authed ? fmtTime(u.lastLoginAt) : GO_ZERO_TIME,
    created: fmtTime(u.createdAt),
    restricted: u.isRestricted,
    active: authed ? u.isActive : false,
    prohibit_login: authed ? u.prohibitLogin : false,
    location: u.location,
    website: u.website,
    description: u.description,
    visibility: visibilityName(u.visibility),
    followers_count: u.numFollowers,
    following_count: u.numFollowing,
    starred_repos_count: u.numStars,
    username: u.name,
  };
}

/** convert.ToUser(ctx, user, doer) */
export function userFor(c: ConvertContext, u: User, doer: User | null) {
  return toUser(c, u, doer !== null, doer !== null && (doer.isAdmin || doer.id === u.id));
}

/**
 * convert.ToUser(ctx, user, nil): how Gitea embeds users in records whatever the viewer
 * (comment posters, assignees): the placeholder e-mail and no private details.
 */
export function userPublic(c: ConvertContext, u: User) {
  return toUser(c, u, false, false);
}

/** Gitea's user_model.NewGhostUser(): what a deleted author shows as. */
export function ghostUser(): User {
  const epoch = new Date(0);
  return {
    id: -1, type: 0, name: 'Ghost', lowerName: 'ghost', fullName: '', email: '', keepEmailPrivate: true, passwordHash: '',
    mustChangePassword: false, loginName: '', loginSource: 0, location: '', website: '', description: '', language: '', avatarUrl: '',
    visibility: 0, isActive: false, isAdmin: false, isRestricted: false, prohibitLogin: true, allowGitHook: false, allowImportLocal: false,
    allowCreateOrganization: false, maxRepoCreation: -1, repoAdminChangeTeamAccess: false, totpSecret: null, totpLastUsed: null,
    theme: '', diffViewStyle: '', keepActivityPrivate: false, numFollowers: 0, numFollowing: 0, numStars: 0, numRepos: 0, createdAt: epoch, updatedAt: epoch, lastLoginAt: null,
  } as User;
}

/** A user as the viewer may see them; a missing one shows as the ghost. */
export function viewedUser(c: ConvertContext, u: User | undefined, doer: User | null) {
  return userFor(c, u ?? ghostUser(), doer);
}

/** A user embedded whatever the viewer (Gitea converts these with a nil doer); a missing one shows as the ghost. */
export function embeddedUser(c: ConvertContext, u: User | undefined) {
  return userPublic(c, u ?? ghostUser());
}
