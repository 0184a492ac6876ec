/** POST /markdown, /markdown/raw, /markup through the miscellaneous plugin (fastify.inject). */
import Fastify, { FastifyInstance } from 'fastify';
import miscRoutes, { MiscDeps } from '../src/routes/miscellaneous';
import { listen, TestResponse, RequestOptions } from './git-test-server';

let app: FastifyInstance;
let inject: (opts: RequestOptions | string) => Promise<TestResponse>;
const AUTH = { authorization: 'token good' };

beforeAll(async () => {
  app = Fastify();
  const deps: Partial<MiscDeps> = {
    rootUrl: 'http://localhost:3000/',
    isSignedIn: (req) => req.headers.authorization === 'token good',
    mentionable: async (names) => names.filter((n) => n === 'alice'),
  };
  await app.register(miscRoutes, { prefix: '/api/v1', deps });
  inject = await listen(app);
});
afterAll(() => app.close());

describe('POST /api/v1/markdown', () => {
  it('renders gfm relative to Context as text/html', async () => {
    const res = await inject({
      method: 'POST',
      url: '/api/v1/markdown',
      headers: AUTH,
      payload: { Mode: 'gfm', Context: '/user2/repo1/src/branch/main', Text: '[Link](test.md) @alice' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toBe(
      '<p><a href="http://localhost:3000/user2/repo1/src/branch/main/test.md" rel="nofollow">Link</a> <a href="http://localhost:3000/alice" class="mention" rel="nofollow">@alice</a></p>\n',
    );
  });

  it('treats unknown Modes as plain markdown and Wiki=true as wiki', async () => {
    const plain = await inject({ method: 'POST', url: '/api/v1/markdown', headers: AUTH, payload: { Mode: 'whatever', Context: '/o/r', Text: '# T\n#1 [[P]]' } });
    expect(plain.statusCode).toBe(200);
    // no issue links, no wiki links in plain markdown
    expect(plain.body).toBe('<h1 id="user-content-t">T</h1>\n<p>#1 [[P]]</p>\n');
    const wiki = await inject({ method: 'POST', url: '/api/v1/markdown', headers: AUTH, payload: { Context: '/o/r', Wiki: true, Text: '[[P]]' } });
    expect(wiki.body).toBe('<p><a href="http://localhost:3000/o/r/wiki/P" rel="nofollow">P</a></p>\n');
  });

  it('answers an empty Text with an empty body', async () => {
    const res = await inject({ method: 'POST', url: '/api/v1/markdown', headers: AUTH, payload: { Mode: 'gfm', Text: '' } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
  });

  it('requires a signed-in caller', async () => {
    const res = await inject({ method: 'POST', url: '/api/v1/markdown', payload: { Text: 'x' } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ message: 'token is required', url: 'http://localhost:3000/api/swagger' });
  });

  it('rejects a body of the wrong shape with 400/422, not 500', async () => {
    const res = await inject({ method: 'POST', url: '/api/v1/markdown', headers: AUTH, payload: { Text: 'x', Wiki: 'maybe' } });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
  });
});

describe('POST /api/v1/markdown/raw', () => {
  it('renders the text body as a plain document', async () => {
    const res = await inject({
      method: 'POST',
      url: '/api/v1/markdown/raw',
      headers: { ...AUTH, 'content-type': 'text/plain' },
      payload: '**bold** [[Name|Link]]',
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('<p><strong>bold</strong> [[Name|Link]]</p>\n');
  });

  it('reads the body unparsed whatever its Content-Type', async () => {
    const res = await inject({
      method: 'POST',
      url: '/api/v1/markdown/raw',
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: '# not json',
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('<h1 id="user-content-not-json">not json</h1>\n');
  });

  it('requires a signed-in caller', async () => {
    const res = await inject({ method: 'POST', url: '/api/v1/markdown/raw', headers: { 'content-type': 'text/plain' }, payload: 'x' });
    expect(res.statusCode).toBe(401);
  });
});

describe('POST /api/v1/markup', () => {
  it('renders file mode by extension relative to the file folder', async () => {
    const res = await inject({
      method: 'POST',
      url: '/api/v1/markup',
      headers: AUTH,
      payload: { Mode: 'file', FilePath: 'docs/a.md', Context: '/o/r/src/branch/dev/docs', Text: '![i](p.png)' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('src="http://localhost:3000/o/r/media/branch/dev/docs/p.png"');
  });

  it('answers unknown modes and unsupported files with 422 text/plain', async () => {
    const mode = await inject({ method: 'POST', url: '/api/v1/markup', headers: AUTH, payload: { Mode: 'unknown', Text: '## Test' } });
    expect(mode.statusCode).toBe(422);
    expect(mode.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(mode.body).toBe('Unknown mode: unknown\n');
    const file = await inject({ method: 'POST', url: '/api/v1/markup', headers: AUTH, payload: { Mode: 'file', FilePath: 'path/test.unknown', Text: '## Test' } });
    expect(file.statusCode).toBe(422);
    expect(file.body).toBe('unsupported file to render: "path/test.unknown"\n');
  });

  it('links issue references in comment mode', async () => {
    const res = await inject({ method: 'POST', url: '/api/v1/markup', headers: AUTH, payload: { Mode: 'comment', Context: '/o/r', Text: 'closes #4' } });
    expect(res.body).toBe('<p>closes <a href="http://localhost:3000/o/r/issues/4" class="ref-issue" rel="nofollow">#4</a></p>\n');
  });
});
