/**
 * A chat service's payload for one event: the forge's own webhook payload (what a `gitea` hook
 * receives) in, the service's JSON body out; undefined for an event the service is not sent.
 * `meta` holds the hook's settings for that service (slack's channel, discord's username, ...),
 * `appUrl` the forge's ROOT_URL (user links).
 */
export type HookMeta = Record<string, string | undefined>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- payloads are the webhook JSON, read by field.
export type Converter = (eventType: string, payload: Record<string, any>, meta: HookMeta, appUrl: string) => unknown;
