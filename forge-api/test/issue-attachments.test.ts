/**
 * Attachments over HTTP on SQLite and PostgreSQL: multipart upload to issues and comments
 * (streamed to <dataDir>/attachments), list/get/rename/delete, the size limit (413), allowed
 * types (422), permissions, and downloads through browser_download_url (counted; private 404).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';

const LIMIT = 64 * 1024;

describeForge(
  'issue attachments',
  (f) => {
    const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
    const auth = (name: string) => `Basic ${Buffer.from(`${name}:${PASSWORD}`).toString('base64')}`;
    const r = '/repos/alice/files';
    let commentId: number;

    async function upload(url: string, user: string | null, name: string, content: Buffer | string, field = 'attachment') {
      const form = new FormData();
      form.append(field, new Blob([content]), name);
      const res = await fetch(`${f().api}${url}`, { method: 'POST', body: form, headers: user ? { authorization: auth(user) } : {} });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    }

    /** fetch that always reads the body, so no connection stays busy when the server closes. */
    async function get(url: string, headers: Record<string, string> = {}) {
      const res = await fetch(url, { headers });
      return { status: res.status, text: await res.text() };
    }

    beforeAll(async () => {
      for (const u of ['alice', 'bob', 'carl']) await f().user(u);
      await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'files' } });
      await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'vault', private: true } });
      await f().request('POST', `${r}/issues`, { ...as('bob'), body: { title: 'with files' } });
      await f().request('POST', '/repos/alice/vault/issues', { ...as('alice'), body: { title: 'private files' } });
      commentId = (await f().request('POST', `${r}/issues/1/comments`, { ...as('bob'), body: { body: 'see attached' } })).body.id;
    });

    describe('uploads and downloads', () => {
    // A rejected multipart upload can leave its socket mid-request; drop every connection so
    // the server's close (the harness's afterAll, which runs after this one) does not wait.
    afterAll(() => f().app.server.closeAllConnections());

    test('upload to an issue: 201, stored on disk, listed in assets, downloadable with a count', async () => {
      const res = await upload(`${r}/issues/1/assets`, 'bob', 'notes.txt', 'hello attachment');
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'notes.txt', size: 16, download_count: 0 });
      expect(res.body.uuid).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.body.browser_download_url).toBe(`${f().url}/attachments/${res.body.uuid}`);
      const u = res.body.uuid as string;
      expect(fs.readFileSync(path.join(f().dataDir, 'attachments', u[0], u[1], u), 'utf8')).toBe('hello attachment');
      const issue = await f().request('GET', `${r}/issues/1`);
      expect(issue.body.assets.map((a: { uuid: string }) => a.uuid)).toEqual([u]);
      const dl = await get(res.body.browser_download_url);
      expect(dl.status).toBe(200);
      expect(dl.text).toBe('hello attachment');
      await get(res.body.browser_download_url);
      const got = await f().request('GET', `${r}/issues/1/assets/${res.body.id}`);
      expect(got.body.download_count).toBe(2);
      expect((await f().request('GET', `${r}/issues/1/assets`)).body).toHaveLength(1);
    });

    test('?name= renames on upload; PATCH renames (201); DELETE removes row and file (204)', async () => {
      const res = await upload(`${r}/issues/1/assets?name=renamed.md`, 'alice', 'orig.md', '# x');
      expect(res.status).toBe(201);
      expect(res.body.name).toBe('renamed.md');
      let edit = await f().request('PATCH', `${r}/issues/1/assets/${res.body.id}`, { ...as('alice'), body: { name: 'final.md' } });
      expect(edit.status).toBe(201);
      expect(edit.body.name).toBe('final.md');
      edit = await f().request('PATCH', `${r}/issues/1/assets/${res.body.id}`, { ...as('carl'), body: { name: 'carl.md' } });
      expect(edit.status).toBe(403);
      expect((await f().request('DELETE', `${r}/issues/1/assets/${res.body.id}`, as('carl'))).status).toBe(403);
      expect((await f().request('DELETE', `${r}/issues/1/assets/${res.body.id}`, as('alice'))).status).toBe(204);
      const u = res.body.uuid as string;
      expect(fs.existsSync(path.join(f().dataDir, 'attachments', u[0], u[1], u))).toBe(false);
      expect((await f().request('GET', `${r}/issues/1/assets/${res.body.id}`)).status).toBe(404);
      expect((await get(`${f().url}/attachments/${u}`)).status).toBe(404);
    });

    test('too large: 413 with a message and nothing kept; bad type 422; missing field 422; anonymous 401; reader 403', async () => {
      const before = await f().app.prisma.attachment.count();
      const big = await upload(`${r}/issues/1/assets`, 'bob', 'big.txt', Buffer.alloc(LIMIT + 1, 97));
      expect(big.status).toBe(413);
      expect(big.body.message).toContain('too large');
      const bad = await upload(`${r}/issues/1/assets`, 'bob', 'tool.exe', 'MZ');
      expect(bad.status).toBe(422);
      expect((await upload(`${r}/issues/1/assets`, 'bob', 'a.txt', 'x', 'file')).status).toBe(422);
      expect((await upload(`${r}/issues/1/assets`, null, 'a.txt', 'x')).status).toBe(401);
      expect((await upload(`${r}/issues/1/assets`, 'carl', 'a.txt', 'x')).status).toBe(403);
      expect(await f().app.prisma.attachment.count()).toBe(before);
      expect((await upload(`${r}/issues/1/assets`, 'bob', 'fits.txt', Buffer.alloc(LIMIT, 97))).status).toBe(201);
    });

    test('comment attachments: upload by the poster, list, shown in the comment, others 403', async () => {
      const res = await upload(`${r}/issues/comments/${commentId}/assets`, 'bob', 'shot.png', Buffer.from([137, 80, 78, 71]));
      expect(res.status).toBe(201);
      expect((await upload(`${r}/issues/comments/${commentId}/assets`, 'carl', 'x.png', 'x')).status).toBe(403);
      const list = await f().request('GET', `${r}/issues/comments/${commentId}/assets`);
      expect(list.body.map((a: { name: string }) => a.name)).toEqual(['shot.png']);
      const comment = await f().request('GET', `${r}/issues/comments/${commentId}`);
      expect(comment.body.assets.map((a: { id: number }) => a.id)).toEqual([res.body.id]);
      // a comment attachment is not an issue attachment
      expect((await f().request('GET', `${r}/issues/1/assets/${res.body.id}`)).status).toBe(404);
      const edit = await f().request('PATCH', `${r}/issues/comments/${commentId}/assets/${res.body.id}`, { ...as('bob'), body: { name: 'screen.png' } });
      expect(edit.status).toBe(201);
      expect((await f().request('DELETE', `${r}/issues/comments/${commentId}/assets/${res.body.id}`, as('bob'))).status).toBe(204);
    });

    test('private repository: outsiders get 404 for the assets and the download', async () => {
      const res = await upload('/repos/alice/vault/issues/1/assets', 'alice', 'secret.txt', 'classified');
      expect(res.status).toBe(201);
      expect((await f().request('GET', '/repos/alice/vault/issues/1/assets', as('carl'))).status).toBe(404);
      expect((await get(res.body.browser_download_url)).status).toBe(404);
      expect((await get(res.body.browser_download_url, { authorization: auth('carl') })).status).toBe(404);
      const own = await get(res.body.browser_download_url, { authorization: auth('alice') });
      expect(own.status).toBe(200);
      expect(own.text).toBe('classified');
    });
    });
  },
  { attachmentMaxSize: LIMIT },
);
