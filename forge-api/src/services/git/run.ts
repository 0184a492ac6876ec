import execa from 'execa';

/**
 * Environment for every git process we start. The server's own git config (a developer's
 * ~/.gitconfig, /etc/gitconfig) must not change how repositories are created or served, so
 * global and system config are switched off and git never prompts on a terminal.
 */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...GIT_ISOLATION, ...extra };
}

/** What gitEnv sets over the process environment. */
export const GIT_ISOLATION: Readonly<Record<string, string>> = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  LC_ALL: 'C',
};

export class GitCommandError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | undefined,
    readonly stderr: string,
  ) {
    super(`git ${args[0] ?? ''} failed (exit ${exitCode ?? 'signal'}): ${stderr.trim()}`);
    this.name = 'GitCommandError';
  }
}

export interface RunGitOptions {
  cwd?: string;
  input?: string | Buffer;
  env?: Record<string, string>;
}

/** Runs git to completion and returns stdout; throws GitCommandError with stderr on failure. */
export async function runGit(args: string[], options: RunGitOptions = {}): Promise<string> {
  const result = await execa('git', args, {
    cwd: options.cwd,
    input: options.input,
    env: gitEnv(options.env),
    extendEnv: false,
    reject: false,
    stripFinalNewline: false,
  });
  if (result.exitCode !== 0) {
    throw new GitCommandError(args, result.exitCode, String(result.stderr ?? ''));
  }
  return String(result.stdout ?? '');
}
