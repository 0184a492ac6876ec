/**
 * The diff excerpt stored with a code comment (Gitea's GetFileDiffCutAroundLine): the file's
 * diff between the merge base and the head, cut to the commented line and the lines before it
 * (Gitea's UI.CodeCommentLines, 4), its hunk header recomputed when the hunk is cut. The review
 * comment's `diff_hunk` is this excerpt from its first hunk header on.
 */
import { GitCommandError, runGit } from '../git/run';

export const CODE_COMMENT_LINES = 4;

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

function isHeader(line: string, inHunk: boolean): boolean {
  return line.startsWith('diff --git') || (!inHunk && (line.startsWith('---') || line.startsWith('+++')));
}

/** `line` counts on the new side, or on the old side when `old`; '' when the diff has no hunk holding it. */
export function cutDiffAroundLine(diff: string, line: number, old: boolean, keep = CODE_COMMENT_LINES): string {
  if (line === 0 || keep === 0) return '';
  const hunk: string[] = [];
  let headerLines = 0;
  let current = 0;
  let other = 0;
  let inHunk = false;
  for (const text of diff.split('\n')) {
    if (isHeader(text, inHunk)) {
      if (text.startsWith('diff --git')) inHunk = false;
      hunk.push(text);
      headerLines++;
    }
    if (current > line) break;
    if (text.startsWith('@@')) {
      inHunk = true;
      if (hunk.length > headerLines) break;
      const m = HUNK.exec(text);
      if (!m) continue;
      const [begin, count, otherBegin] = old ? [Number(m[1]), Number(m[2] ?? 0), Number(m[3])] : [Number(m[3]), Number(m[4] ?? 0), Number(m[1])];
      if (begin <= line && begin + count >= line) {
        hunk.push(text);
        current = begin;
        other = otherBegin;
      }
    } else if (hunk.length > headerLines && text.length) {
      hunk.push(text);
      const c = text[0];
      if (c === '+') old ? other++ : current++;
      else if (c === '-') old ? current++ : other++;
      else if (c !== '\\') {
        current++;
        other++;
      }
    }
  }
  if (current === 0) return '';
  if (hunk.length - headerLines - 1 <= keep) return hunk.join('\n');
  let [oldBegin, newBegin] = old ? [current, other] : [other, current];
  let oldCount = 0;
  let newCount = 0;
  for (let i = hunk.length - 1; i >= hunk.length - keep; i--) {
    const c = hunk[i][0];
    if (c === '+') {
      newBegin--;
      newCount++;
    } else if (c === '-') {
      oldBegin--;
      oldCount++;
    } else {
      oldBegin--;
      newBegin--;
      oldCount++;
      newCount++;
    }
  }
  return [...hunk.slice(0, headerLines), `@@ -${oldBegin},${oldCount} +${newBegin},${newCount} @@`, ...hunk.slice(hunk.length - keep)].join('\n');
}

/** The excerpt for `treePath` between two commits of a repository ('' when the path did not change). */
export async function fileDiffAroundLine(repoPath: string, from: string, to: string, treePath: string, line: number): Promise<string> {
  if (!from || !to) return '';
  try {
    const diff = await runGit(['diff', '-M', from, to, '--', treePath], { cwd: repoPath });
    return cutDiffAroundLine(diff, Math.abs(line), line < 0);
  } catch (err) {
    if (err instanceof GitCommandError) return '';
    throw err;
  }
}
