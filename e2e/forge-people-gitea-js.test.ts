/**
 * Gitea's JavaScript client (gitea-js) driving the people side of a listening forge on SQLite and
 * PostgreSQL: following, blocking (seen from the blocked user's side), e-mail addresses,
 * settings, watched repositories, the heatmap and the activity feeds, and managing an
 * organization (edit, membership checks, public memberships, removing a member, deleting it),
 * through the client's own paths, methods, query parameters and bodies.
 */
import { describeForge } from '../forge-api/test/support/forge';
import { tokenClient, type GiteaClient } from './support/gitea-js';

describeForge('gitea-js people', (f) => {
  let owner: GiteaClient;
  let pest: GiteaClient;
  let friend: GiteaClient;
  beforeAll(async () => {
    for (const u of ['keeper', 'pest', 'friend']) await f().user(u);
    const scopes = ['write:repository', 'write:issue', 'write:user', 'write:organization'];
    owner = await tokenClient(f().url, 'keeper', scopes);
    pest = await tokenClient(f().url, 'pest', scopes);
    friend = await tokenClient(f().url, 'friend', scopes);
    await owner.user.createCurrentUserRepo({ name: 'orchard' });
    await owner.user.createCurrentUserRepo({ name: 'cellar', private: true });
    await owner.repos.issueCreateIssue('keeper', 'orchard', { title: 'Apples' });
  });

  test('follow, list, check and unfollow', async () => {
    expect((await friend.user.userCurrentPutFollow('keeper')).status).toBe(204);
    expect((await pest.user.userCurrentPutFollow('keeper')).status).toBe(204);
    const followers = await owner.users.userListFollowers('keeper', { limit: 1 });
    expect(followers.data.map((u) => u.login)).toEqual(['pest']);
    expect(followers.headers.get('x-total-count')).toBe('2');
    expect((await owner.user.userCurrentListFollowers()).data.map((u) => u.login)).toEqual(['pest', 'friend']);
    expect((await friend.user.userCurrentListFollowing()).data.map((u) => u.login)).toEqual(['keeper']);
    expect((await owner.users.userCheckFollowing('friend', 'keeper')).status).toBe(204);
    expect((await friend.user.userCurrentCheckFollowing('keeper')).status).toBe(204);
    expect((await friend.user.userCurrentDeleteFollow('keeper')).status).toBe(204);
    await expect(friend.user.userCurrentCheckFollowing('keeper')).rejects.toMatchObject({ status: 404 });
    expect((await owner.users.userGet('keeper')).data.followers_count).toBe(1);
  });

  test('a block with a note, as the blocked user sees it', async () => {
    await pest.user.userCurrentPutStar('keeper', 'orchard');
    expect((await owner.user.userBlockUser('pest', { note: 'rude' })).status).toBe(204);
    expect((await owner.user.userListBlocks()).data.map((u) => u.login)).toEqual(['pest']);
    expect((await owner.user.userCheckUserBlock('pest')).status).toBe(204);
    // The follow and the star are gone; following, starring, watching, opening issues and commenting are refused.
    await expect(pest.user.userCurrentCheckFollowing('keeper')).rejects.toMatchObject({ status: 404 });
    await expect(pest.user.userCurrentCheckStarring('keeper', 'orchard')).rejects.toMatchObject({ status: 404 });
    await expect(pest.user.userCurrentPutFollow('keeper')).rejects.toMatchObject({ status: 403, error: { message: 'user is blocked' } });
    await expect(pest.user.userCurrentPutStar('keeper', 'orchard')).rejects.toMatchObject({ status: 403 });
    await expect(pest.repos.userCurrentPutSubscription('keeper', 'orchard')).rejects.toMatchObject({ status: 403 });
    await expect(pest.repos.issueCreateIssue('keeper', 'orchard', { title: 'Hi' })).rejects.toMatchObject({ status: 403 });
    await expect(pest.repos.issueCreateComment('keeper', 'orchard', 1, { body: 'Hi' })).rejects.toMatchObject({ status: 403 });
    // Someone else is not affected.
    expect((await friend.repos.issueCreateComment('keeper', 'orchard', 1, { body: 'Nice' })).status).toBe(201);
    expect((await owner.user.userUnblockUser('pest')).status).toBe(204);
    expect((await pest.user.userCurrentPutFollow('keeper')).status).toBe(204);
  });

  test('organization blocks by its owner', async () => {
    await owner.orgs.orgCreate({ username: 'growers' });
    await owner.orgs.createOrgRepo('growers', { name: 'seeds' });
    expect((await owner.orgs.organizationBlockUser('growers', 'pest', { note: 'again' })).status).toBe(204);
    expect((await owner.orgs.organizationListBlocks('growers')).data.map((u) => u.login)).toEqual(['pest']);
    await expect(pest.user.userCurrentPutStar('growers', 'seeds')).rejects.toMatchObject({ status: 403 });
    await expect(friend.orgs.organizationCheckUserBlock('growers', 'pest')).rejects.toMatchObject({ status: 403 });
    expect((await owner.orgs.organizationUnblockUser('growers', 'pest')).status).toBe(204);
  });

  test('e-mail addresses and settings', async () => {
    const added = await friend.user.userAddEmail({ emails: ['friend.alt@example.com'] });
    expect(added.status).toBe(201);
    expect(added.data.find((e) => e.email === 'friend.alt@example.com')).toMatchObject({ primary: false, verified: true });
    expect((await friend.user.userListEmails()).data).toHaveLength(2);
    expect((await friend.user.userDeleteEmail({ emails: ['friend.alt@example.com'] })).status).toBe(204);
    await expect(friend.user.userDeleteEmail({ emails: ['friend.alt@example.com'] })).rejects.toMatchObject({ status: 404 });
    const settings = await friend.user.updateUserSettings({ location: 'Fields', hide_activity: true });
    expect(settings.data).toMatchObject({ location: 'Fields', hide_activity: true, theme: 'gitea-auto' });
    expect((await friend.user.getUserSettings()).data.location).toBe('Fields');
  });

  test('watched repositories, heatmap and feeds', async () => {
    const mine = await owner.user.userCurrentListSubscriptions();
    // The private repository is in the watcher's own list only.
    expect(mine.data.map((r) => r.full_name)).toEqual(['keeper/orchard', 'keeper/cellar', 'growers/seeds']);
    expect(mine.headers.get('x-total-count')).toBe('3');
    expect((await friend.users.userListSubscriptions('keeper')).data.map((r) => r.full_name)).toEqual(['keeper/orchard', 'growers/seeds']);
    const heatmap = await friend.users.userGetHeatmapData('keeper');
    const days = heatmap.data as unknown as { timestamp: number; contributions: number }[];
    expect(days.reduce((n, d) => n + d.contributions, 0)).toBeGreaterThanOrEqual(2);
    const feed = await friend.users.userListActivityFeeds('keeper', { 'only-performed-by': true });
    expect(feed.data.map((a) => a.op_type)).toEqual(expect.arrayContaining(['create_repo', 'create_issue']));
    const orgFeed = await friend.orgs.orgListActivityFeeds('growers');
    expect(orgFeed.data.map((a) => a.repo?.full_name)).toContain('growers/seeds');
  });

  test('managing an organization: edit, membership, public membership, removal, delete', async () => {
    await owner.orgs.orgCreate({ username: 'pickers' });
    const edited = await owner.orgs.orgEdit('pickers', { full_name: 'The Pickers', location: 'Hill' });
    expect(edited.data).toMatchObject({ name: 'pickers', full_name: 'The Pickers', location: 'Hill' });
    await expect(friend.orgs.orgEdit('pickers', { full_name: 'x' })).rejects.toMatchObject({ status: 403 });
    const team = await owner.orgs.orgCreateTeam('pickers', { name: 'hands', permission: 'read', units: ['repo.code'] } as never);
    await owner.teams.orgAddTeamMember(team.data.id as number, 'friend');
    expect((await owner.orgs.orgIsMember('pickers', 'friend')).status).toBe(204);
    await expect(owner.orgs.orgIsPublicMember('pickers', 'friend')).rejects.toMatchObject({ status: 404 });
    expect((await friend.orgs.orgPublicizeMember('pickers', 'friend')).status).toBe(204);
    expect((await pest.orgs.orgIsPublicMember('pickers', 'friend')).status).toBe(204);
    expect((await friend.orgs.orgConcealMember('pickers', 'friend')).status).toBe(204);
    expect((await owner.orgs.orgDeleteMember('pickers', 'friend')).status).toBe(204);
    await expect(owner.orgs.orgIsMember('pickers', 'friend')).rejects.toMatchObject({ status: 404 });
    expect((await owner.orgs.orgDelete('pickers')).status).toBe(204);
    await expect(owner.orgs.orgGet('pickers')).rejects.toMatchObject({ status: 404 });
  });
});
