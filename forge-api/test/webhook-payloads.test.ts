/**
 * Chat-service webhook payloads against what a real Gitea 1.27.3 sent for the same events
 * (fixtures/gitea-webhook-payloads.json, recorded by scripts/record-gitea-webhooks.ts): each
 * converter gets Gitea's own payload of the event and must produce the body Gitea sent to that
 * service, byte for byte once parsed. The events: issue opened and commented, branches and tags
 * created and deleted, pushes, a pull request opened, labelled, its labels cleared, milestoned,
 * a review requested and withdrawn, reviewed (comment, changes requested, approved), a release.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CONVERTERS, serviceRequest } from '../src/services/webhooks/payloads';

interface Recorded {
  step: string;
  eventType: string;
  payload: Record<string, unknown>;
  requests: Record<string, { method: string; path: string; headers: Record<string, string>; body: unknown }>;
}

const fixture = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'gitea-webhook-payloads.json'), 'utf8')) as {
  recordedFrom: { version: string };
  receiver: string;
  events: Recorded[];
};
/** Gitea's ROOT_URL when it recorded: the base of its repository links. */
const appUrl = (fixture.events[0].payload.repository as { html_url: string }).html_url.replace(/[^/]+\/[^/]+$/, '');

/** The settings each recorded hook had (scripts/record-gitea-webhooks.ts hookConfig). */
const META: Record<string, Record<string, string>> = {
  slack: { channel: '#dev', username: 'forge-bot', icon_url: 'https://example.com/icon.png', color: '#336699' },
  discord: { username: 'forge-bot', icon_url: 'https://example.com/icon.png' },
  // Gitea's message_type 2 (its web form's "m.text"); the recorder set it in the hook's meta.
  matrix: { message_type: '2' },
  packagist: { username: 'pkg-user', api_token: 'pkg-token', package_url: 'https://packagist.org/packages/acme/hooked' },
};

describe(`chat webhook payloads as Gitea ${fixture.recordedFrom.version} sends them`, () => {
  const cases = fixture.events.flatMap((e) => Object.keys(CONVERTERS).map((type) => [type, e] as const));
  test.each(cases.map(([type, e]) => [type, `${e.step} (${e.eventType})`, type, e] as const))('%s: %s', (_t, _name, type, e) => {
    const sent = e.requests[type];
    const ours = CONVERTERS[type](e.eventType, e.payload, META[type] ?? {}, appUrl);
    if (!sent) {
      // Gitea sent this type nothing for the event (a push without commits, for one).
      expect(ours === undefined || e.eventType === 'push').toBe(true);
      return;
    }
    expect(ours).toEqual(sent.body);
    // The request around it: method, path (Matrix's transaction id is the body's SHA-1, so the
    // forge's bytes must be Gitea's) and whether Gitea's X-* headers go along.
    const req = serviceRequest(type, { url: `${fixture.receiver}/${type}`, httpMethod: 'POST', secret: '' }, ours);
    expect([req.method, new URL(req.url).pathname]).toEqual([sent.method, sent.path]);
    expect(req.giteaHeaders).toBe('x-gitea-event' in sent.headers);
  });

  test('every converter has a recorded case of each event the scenario makes', () => {
    for (const type of Object.keys(CONVERTERS)) {
      const covered = new Set(fixture.events.filter((e) => e.requests[type]).map((e) => e.eventType));
      const pulls = [
        'pull_request',
        'pull_request_assign',
        'pull_request_comment',
        'pull_request_label',
        'pull_request_milestone',
        'pull_request_review_approved',
        'pull_request_review_comment',
        'pull_request_review_rejected',
        'pull_request_review_request',
        'pull_request_sync',
      ];
      const issues = ['issue_assign', 'issue_comment', 'issue_label', 'issue_milestone', 'issues'];
      const all = ['create', 'delete', 'fork', ...issues, ...pulls, 'push', 'release', 'status', 'wiki'].sort();
      expect([...covered].sort()).toEqual(all);
    }
  });
});
