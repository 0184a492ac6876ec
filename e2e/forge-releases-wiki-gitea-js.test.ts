/**
 * Gitea's JavaScript client (gitea-js) driving topics, releases (with an asset uploaded and
 * downloaded back byte for byte) and wiki pages of a listening forge on SQLite and PostgreSQL,
 * through the client's own paths, methods and bodies.
 */
import { describeForge } from '../forge-api/test/support/forge';
import { tokenClient, type GiteaClient } from './support/gitea-js';

describeForge('gitea-js topics, releases, wiki', (f) => {
  let owner: GiteaClient;
  beforeAll(async () => {
    await f().user('maker');
    owner = await tokenClient(f().url, 'maker', ['write:repository', 'write:user']);
    await owner.user.createCurrentUserRepo({ name: 'tool', auto_init: true });
  });

  test('topics: replace, list, search; the repository shows them', async () => {
    expect((await owner.repos.repoUpdateTopics('maker', 'tool', { topics: ['CLI', 'golang'] })).status).toBe(204);
    expect((await owner.repos.repoListTopics('maker', 'tool')).data.topics).toEqual(['cli', 'golang']);
    const found = await owner.topics.topicSearch({ q: 'gol' });
    // gitea-js types this answer as a bare array; Gitea sends {topics: [...]}.
    expect((found.data as unknown as { topics: { topic_name: string }[] }).topics.map((t) => t.topic_name)).toEqual(['golang']);
    expect((await owner.repos.repoGet('maker', 'tool')).data.topics).toEqual(['cli', 'golang']);
  });

  test('release with an asset uploaded and downloaded back byte for byte', async () => {
    const rel = await owner.repos.repoCreateRelease('maker', 'tool', { tag_name: 'v1.0.0', name: 'One', body: 'first' });
    expect(rel.status).toBe(201);
    const bytes = new Uint8Array([0, 1, 2, 3, 254, 255, 10]);
    const up = await owner.repos.repoCreateReleaseAttachment('maker', 'tool', rel.data.id as number, { attachment: new File([bytes], 'tool-linux.bin') });
    expect(up.status).toBe(201);
    expect(up.data).toMatchObject({ name: 'tool-linux.bin', size: bytes.length });
    const byTag = await owner.repos.repoGetReleaseByTag('maker', 'tool', 'v1.0.0');
    expect(byTag.data.assets?.map((a) => a.name)).toEqual(['tool-linux.bin']);
    const res = await fetch(byTag.data.assets?.[0].browser_download_url as string);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    expect((await owner.repos.repoListReleases('maker', 'tool')).data.map((r) => r.tag_name)).toEqual(['v1.0.0']);
  });

  test('wiki: create, read, list', async () => {
    const made = await owner.repos.repoCreateWikiPage('maker', 'tool', { title: 'Getting Started', content_base64: Buffer.from('# Start').toString('base64') });
    expect(made.status).toBe(201);
    expect(made.data.sub_url).toBe('Getting-Started');
    const page = await owner.repos.repoGetWikiPage('maker', 'tool', 'Getting-Started');
    expect(Buffer.from(page.data.content_base64 as string, 'base64').toString()).toBe('# Start');
    expect((await owner.repos.repoGetWikiPages('maker', 'tool')).data.map((p) => p.title)).toEqual(['Getting Started']);
  });
});
