/**
 * The command an SSH client asks the forge to run, as git sends it
 * (`git-upload-pack 'owner/repo.git'`), checked the way Gitea's `serv` checks it: the words
 * are split as a POSIX shell would, the repository is `owner/name[.wiki][.git]` with or without
 * a leading '/', and only git's transport commands are run. Pure: no I/O.
 */

export type SshVerb = 'git-upload-pack' | 'git-receive-pack' | 'git-upload-archive';

export interface SshGitCommand {
  verb: SshVerb;
  /** The service git runs: upload-pack, receive-pack or upload-archive. */
  service: 'upload-pack' | 'receive-pack' | 'upload-archive';
  ownerName: string;
  /** Without `.git` and without `.wiki`. */
  repoName: string;
  isWiki: boolean;
  /** Whether the command writes (receive-pack). */
  write: boolean;
}

/** A command the forge refuses, with the text the client sees (Gitea's words). */
export class SshCommandError extends Error {}

const VERBS: Record<string, SshVerb> = {
  'git-upload-pack': 'git-upload-pack',
  'git-receive-pack': 'git-receive-pack',
  'git-upload-archive': 'git-upload-archive',
};
const LFS_VERBS = new Set(['git-lfs-authenticate', 'git-lfs-transfer']);

/** Splits words as a POSIX shell does (quotes, backslashes); null on an unterminated quote or escape. */
export function shellSplit(input: string): string[] | null {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  while (i < input.length) {
    const c = input[i];
    if (c === ' ' || c === '\t' || c === '\n') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i++;
      continue;
    }
    inWord = true;
    if (c === '\\') {
      if (i + 1 >= input.length) return null;
      // A backslash-newline joins lines; any other escaped character stands for itself.
      if (input[i + 1] !== '\n') word += input[i + 1];
      i += 2;
    } else if (c === "'") {
      const end = input.indexOf("'", i + 1);
      if (end < 0) return null;
      word += input.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      i++;
      for (;;) {
        if (i >= input.length) return null;
        const d = input[i];
        if (d === '"') {
          i++;
          break;
        }
        if (d === '\\' && i + 1 < input.length && '$`"\\\n'.includes(input[i + 1])) {
          if (input[i + 1] !== '\n') word += input[i + 1];
          i += 2;
        } else {
          word += d;
          i++;
        }
      }
    } else {
      word += c;
      i++;
    }
  }
  if (inWord) words.push(word);
  return words;
}

const RESERVED_NAMES = new Set(['.', '..', '-']);
const RESERVED_SUFFIXES = ['.git', '.rss', '.atom'];

/** Gitea's IsValidSSHAccessRepoName: a usable repository name, `<name>.wiki` allowed. */
export function isValidSshRepoName(name: string): boolean {
  if (!/^[-.\w]+$/.test(name) || /\.{2,}/.test(name)) return false;
  const lower = name.toLowerCase();
  if (RESERVED_NAMES.has(lower)) return false;
  return !RESERVED_SUFFIXES.some((s) => lower.endsWith(s));
}

/** Parses a non-empty SSH command; throws SshCommandError with the client's message. */
export function parseSshCommand(command: string): SshGitCommand {
  const words = shellSplit(command);
  if (!words) throw new SshCommandError('Error parsing arguments');
  if (words.length < 2) throw new SshCommandError('Too few arguments');
  const repoPath = words[1].replace(/^\//, '');
  const slash = repoPath.indexOf('/');
  if (slash < 0) throw new SshCommandError('Invalid repository path');
  const ownerName = repoPath.slice(0, slash);
  let repoName = repoPath.slice(slash + 1);
  if (repoName.endsWith('.git')) repoName = repoName.slice(0, -'.git'.length);
  if (!isValidSshRepoName(repoName)) throw new SshCommandError('Invalid repo name');
  const verb = VERBS[words[0]];
  if (!verb) throw new SshCommandError(LFS_VERBS.has(words[0]) ? 'LFS Server is not enabled' : 'Unknown git command');
  const isWiki = repoName.endsWith('.wiki');
  if (isWiki) repoName = repoName.slice(0, -'.wiki'.length);
  return { verb, service: verb.slice('git-'.length) as SshGitCommand['service'], ownerName, repoName, isWiki, write: verb === 'git-receive-pack' };
}
