/** Gitea's name rules for users, organizations and repositories. */
import { InvalidError, ValidationError } from './errors';

// models/user: reserved user names (subset that matter for routing) and patterns.
const RESERVED_USER_NAMES = new Set([
  '.', '..', '-', '.well-known', 'admin', 'api', 'assets', 'attachments', 'avatar', 'avatars', 'captcha',
  'commits', 'debug', 'devtest', 'error', 'explore', 'favicon.ico', 'ghost', 'issues', 'login', 'manifest.json',
  'metrics', 'milestones', 'new', 'notifications', 'org', 'pulls', 'raw', 'repo', 'repo-avatars', 'robots.txt',
  'search', 'serviceworker.js', 'ssh_info', 'swagger.v1.json', 'user', 'v2', 'gitea-actions',
]);
const RESERVED_USER_PATTERNS = ['*.keys', '*.gpg', '*.rss', '*.atom', '*.png'];
const RESERVED_REPO_NAMES = new Set(['.', '..', '-']);
const RESERVED_REPO_PATTERNS = ['*.git', '*.rss', '*.atom', '*.wiki'];

/** Alphanumerics, dash, underscore, dot; no leading/trailing/consecutive punctuation. */
const USERNAME = /^[\da-zA-Z](?:[\da-zA-Z]|[-_.](?=[\da-zA-Z]))*$/;

export function checkUserName(name: string): void {
  const lower = name.toLowerCase();
  if (!name || name.length > 40 || !USERNAME.test(name)) {
    throw new InvalidError(`name is invalid [${name}]: must be valid alpha or numeric or dash(-_) or dot characters`);
  }
  if (RESERVED_USER_NAMES.has(lower)) throw new InvalidError(`name is reserved [name: ${name}]`);
  for (const p of RESERVED_USER_PATTERNS) {
    if (lower.endsWith(p.slice(1))) throw new InvalidError(`name pattern is not allowed [pattern: ${p}]`);
  }
}

export function checkRepoName(name: string): void {
  const lower = name.toLowerCase();
  if (!/^[-\w.]+$/.test(name) || name.length > 100) throw new ValidationError('[Name]: AlphaDashDot');
  if (RESERVED_REPO_NAMES.has(lower)) throw new InvalidError(`name is reserved [name: ${name}]`);
  for (const p of RESERVED_REPO_PATTERNS) {
    if (lower.endsWith(p.slice(1))) throw new InvalidError(`name pattern is not allowed [pattern: ${p}]`);
  }
}

const EMAIL = /^[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(\.[\w-]+)*$/;
export function checkEmail(email: string): void {
  if (!EMAIL.test(email) || email.length > 255) throw new InvalidError(`e-mail invalid [email: ${email}]`);
}
