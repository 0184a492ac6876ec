/** Template and server-info endpoints of the miscellaneous plugin (fastify.inject). */
import Fastify, { FastifyInstance } from 'fastify';
import miscRoutes from '../src/routes/miscellaneous';
import { listen, TestResponse, RequestOptions } from './git-test-server';

let app: FastifyInstance;
let inject: (opts: RequestOptions | string) => Promise<TestResponse>;

beforeAll(async () => {
  app = Fastify();
  await app.register(miscRoutes, {
    prefix: '/api/v1',
    deps: {
      rootUrl: 'http://forge.test/',
      version: '1.25.0',
      usage: async () => ({ users: { total: 3, activeMonth: 2, activeHalfyear: 3 }, localPosts: 5, localComments: 8 }),
    },
  });
  inject = await listen(app);
});
afterAll(() => app.close());

const notFoundBody = { message: 'not found', url: 'http://forge.test/api/swagger', errors: null };

describe('gitignore templates', () => {
  it('lists names and returns {name, source}', async () => {
    const list = await inject('/api/v1/gitignore/templates');
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual(expect.arrayContaining(['Go', 'Node', 'Python']));
    const one = await inject('/api/v1/gitignore/templates/Node');
    expect(one.statusCode).toBe(200);
    expect(one.json().name).toBe('Node');
    expect(one.json().source).toContain('node_modules/');
  });
  it('404s unknown names', async () => {
    const res = await inject('/api/v1/gitignore/templates/Nope');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(notFoundBody);
  });
});

describe('license templates', () => {
  it('lists {key, name, url} entries', async () => {
    const res = await inject('/api/v1/licenses');
    expect(res.statusCode).toBe(200);
    const list = res.json();
    expect(list).toHaveLength(28);
    expect(list).toContainEqual({ key: 'MIT', name: 'MIT', url: 'http://forge.test/api/v1/licenses/MIT' });
  });
  it('returns the body and implementation of one license', async () => {
    const res = await inject('/api/v1/licenses/Apache-2.0');
    expect(res.statusCode).toBe(200);
    const info = res.json();
    expect(info).toMatchObject({ key: 'Apache-2.0', name: 'Apache-2.0', url: 'http://forge.test/api/v1/licenses/Apache-2.0' });
    expect(info.body).toContain('Apache License');
    expect(info.implementation).toMatch(/^Create a text file \(typically named LICENSE or LICENSE.txt\)/);
  });
  it('404s unknown names', async () => {
    expect((await inject('/api/v1/licenses/NOPE-1.0')).statusCode).toBe(404);
  });
});

describe('label templates', () => {
  it('lists set names and returns labels without # in colors', async () => {
    expect((await inject('/api/v1/label/templates')).json()).toEqual(['Advanced', 'Default']);
    const res = await inject('/api/v1/label/templates/Default');
    expect(res.statusCode).toBe(200);
    expect(res.json()[0]).toEqual({ name: 'bug', exclusive: false, color: 'ee0701', description: 'Something is not working' });
    const adv = (await inject('/api/v1/label/templates/Advanced')).json();
    expect(adv.find((l: { name: string }) => l.name === 'Status/Blocked')).toEqual({
      name: 'Status/Blocked',
      exclusive: true,
      color: '880e4f',
      description: 'Something is blocking this issue or pull request',
    });
  });
  it('404s unknown sets', async () => {
    const res = await inject('/api/v1/label/templates/Fancy');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(notFoundBody);
  });
});

describe('nodeinfo', () => {
  it('answers NodeInfo 2.1 with usage counts', async () => {
    const res = await inject('/api/v1/nodeinfo');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      version: '2.1',
      software: { name: 'portcullis-forge', version: '1.25.0', repository: '', homepage: 'http://forge.test/' },
      protocols: ['activitypub'],
      services: { inbound: [], outbound: ['rss2.0'] },
      openRegistrations: false,
      usage: { users: { total: 3, activeHalfyear: 3, activeMonth: 2 }, localPosts: 5, localComments: 8 },
      metadata: {},
    });
  });
});
