import { bool, dateTime, int, obj, str } from './common';

/** structs.User */
export const UserSchema = obj(
  {
    id: int,
    login: str,
    login_name: str,
    source_id: int,
    full_name: str,
    email: str,
    avatar_url: str,
    html_url: str,
    language: str,
    is_admin: bool,
    last_login: dateTime,
    created: dateTime,
    restricted: bool,
    active: bool,
    prohibit_login: bool,
    location: str,
    website: str,
    description: str,
    visibility: str,
    followers_count: int,
    following_count: int,
    starred_repos_count: int,
    username: str,
  },
  [],
  { $id: 'User' },
);

/** structs.AccessToken */
export const AccessTokenSchema = obj(
  {
    id: int,
    name: str,
    sha1: str,
    token_last_eight: str,
    scopes: { type: 'array', items: str },
    created_at: dateTime,
    last_used_at: dateTime,
  },
  [],
  { $id: 'AccessToken' },
);

export const EmailSchema = obj({ email: str, verified: bool, primary: bool, user_id: int, username: str }, [], { $id: 'Email' });

export const PublicKeySchema = obj(
  {
    id: int,
    key: str,
    url: str,
    title: str,
    fingerprint: str,
    created_at: dateTime,
    last_used_at: dateTime,
    user: { $ref: 'User#' },
    read_only: bool,
    key_type: str,
  },
  [],
  { $id: 'PublicKey' },
);

export const CronSchema = obj({ name: str, schedule: str, next: dateTime, prev: dateTime, exec_times: int }, [], { $id: 'Cron' });

/** structs.OAuth2Application */
export const OAuth2ApplicationSchema = obj(
  {
    id: int,
    name: str,
    client_id: str,
    client_secret: str,
    confidential_client: bool,
    skip_secondary_authorization: bool,
    redirect_uris: { type: 'array', items: str },
    created: dateTime,
  },
  [],
  { $id: 'OAuth2Application' },
);
