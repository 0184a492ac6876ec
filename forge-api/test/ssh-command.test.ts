/** The SSH command parser: git's quoting, repository paths and Gitea's refusals (pure). */
import { isValidSshRepoName, parseSshCommand, shellSplit } from '../src/ssh/command';

describe('shellSplit', () => {
  test.each([
    ["git-upload-pack 'alice/one.git'", ['git-upload-pack', 'alice/one.git']],
    ['git-upload-pack "alice/one.git"', ['git-upload-pack', 'alice/one.git']],
    ["git-receive-pack  '/alice/it'\\''s'", ['git-receive-pack', "/alice/it's"]],
    ['a\\ b "c\\"d" e', ['a b', 'c"d', 'e']],
    ['', []],
  ])('%s', (input, words) => expect(shellSplit(input)).toEqual(words));

  test('unterminated quotes and escapes are errors', () => {
    expect(shellSplit("git-upload-pack 'alice/one")).toBeNull();
    expect(shellSplit('git-upload-pack "alice/one')).toBeNull();
    expect(shellSplit('git-upload-pack alice\\')).toBeNull();
  });
});

describe('parseSshCommand', () => {
  test('the forms git sends', () => {
    expect(parseSshCommand("git-upload-pack 'alice/one.git'")).toEqual({ verb: 'git-upload-pack', service: 'upload-pack', ownerName: 'alice', repoName: 'one', isWiki: false, write: false });
    expect(parseSshCommand("git-receive-pack '/alice/one'")).toMatchObject({ service: 'receive-pack', ownerName: 'alice', repoName: 'one', write: true });
    expect(parseSshCommand("git-upload-archive 'alice/one.git'")).toMatchObject({ service: 'upload-archive', write: false });
    expect(parseSshCommand("git-receive-pack 'alice/one.wiki.git'")).toMatchObject({ repoName: 'one', isWiki: true, write: true });
  });

  test.each([
    ["git-upload-pack 'alice", 'Error parsing arguments'],
    ['git-upload-pack', 'Too few arguments'],
    ['git-upload-pack one.git', 'Invalid repository path'],
    ["git-upload-pack 'alice/../etc.git'", 'Invalid repo name'],
    ["git-upload-pack 'alice/a/b.git'", 'Invalid repo name'],
    ["git-upload-pack 'alice/x.git.git'", 'Invalid repo name'],
    ["sh 'alice/one.git'", 'Unknown git command'],
    // The path is checked before the command, as in Gitea's serv.
    ['sh -c true', 'Invalid repository path'],
    ["git-lfs-authenticate 'alice/one.git' download", 'LFS Server is not enabled'],
  ])('%s -> %s', (command, message) => expect(() => parseSshCommand(command)).toThrow(message));

  test("Gitea's SSH repository names", () => {
    expect(isValidSshRepoName('my-repo_1.x')).toBe(true);
    expect(isValidSshRepoName('docs.wiki')).toBe(true);
    for (const bad of ['.', '..', '-', 'a..b', 'a b', 'x.rss', 'x.atom', 'x.git', 'é']) expect(isValidSshRepoName(bad)).toBe(false);
  });
});
