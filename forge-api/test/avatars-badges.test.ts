/**
 * User and organization avatars (upload, the image served where avatar_url points, a large
 * upload cropped and scaled to 512 x 512, delete) and admin badges, over HTTP on SQLite and
 * PostgreSQL.
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { PNG } from 'pngjs';
import { processAvatarImage } from '../src/services/avatar-image';
import { BadgeService } from '../src/services/badges';
import { describeForge, PASSWORD } from './support/forge';

/** A PNG written without compression, so a smooth picture can be large in bytes. */
function storedPng(w: number, h: number, pixel: (x: number, y: number) => [number, number, number]): Buffer {
  const rows: Buffer[] = [];
  for (let y = 0; y < h; y++) {
    const row = Buffer.alloc(1 + w * 3);
    for (let x = 0; x < w; x++) row.set(pixel(x, y), 1 + x * 3);
    rows.push(row);
  }
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([Buffer.from(type), data])));
    return Buffer.concat([len, Buffer.from(type), data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(Buffer.concat(rows), { level: 0 })), chunk('IEND', Buffer.alloc(0))]);
}

// The pixel work does not touch the database: once, not per provider.
describe('avatar processing', () => {
  test('a large avatar is cropped to its centre square and scaled to 512 x 512 PNG; a large noisy one and a small one are kept', () => {
    // 330 x 300: 15 red columns on each side, the centre square a horizontal gradient.
    const big = storedPng(330, 300, (x) => (x < 15 || x >= 315 ? [255, 0, 0] : [Math.floor(((x - 15) * 255) / 299), 0, 200]));
    expect(big.length).toBeGreaterThan(262144);
    const out = processAvatarImage(big);
    const png = PNG.sync.read(out);
    expect([png.width, png.height]).toEqual([512, 512]);
    expect(out.length).toBeLessThan(big.length);
    // No red from the cropped sides: the left edge is dark, the right edge bright, blue kept.
    const px = (x: number, y: number) => [...png.data.subarray((y * 512 + x) * 4, (y * 512 + x) * 4 + 4)];
    expect(px(0, 256)[0]).toBeLessThan(5);
    expect(px(511, 256)[0]).toBeGreaterThan(250);
    expect(px(256, 256).slice(2)).toEqual([200, 255]);

    const noise = storedPng(300, 300, () => [...crypto.randomBytes(3)] as [number, number, number]);
    expect(processAvatarImage(noise).equals(noise)).toBe(true);
    const small = storedPng(4, 3, () => [1, 2, 3]);
    expect(processAvatarImage(small)).toBe(small);
    expect(() => processAvatarImage(Buffer.from('hello'), 'P: ')).toThrow('P: image.DecodeConfig: image: unknown format');
    expect(() => processAvatarImage(storedPng(1, 4097, () => [0, 0, 0]))).toThrow('image height is too large: 4097 > 4096');
  });
});

