import { renderMarkup, renderRaw, markdownMode, MarkupError } from '../src/services/markup';

const appUrl = 'http://localhost:3000/';
const r = (mode: string, text: string, extra: Partial<Parameters<typeof renderMarkup>[0]> = {}) =>
  renderMarkup({ mode, text, appUrl, context: '/user2/repo1', ...extra });

describe('wiki mode (Gitea markup_test cases)', () => {
  it('renders [[Name|Link]], [[Page]], mentions and autolinks', async () => {
    const text = `Wiki! Enjoy :)
- [[Links, Language bindings, Engine bindings|Links]]
- [[Tips]]
- Bezier widget (by @r-lyeh) https://github.com/ocornut/imgui/issues/786`;
    const out = await r('wiki', text, { mentionable: (names) => names.filter((n) => n === 'r-lyeh') });
    expect(out).toContain('<li><a href="http://localhost:3000/user2/repo1/wiki/Links" rel="nofollow">Links, Language bindings, Engine bindings</a></li>');
    expect(out).toContain('<li><a href="http://localhost:3000/user2/repo1/wiki/Tips" rel="nofollow">Tips</a></li>');
    expect(out).toContain('(by <a href="http://localhost:3000/r-lyeh" class="mention" rel="nofollow">@r-lyeh</a>)');
    expect(out).toContain('<a href="https://github.com/ocornut/imgui/issues/786" rel="nofollow">https://github.com/ocornut/imgui/issues/786</a>');
  });

  it('renders wiki images and heading ids', async () => {
    const out = await r('wiki', '## What is Wine Staging?\n[[Configuration]]\n[[images/icon-bug.png]]\n');
    expect(out).toContain('<h2 id="user-content-what-is-wine-staging">What is Wine Staging?</h2>');
    expect(out).toContain(
      '<a href="http://localhost:3000/user2/repo1/wiki/raw/images/icon-bug.png" rel="nofollow"><img src="http://localhost:3000/user2/repo1/wiki/raw/images/icon-bug.png" title="icon-bug.png" alt="images/icon-bug.png" /></a>',
    );
  });

  it('leaves wiki syntax alone in plain markdown mode', async () => {
    expect(await r('markdown', '[[Name|Link]]')).toBe('<p>[[Name|Link]]</p>\n');
    expect(await renderRaw('[[Guardfile-DSL / Configuring-Guard|Guardfile-DSL---Configuring-Guard]]', appUrl)).toBe(
      '<p>[[Guardfile-DSL / Configuring-Guard|Guardfile-DSL---Configuring-Guard]]</p>\n',
    );
    expect(await r('markdown', '')).toBe('');
  });
});

describe('repository file modes', () => {
  const input = '[Link](test.md)\n![Image](image.png)';
  it('gfm resolves links into src/ and images into media/ of the branch', async () => {
    const out = await r('gfm', input, { context: '/user2/repo1/src/branch/main' });
    expect(out).toBe(
      '<p><a href="http://localhost:3000/user2/repo1/src/branch/main/test.md" rel="nofollow">Link</a>\n' +
        '<a href="http://localhost:3000/user2/repo1/media/branch/main/image.png" target="_blank" rel="nofollow noopener"><img src="http://localhost:3000/user2/repo1/media/branch/main/image.png" alt="Image" /></a></p>\n',
    );
  });

  it('file mode resolves relative to the file folder and checks the extension', async () => {
    const out = await r('file', input, { context: '/user2/repo1/src/branch/main/path', filePath: 'path/new-file.md' });
    expect(out).toContain('href="http://localhost:3000/user2/repo1/src/branch/main/path/test.md"');
    expect(out).toContain('src="http://localhost:3000/user2/repo1/media/branch/main/path/image.png"');
    await expect(r('file', '## Test', { filePath: 'path/test.unknown' })).rejects.toThrow('unsupported file to render: "path/test.unknown"');
  });

  it('rejects unknown modes with a 422 error', async () => {
    const err = await r('unknown', '## Test').catch((e) => e);
    expect(err).toBeInstanceOf(MarkupError);
    expect(err.message).toBe('Unknown mode: unknown');
    expect(err.statusCode).toBe(422);
  });
});

