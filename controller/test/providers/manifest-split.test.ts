/**
 * A manifest file's documents are found by searching for document markers (`---` at the start
 * of a line, then whitespace or the end): the same chunks, with the same start lines, as
 * splitting the text into lines and testing each one, on random texts full of near-markers.
 */
import { splitDocuments } from '../../src/providers/file/manifests';
import { rng } from '../random-routes';

/** The plain way: every line tested. */
function byLines(text: string): { line: number; text: string }[] {
  const chunks: { line: number; text: string }[] = [];
  const lines = text.split('\n');
  let start = 0;
  for (let i = 0; i < lines.length; i++) {
    if (i > start && /^---(\s|$)/.test(lines[i])) {
      chunks.push({ line: start + 1, text: lines.slice(start, i).join('\n') });
      start = i;
    }
  }
  chunks.push({ line: start + 1, text: lines.slice(start).join('\n') });
  return chunks;
}

test('documents are split where a line starts with a document marker, as a line-by-line split does', () => {
  const r = rng(29);
  const pieces = ['---', '--- ', '---\t# c', '---\r', '----', '---x', ' ---', 'a: ---', 'kind: HTTPRoute', '', '  - x', '# ---', '...'];
  for (let n = 0; n < 2000; n++) {
    const lines = Array.from({ length: Math.floor(r() * 12) }, () => pieces[Math.floor(r() * pieces.length)]);
    const text = lines.join('\n') + (r() < 0.3 ? '\n' : '');
    expect(splitDocuments(text)).toEqual(byLines(text));
  }
});
