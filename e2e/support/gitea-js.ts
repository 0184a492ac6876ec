/** gitea-js clients of a listening test forge, logged in the way `tea login` does: a token made with the user's password. */
import { giteaApi } from 'gitea-js';
import { PASSWORD } from '../../forge-api/test/support/forge';

export type GiteaClient = ReturnType<typeof giteaApi>;

export function giteaClient(url: string, token?: string): GiteaClient {
  return giteaApi(url, token === undefined ? { customFetch: fetch } : { token, customFetch: fetch });
}

/** Request options sending `user`'s password as HTTP basic auth (what creating a token asks for). */
export function basicAuth(user: string) {
  return { headers: { Authorization: `Basic ${Buffer.from(`${user}:${PASSWORD}`).toString('base64')}` } };
}

/** A client holding a new token of `user` with these scopes. */
export async function tokenClient(url: string, user: string, scopes: string[]): Promise<GiteaClient> {
  const made = await giteaClient(url).users.userCreateToken(user, { name: 'cli', scopes }, basicAuth(user));
  return giteaClient(url, made.data.sha1 as string);
}
