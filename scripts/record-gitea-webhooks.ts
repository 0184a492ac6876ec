/**
 * Records what a real Gitea sends to webhooks of each type for the same events, as fixtures for
 * forge-api/test/webhook-payloads.test.ts: for every event, Gitea's own payload (the `gitea`
 * hook's body, which is what each type converts) next to each type's request (headers and body).
 *
 *   /work/shared/tools/gitea/start.sh 3477 /tmp/gitea-hooks     # a real Gitea 1.27.3
 *   AFTER_HOOKS='sqlite3 /tmp/gitea-hooks/data/gitea.db "UPDATE webhook SET meta=... WHERE type=..."' \
 *     (discord: {"username":"forge-bot","icon_url":"https://example.com/icon.png"};
 *      matrix: {"homeserver_url":"http://127.0.0.1","room_id":"!room:example.com","message_type":2};
 *      packagist: {"username":"pkg-user","api_token":"pkg-token","package_url":"https://packagist.org/packages/acme/hooked"})
 *   npx tsx scripts/record-gitea-webhooks.ts http://127.0.0.1:3477 TOKEN > forge-api/test/fixtures/gitea-webhook-payloads.json
 *
 * The scenario runs step by step and waits for every hook's delivery of a step before the next,
 * so the deliveries of one event can be paired by their X-Gitea-Event-Type.
 */
import { execSync } from 'node:child_process';
import { apiClient, expectStatus, hookConfig, record, RECORDED_EVENTS, RECORDED_TYPES, startReceiver } from '../forge-api/test/support/webhook-scenario';

async function main() {
  const [base, token] = process.argv.slice(2);
  if (!base || !token) throw new Error('usage: record-gitea-webhooks.ts GITEA_URL TOKEN');
  const api = apiClient(base, token);
  const me = await expectStatus(api('GET', '/user'), 200, 'user');
  const repo = `hooked-${Date.now().toString(36)}`;
  // The reviewer of the scenario's pull request (the token must be a site administrator's: it creates them and acts as them).
  const reviewer = `${repo}-reviewer`;
  await expectStatus(api('POST', '/admin/users', { username: reviewer, email: `${reviewer}@example.com`, password: `pw-${repo}-1`, must_change_password: false }), 201, 'reviewer');
  await expectStatus(api('POST', '/user/repos', { name: repo, auto_init: true, default_branch: 'main' }), 201, 'repo');
  const receiver = await startReceiver();
  try {
    for (const type of RECORDED_TYPES) {
      await expectStatus(
        api('POST', `/repos/${me.login}/${repo}/hooks`, { type, config: hookConfig(type, receiver.url), events: RECORDED_EVENTS, active: true, branch_filter: '*' }),
        201,
        `hook ${type}`,
      );
    }
    // Gitea's API stores no settings ("meta") for discord, matrix and packagist hooks, and Gitea
    // then fails every delivery of theirs ("meta json: unexpected end of JSON input"); hooks made
    // in its web UI have them. AFTER_HOOKS (e.g. an sqlite3 UPDATE of the webhook table) fills
    // them in before the events.
    if (process.env.AFTER_HOOKS) execSync(process.env.AFTER_HOOKS, { stdio: 'inherit' });
    const recorded = await record(api, me.login, repo, receiver, RECORDED_TYPES, { reviewer });
    process.stdout.write(JSON.stringify({ recordedFrom: (await api('GET', '/version')).body, receiver: receiver.url, owner: me.login, repo, events: recorded }, null, 2) + '\n');
  } finally {
    await receiver.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
