/**
 * A small history made by the real git CLI, the same one the git data tests compared against a
 * real Gitea 1.27.3: three branches, a lightweight and an annotated tag, a note, a symlink, an
 * executable, a vendored file, an .editorconfig and an MIT LICENSE. Commit ids are fixed by
 * the fixed names and dates.
 */
import fs from 'node:fs';
import path from 'node:path';
import execa from 'execa';

const MIT = `MIT License

Copyright (c) 2024 root

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`;

export interface SampleHistory {
  dir: string;
  git(...args: string[]): Promise<string>;
}

/** Builds the history in `dir` (a work tree); `authorEmail` is the author of every commit. */
export async function makeSampleHistory(dir: string, authorEmail: string): Promise<SampleHistory> {
  const baseEnv = {
    ...process.env,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'Root Person',
    GIT_AUTHOR_EMAIL: authorEmail,
    GIT_COMMITTER_NAME: 'Other Committer',
    GIT_COMMITTER_EMAIL: 'other@example.com',
  };
  let date = '';
  const git = async (...args: string[]) => {
    const r = await execa('git', args, { cwd: dir, env: { ...baseEnv, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date }, extendEnv: false, reject: false });
    if (r.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const write = (file: string, text: string, mode?: number) => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
    if (mode) fs.chmodSync(path.join(dir, file), mode);
  };
  const commit = async (when: string, ...message: string[]) => {
    date = when;
    await git('add', '-A');
    await git('commit', '-q', ...message.flatMap((m) => ['-m', m]));
  };
  fs.mkdirSync(dir, { recursive: true });
  date = '2024-01-01T10:00:00+01:00';
  await git('init', '-q', '-b', 'main');
  write('.editorconfig', 'root = true\n\n[*]\nindent_style = space\nindent_size = 2\n\n[*.go]\nindent_style = tab\n');
  write('LICENSE', MIT);
  write('README.md', '# Sample\n');
  await commit('2024-01-01T10:00:00+01:00', 'initial commit');
  write('src/main.go', 'package main\n\nfunc main() {\n\tprintln("hi")\n}\n');
  write('src/tool.py', 'print("hello")\nprint("x")\n');
  write('src/app.ts', 'export const x = 1;\n');
  write('docs/style.css', 'body { color: red; }\n');
  write('vendor/lib/v.js', 'var vendored = 1;\n');
  write('run.sh', '#!/bin/sh\necho hi\n', 0o755);
  fs.symlinkSync('src/main.go', path.join(dir, 'link.go'));
  await commit('2024-01-02T11:00:00-05:00', 'add sources', 'with a body line');
  write('src/tool.py', 'print("hello")\nprint("y")\nprint("z")\n');
  fs.rmSync(path.join(dir, 'docs'), { recursive: true });
  fs.appendFileSync(path.join(dir, 'README.md'), 'more\n');
  await commit('2024-01-03T12:00:00Z', 'modify tool, remove css');
  await git('checkout', '-q', '-b', 'feature');
  write('feature.txt', 'feature work\n');
  await commit('2024-01-04T12:00:00Z', 'feature commit');
  await git('checkout', '-q', 'main');
  write('mainwork.txt', 'main work\n');
  await commit('2024-01-05T12:00:00Z', 'main commit after branch');
  await git('tag', 'light', 'HEAD~1');
  date = '2024-01-06T00:00:00Z';
  await git('tag', '-a', 'v1.0', '-m', 'version one', 'HEAD');
  await git('branch', 'maint', 'HEAD~2');
  await git('notes', 'add', '-m', 'a note on head', 'HEAD');
  return { dir, git };
}

/** Pushes every branch, tag and the notes ref of the history to a forge repository URL. */
export async function pushSampleHistory(h: SampleHistory, remote: string): Promise<void> {
  await h.git('push', '-q', remote, 'refs/heads/*:refs/heads/*', 'refs/tags/*:refs/tags/*', 'refs/notes/commits:refs/notes/commits');
}
