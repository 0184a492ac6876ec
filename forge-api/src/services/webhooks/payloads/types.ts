/**
 * A chat service's payload for one event: the forge's own webhook payload (what a `gitea` hook
 * receives) in, the service's JSON body out; undefined for an event the service is not sent.
 * `meta` holds the hook's settings for that service (slack's channel, discord's username, ...),
 * `appUrl` the forge's ROOT_URL (user links).
 */
export type HookMeta = Record<string, string | undefined>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- payloads are the webhook JSON, read by field.
export type Converter = (eventType: string, payload: Record<string, any>, meta: HookMeta, appUrl: string) => unknown;

/**
 * The payload shape an event type carries (Gitea's newPayload grouping): the assign, label,
 * milestone and sync variants of issues and pull requests carry the same payload as the plain
 * event, so each converter handles a kind once; the three review events are one kind
 * (`pull_request_review`), told apart by the event type.
 */
export function payloadKind(eventType: string): string {
  if (eventType === 'issues' || /^issue_(assign|label|milestone)$/.test(eventType)) return 'issues';
  if (eventType === 'issue_comment' || eventType === 'pull_request_comment') return 'issue_comment';
  if (eventType === 'pull_request' || /^pull_request_(assign|label|milestone|sync|review_request)$/.test(eventType)) return 'pull_request';
  if (/^pull_request_review_(approved|rejected|comment)$/.test(eventType)) return 'pull_request_review';
  return eventType;
}
