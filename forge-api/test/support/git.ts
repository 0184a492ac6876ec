import execa from 'execa';
import { gitEnv } from '../../src/services/git/run';

/** The real git CLI as a fixed test identity, isolated from the machine's git config; never throws. */
export const git = (cwd: string, ...args: string[]) =>
  execa('git', args, {
    cwd,
    env: gitEnv({ GIT_AUTHOR_NAME: 'Dev', GIT_AUTHOR_EMAIL: 'dev@example.com', GIT_COMMITTER_NAME: 'Dev', GIT_COMMITTER_EMAIL: 'dev@example.com' }),
    extendEnv: false,
    reject: false,
  });
