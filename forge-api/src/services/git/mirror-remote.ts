/**
 * A push mirror's remote in a bare repository, set up as Gitea does: `git remote add
 * --mirror=push <name> <url>` plus the push refspecs of branches and tags, so `git push
 * --mirror --force <name>` makes the target's branches and tags equal to ours (created, moved
 * and deleted alike) and leaves the rest of our refs (notes, internal refs) at home.
 *
 * The URL keeps the credentials, in the repository's git config (Gitea stores them the same
 * way); nothing here puts the URL on a command line or in an error text: git's messages are
 * passed through `maskCredentials` before anyone sees them.
 */
import execa from 'execa';
import { gitEnv, runGit } from './run';

/** Gitea's [git.timeout] MIRROR default: a push that takes longer is stopped. */
export const MIRROR_PUSH_TIMEOUT_MS = 360_000;

export async function addMirrorRemote(repoPath: string, name: string, url: string): Promise<void> {
  // The keys `git remote add --mirror=push` writes, plus the push refspecs.
  await runGit(['config', `remote.${name}.url`, url], { cwd: repoPath });
  await runGit(['config', `remote.${name}.mirror`, 'true'], { cwd: repoPath });
  await runGit(['config', '--add', `remote.${name}.push`, '+refs/heads/*:refs/heads/*'], { cwd: repoPath });
  await runGit(['config', '--add', `remote.${name}.push`, '+refs/tags/*:refs/tags/*'], { cwd: repoPath });
}

export async function removeMirrorRemote(repoPath: string, name: string): Promise<void> {
  await runGit(['config', '--remove-section', `remote.${name}`], { cwd: repoPath }).catch(() => undefined);
}

export async function hasRemote(repoPath: string, name: string): Promise<boolean> {
  const out = await runGit(['config', '--get', `remote.${name}.url`], { cwd: repoPath }).catch(() => '');
  return out.trim() !== '';
}

/** Gitea's IsRepoURLAccessible: `git ls-remote` answers for the URL (credentials included). */
export async function isRemoteAccessible(url: string, timeoutMs = 60_000): Promise<boolean> {
  const r = await execa('git', ['ls-remote', '-q', '-h', '--', url, 'HEAD'], { env: gitEnv(), extendEnv: false, reject: false, timeout: timeoutMs, stdin: 'ignore' });
  return r.exitCode === 0 && !r.timedOut;
}

/**
 * Gitea's WikiRemoteURL: the wiki beside a remote repository (`<repo>.wiki.git`, else
 * `<repo>.git/wiki`) when the remote answers there, else null.
 */
export async function wikiRemoteUrl(url: string): Promise<string | null> {
  const base = url.replace(/\.git$/, '');
  for (const suffix of ['.wiki.git', '.git/wiki']) {
    if (await isRemoteAccessible(base + suffix)) return base + suffix;
  }
  return null;
}

/**
 * Pushes every branch and tag to the remote, deleting the target's branches and tags that
 * are gone here. Resolves with null on success, or git's message (credentials masked).
 */
export async function pushMirror(repoPath: string, name: string, timeoutMs = MIRROR_PUSH_TIMEOUT_MS): Promise<string | null> {
  const result = await execa('git', ['push', '--quiet', '--force', '--mirror', name], {
    cwd: repoPath,
    env: gitEnv(),
    extendEnv: false,
    reject: false,
    timeout: timeoutMs,
    stdin: 'ignore',
  });
  if (result.exitCode === 0 && !result.timedOut) return null;
  const text = result.timedOut ? `git push timed out after ${Math.round(timeoutMs / 1000)}s` : String(result.stderr ?? '').trim() || `git push exited with ${result.exitCode}`;
  return maskCredentials(text);
}

/**
 * Replaces the user information of every URL in `text` with "(masked)", as Gitea's
 * SanitizeCredentialURLs does, so a password never reaches an API answer or a log.
 */
export function maskCredentials(text: string): string {
  return text.replace(/([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^\s/@'"]*@/g, '$1(masked)@');
}