describeForge('avatars and badges', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const small = storedPng(4, 3, (x, y) => [x * 60, y * 80, 10]);

  beforeAll(async () => {
    await f().user('root', { admin: true });
    await f().user('ava');
    await f().user('other');
    expect((await f().request('POST', '/orgs', { ...as('ava'), body: { username: 'avaorg' } })).status).toBe(201);
  });

  const image = async (url: string) => {
    const res = await fetch(url);
    return { status: res.status, type: res.headers.get('content-type'), cache: res.headers.get('cache-control'), data: Buffer.from(await res.arrayBuffer()) };
  };

  test('a user avatar: upload, served at avatar_url as uploaded, delete back to the placeholder', async () => {
    const user = (await f().request('GET', '/user', as('ava'))).body;
    const before = user.avatar_url as string;
    let res = await f().request('POST', '/user/avatar', { ...as('ava'), body: { image: small.toString('base64') } });
    expect(res.status).toBe(204);
    const after = (await f().request('GET', '/users/ava', as('other'))).body.avatar_url as string;
    // Gitea's HashAvatar: sha256 of "<id>-" and the uploaded bytes.
    const hash = crypto.createHash('sha256').update(`${user.id}-`).update(small).digest('hex');
    expect(after).toBe(`${f().url}/avatars/${hash}`);
    const got = await image(after);
    expect(got).toMatchObject({ status: 200, type: 'image/png', cache: 'public, max-age=21600' });
    expect(got.data.equals(small)).toBe(true);

    expect((await f().request('POST', '/user/avatar', { ...as('ava'), body: { image: Buffer.from('hello').toString('base64') } })).status).toBe(422);
    res = await f().request('POST', '/user/avatar', { ...as('ava'), body: { image: '!!' } });
    expect(res).toMatchObject({ status: 400, body: { message: 'illegal base64 data at input byte 0' } });
    expect((await f().request('POST', '/user/avatar', { ...as('ava'), body: {} })).status).toBe(422);
    expect((await f().request('POST', '/user/avatar', { body: { image: small.toString('base64') } })).status).toBe(401);

    expect((await f().request('DELETE', '/user/avatar', as('ava'))).status).toBe(204);
    expect((await f().request('GET', '/user', as('ava'))).body.avatar_url).toBe(before);
    // The removed file is gone; its link, like any other, answers the placeholder picture.
    const gone = await image(after);
    expect(gone.status).toBe(200);
    expect(gone.data.equals(small)).toBe(false);
    expect(PNG.sync.read(gone.data).width).toBe(64);
    expect((await f().request('DELETE', '/user/avatar', as('ava'))).status).toBe(204);
  });

  test('an organization avatar: owners only', async () => {
    const body = { image: small.toString('base64') };
    expect((await f().request('POST', '/orgs/avaorg/avatar', { ...as('other'), body })).status).toBe(403);
    expect((await f().request('POST', '/orgs/nope/avatar', { ...as('ava'), body })).status).toBe(404);
    expect((await f().request('POST', '/orgs/avaorg/avatar', { ...as('ava'), body })).status).toBe(204);
    const org = (await f().request('GET', '/orgs/avaorg', as('other'))).body;
    expect(org.avatar_url).toBe(`${f().url}/avatars/${crypto.createHash('sha256').update(`${org.id}-`).update(small).digest('hex')}`);
    expect((await image(org.avatar_url)).data.equals(small)).toBe(true);
    expect((await f().request('DELETE', '/orgs/avaorg/avatar', as('other'))).status).toBe(403);
    expect((await f().request('DELETE', '/orgs/avaorg/avatar', as('ava'))).status).toBe(204);
    expect((await f().request('GET', '/orgs/avaorg', as('other'))).body.avatar_url).not.toBe(org.avatar_url);
  });

  test('admin badges: give, list with X-Total-Count, all-or-nothing, take away', async () => {
    const badges = new BadgeService(f().app.prisma);
    await badges.create({ slug: 'early', description: 'early adopter', imageUrl: 'https://example.com/early.png' });
    await badges.create({ slug: 'helper' });
    const path = '/admin/users/other/badges';
    let res = await f().request('GET', path, as('root'));
    expect(res).toMatchObject({ status: 200, body: [] });
    expect(res.headers.get('x-total-count')).toBe('0');
    expect((await f().request('POST', path, { ...as('root'), body: { badge_slugs: ['helper', 'early'] } })).status).toBe(204);
    res = await f().request('GET', path, as('root'));
    expect(res.body).toEqual([
      { ID: expect.any(Number), Slug: 'early', Description: 'early adopter', ImageURL: 'https://example.com/early.png' },
      { ID: expect.any(Number), Slug: 'helper', Description: '', ImageURL: '' },
    ]);
    expect(res.headers.get('x-total-count')).toBe('2');
    // A badge already given or an unknown slug refuses the whole request.
    expect((await f().request('POST', path, { ...as('root'), body: { badge_slugs: ['early'] } })).status).toBe(409);
    expect((await f().request('POST', path, { ...as('root'), body: { badge_slugs: ['zz'] } })).status).toBe(404);
    expect((await f().request('POST', path, { ...as('root'), body: {} })).status).toBe(422);
    expect((await f().request('POST', '/admin/users/nobody/badges', { ...as('root'), body: { badge_slugs: ['early'] } })).status).toBe(404);
    expect((await f().request('GET', path, as('other'))).status).toBe(403);
    expect((await f().request('DELETE', path, { ...as('root'), body: { badge_slugs: ['early', 'zz'] } })).status).toBe(204);
    expect((await f().request('GET', path, as('root'))).body.map((b: { Slug: string }) => b.Slug)).toEqual(['helper']);
  });
});