describe('comment mode', () => {
  it('links #issue refs, cross-repo refs and existing @mentions; hard line breaks', async () => {
    const out = await r('comment', 'Fixes #12 and other/repo#3, thanks @bob and @ghost\nnext line `#5` [#7](https://x.org)', {
      mentionable: (names) => names.filter((n) => n === 'bob'),
    });
    expect(out).toContain('<a href="http://localhost:3000/user2/repo1/issues/12" class="ref-issue" rel="nofollow">#12</a>');
    expect(out).toContain('<a href="http://localhost:3000/other/repo/issues/3" class="ref-issue" rel="nofollow">other/repo#3</a>');
    expect(out).toContain('<a href="http://localhost:3000/bob" class="mention" rel="nofollow">@bob</a>');
    expect(out).toContain('@ghost');
    expect(out).not.toContain('/ghost"');
    expect(out).toContain('<br />\nnext line');
    expect(out).toContain('<code>#5</code>');
    expect(out).toContain('<a href="https://x.org" rel="nofollow">#7</a>');
  });

  it('does not link refs in plain markdown mode', async () => {
    expect(await r('markdown', 'see #12')).toBe('<p>see #12</p>\n');
  });
});

describe('GFM features and sanitizing', () => {
  it('renders tables with alignment, strikethrough, task lists and autolinks', async () => {
    const out = await r('gfm', '| a | b |\n|:-:|--:|\n| 1 | ~~2~~ |\n\n- [ ] todo\n- [x] done\n\nhttps://example.org');
    expect(out).toContain('<th align="center">a</th>');
    expect(out).toContain('<td align="right"><s>2</s></td>');
    expect(out).toMatch(/<li class="task-list-item"><input type="checkbox" disabled data-source-position="\d+" \/>todo<\/li>/);
    expect(out).toMatch(/<input type="checkbox" disabled checked data-source-position="\d+" \/>done/);
    expect(out).toContain('<a href="https://example.org" rel="nofollow">https://example.org</a>');
  });

  it('never lets scripts, event handlers or javascript: URLs through', async () => {
    const evil = [
      '<script>alert(1)</script>',
      '<img src=x onerror="alert(2)">',
      '<a href="javascript:alert(3)" onclick="alert(4)">click</a>',
      '[md](javascript:alert(5))',
      '<iframe src="https://evil"></iframe>',
      '<div style="background:url(x)" onmouseover="alert(6)">hover</div>',
      '<input type="text" onfocus="alert(7)" autofocus>',
      '<svg onload="alert(8)"></svg>',
    ].join('\n\n');
    for (const mode of ['markdown', 'gfm', 'comment', 'wiki']) {
      const out = await r(mode, evil);
      expect(out).not.toMatch(/<script|\son\w+=|="\s*javascript:|<iframe|style=|<svg|type="text"/i);
      expect(out).toContain('click');
      expect(out).toContain('hover');
    }
  });

  it('renders footnotes and definition lists with working same-page links', async () => {
    const out = await r('gfm', 'Text[^1] and [top](#intro).\n\n# Intro\n\nTerm\n: Definition\n\n[^1]: The note.\n');
    expect(out).toContain('<a href="#user-content-fn1" id="user-content-fnref1" rel="nofollow">[1]</a>');
    expect(out).toContain('<li id="user-content-fn1" class="footnote-item"><p>The note.');
    expect(out).toContain('<a href="#user-content-intro" rel="nofollow">top</a>');
    expect(out).toContain('<h1 id="user-content-intro">Intro</h1>');
    expect(out).toContain('<dl>\n<dt>Term</dt>\n<dd>Definition</dd>\n</dl>');
  });

  it('keeps raw checkboxes disabled', async () => {
    expect(await r('markdown', '<input type="checkbox" checked>')).toBe('<input type="checkbox" checked disabled />');
  });

  it('prefixes user ids and keeps safe raw HTML', async () => {
    const out = await r('markdown', '<details open><summary>More</summary><p id="x">body</p></details>');
    expect(out).toContain('<details open><summary>More</summary><p id="user-content-x">body</p></details>');
  });
});

describe('markdownMode', () => {
  it('maps /markdown modes as Gitea does', () => {
    expect(markdownMode('gfm', false)).toBe('gfm');
    expect(markdownMode('comment', false)).toBe('comment');
    expect(markdownMode('file', false)).toBe('markdown');
    expect(markdownMode('anything', false)).toBe('markdown');
    expect(markdownMode('gfm', true)).toBe('wiki');
  });
});
