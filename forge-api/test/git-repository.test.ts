import { promises as fs } from 'fs';
import os from 'os';
import path from 'path';
import execa from 'execa';
import { randomBytes } from 'crypto';
import {
  initRepository,
  repoStats,
  deleteRepository,
  renameRepository,
  listRepositoryDirs,
  repositoryPath,
  RepositoryExistsError,
  UnknownTemplateError,
} from '../src/services/git';
import { gitEnv } from '../src/services/git/run';

const git = async (cwd: string, ...args: string[]) =>
  (await execa('git', args, { cwd, env: gitEnv({ GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' }) })).stdout;

let tmp: string;
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'forge-git-'));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('initRepository', () => {
  it('creates an empty bare repository whose HEAD names the default branch', async () => {
    const repo = repositoryPath(tmp, 'Alice', 'My-Repo');
    expect(repo).toBe(path.join(tmp, 'alice', 'my-repo.git'));
    await initRepository(repo, { defaultBranch: 'trunk' });
    expect(await git(repo, 'rev-parse', '--is-bare-repository')).toBe('true');
    expect(await git(repo, 'symbolic-ref', 'HEAD')).toBe('refs/heads/trunk');
    expect(await git(repo, 'config', 'http.receivepack')).toBe('true');
    const stats = await repoStats(repo);
    expect(stats.empty).toBe(true);
    expect(stats.defaultBranch).toBeNull();
    // no template copied: no sample hooks, nothing but what git needs
    await expect(fs.stat(path.join(repo, 'hooks'))).rejects.toThrow();
  });

  it('auto_init writes one "Initial commit" with README, LICENSE and concatenated .gitignore by the creating user', async () => {
    const repo = repositoryPath(tmp, 'alice', 'demo');
    const date = new Date('2025-03-04T05:06:07Z');
    await initRepository(repo, {
      defaultBranch: 'main',
      autoInit: {
        readme: { name: 'demo', description: 'A demo repository' },
        license: 'MIT',
        gitignores: ['Node', 'Go'],
        author: { name: 'Alice Liddell', email: 'alice@example.com' },
        owner: 'alice',
        date,
      },
    });
    expect(await git(repo, 'rev-list', '--count', 'main')).toBe('1');
    expect(await git(repo, 'log', '-1', '--format=%an <%ae>|%cn <%ce>|%s|%at', 'main')).toBe(
      `Alice Liddell <alice@example.com>|Alice Liddell <alice@example.com>|Initial commit|${date.getTime() / 1000}`,
    );
    expect((await git(repo, 'ls-tree', '--name-only', 'main')).split('\n')).toEqual(['.gitignore', 'LICENSE', 'README.md']);
    expect(await git(repo, 'show', 'main:README.md')).toBe('# demo\n\nA demo repository');
    const license = await git(repo, 'show', 'main:LICENSE');
    expect(license).toContain('Copyright (c) 2025 alice');
    expect(license).not.toContain('<year>');
    const ignore = await git(repo, 'show', 'main:.gitignore');
    expect(ignore.startsWith('# ---> Node\n')).toBe(true);
    expect(ignore).toContain('node_modules/');
    expect(ignore.indexOf('# ---> Go\n')).toBeGreaterThan(ignore.indexOf('node_modules/'));

    const stats = await repoStats(repo);
    expect(stats).toMatchObject({ empty: false, defaultBranch: 'main' });
    // the objects written without git are valid to git itself
    const fsck = await execa('git', ['fsck', '--strict', '--no-dangling'], { cwd: repo, env: gitEnv(), reject: false });
    expect(fsck.exitCode).toBe(0);
    expect(fsck.stderr).toBe('');
    expect(await git(repo, 'cat-file', '-p', 'main')).toMatch(/\n\nInitial commit$/);
  });

  it('auto_init on a branch with slashes and non-ASCII content', async () => {
    const repo = repositoryPath(tmp, 'zoë', 'Ünïcode');
    await initRepository(repo, {
      defaultBranch: 'release/v1',
      autoInit: { readme: { name: 'Ünïcode', description: 'Grüße ✓' }, author: { name: 'Zoë <x>', email: 'zoe@example.com' } },
    });
    expect(await git(repo, 'symbolic-ref', 'HEAD')).toBe('refs/heads/release/v1');
    expect(await git(repo, 'show', 'release/v1:README.md')).toBe('# Ünïcode\n\nGrüße ✓');
    expect(await git(repo, 'log', '-1', '--format=%an <%ae>', 'release/v1')).toBe('Zoë x <zoe@example.com>');
    const fsck = await execa('git', ['fsck', '--strict'], { cwd: repo, env: gitEnv(), reject: false });
    expect(fsck.exitCode).toBe(0);
    expect(await repoStats(repo)).toMatchObject({ empty: false, defaultBranch: 'release/v1' });
  });

  it('refuses an existing folder and unknown templates without leaving files behind', async () => {
    const repo = repositoryPath(tmp, 'bob', 'x');
    await initRepository(repo, { defaultBranch: 'main' });
    await expect(initRepository(repo, { defaultBranch: 'main' })).rejects.toBeInstanceOf(RepositoryExistsError);

    const other = repositoryPath(tmp, 'bob', 'y');
    await expect(
      initRepository(other, { defaultBranch: 'main', autoInit: { license: 'No-Such-License', author: { name: 'b', email: 'b@e' } } }),
    ).rejects.toBeInstanceOf(UnknownTemplateError);
    await expect(fs.stat(other)).rejects.toThrow();
    await expect(initRepository(other, { defaultBranch: 'bad..name' })).rejects.toThrow(/invalid branch/);
  });
});

describe('repoStats after a push', () => {
  it('follows size, empty flag and moves HEAD to the pushed branch', async () => {
    const repo = repositoryPath(tmp, 'carol', 'r');
    await initRepository(repo, { defaultBranch: 'main' });
    const before = await repoStats(repo);

    const work = path.join(tmp, 'work');
    await fs.mkdir(work);
    await git(work, 'init', '-q', '-b', 'develop');
    await fs.writeFile(path.join(work, 'big.bin'), randomBytes(200 * 1024));
    await git(work, 'add', '.');
    await git(work, 'commit', '-q', '-m', 'data');
    await git(work, 'push', '-q', repo, 'develop');

    const after = await repoStats(repo);
    expect(after.empty).toBe(false);
    expect(after.defaultBranch).toBe('develop');
    expect(after.sizeKiB).toBeGreaterThan(before.sizeKiB + 100);
    expect(await git(repo, 'symbolic-ref', 'HEAD')).toBe('refs/heads/develop');
  });
});

describe('rename, delete, list', () => {
  it('lists <owner>/<name>.git folders, renames and deletes them', async () => {
    await initRepository(repositoryPath(tmp, 'zed', 'b'), { defaultBranch: 'main' });
    await initRepository(repositoryPath(tmp, 'amy', 'a'), { defaultBranch: 'main' });
    await fs.mkdir(path.join(tmp, 'amy', 'not-a-repo'));
    expect((await listRepositoryDirs(tmp)).map((d) => d.fullName)).toEqual(['amy/a', 'zed/b']);

    await renameRepository(repositoryPath(tmp, 'amy', 'a'), repositoryPath(tmp, 'newowner', 'renamed'));
    await expect(renameRepository(repositoryPath(tmp, 'zed', 'b'), repositoryPath(tmp, 'newowner', 'renamed'))).rejects.toBeInstanceOf(
      RepositoryExistsError,
    );
    await deleteRepository(repositoryPath(tmp, 'zed', 'b'));
    expect((await listRepositoryDirs(tmp)).map((d) => d.fullName)).toEqual(['newowner/renamed']);
    expect(await listRepositoryDirs(path.join(tmp, 'missing'))).toEqual([]);
  });
});
