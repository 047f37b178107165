/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { asUser, personToken, type User } from '../support/client';
import { accessibilityViolations, launchBrowser, newPage, problemsOf, screenshot } from '../support/browser';
import { createToken, revokeToken } from '../../src/domain/tokens/service';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sharedFolder } from '../support/trees';

/**
 * The web console in Debian's Chromium, against the whole stack: what a person does and sees. Every
 * page is checked with axe-core and photographed at 1400×900 into test-output/screenshots/.
 */
describe('the web console in a real browser', () => {
  let bosun: Bosun;
  let browser: Browser;
  let ops: User;
  let page: Page;

  beforeAll(async () => {
    // Transfers capped at 2 MiB/s: a 6 MiB copy lasts long enough to watch its progress.
    bosun = await startBosun({ transferMaxBytesPerSecond: 2 * 1024 * 1024 });
    ops = await asUser(bosun, 'console-e2e');
    browser = await launchBrowser();
    page = await newPage(browser);
  });
  afterAll(async () => {
    await browser?.close();
    ops?.close();
    await bosun?.stop();
  });

  const expectAccessible = async (p: Page) => expect(await accessibilityViolations(p)).toEqual([]);
  const signIn = async (p: Page, token: string) => {
    await p.getByLabel('API token').fill(token);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('button', { name: 'Sign out' }).waitFor();
  };

  test('signing in: the token is exchanged for an HttpOnly cookie, and nothing of it is left in the page', async () => {
    await page.goto(`${bosun.url}/`);
    await page.waitForURL(/\/sign-in/);
    await expectAccessible(page);
    await screenshot(page, 'sign-in');
    await page.getByLabel('API token').fill('bsn_wrongwrongwrongwrongwrongwrongwrongwrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The token is unknown or has been revoked' }).waitFor();

    await signIn(page, ops.token);
    await page.waitForURL(`${bosun.url}/dashboard`);
    const stored = await page.evaluate(() => ({ cookie: document.cookie, local: JSON.stringify(localStorage), session: JSON.stringify(sessionStorage) }));
    expect(stored).toEqual({ cookie: '', local: '{}', session: '{}' });
    const cookies = await page.context().cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([['bosun_session', true, 'Strict']]);
    expect(JSON.stringify(cookies)).not.toContain(ops.token);
  });

  test('adding a server with a pasted key: it appears, verifies before one’s eyes, and its page shows the pinned host key', async () => {
    await page.goto(`${bosun.url}/servers`);
    await page.getByRole('button', { name: 'Add a server' }).click();
    const { sshd } = bosun;
    await page.getByLabel('Title').fill('web-1');
    await page.getByLabel('Host', { exact: true }).fill(sshd.host);
    await page.getByLabel('Port').fill(String(sshd.port));
    await page.getByLabel('User').fill(sshd.username);
    await page.getByLabel('Tags', { exact: true }).last().fill('web eu');
    await page.getByRole('textbox', { name: /Private key/ }).fill(sshd.privateKey);
    await page.getByRole('button', { name: 'Add and verify' }).click();
    const row = page.locator('tr[data-server="web-1"]');
    await row.waitFor();
    await row.getByText('verified', { exact: true }).waitFor({ timeout: 30_000 });
    // The key went to the API and nowhere the page keeps.
    expect(await page.content()).not.toContain(sshd.privateKey.split('\n')[1]!);
    await expectAccessible(page);
    await screenshot(page, 'servers');

    await row.getByRole('link', { name: 'web-1' }).click();
    await page.getByRole('heading', { name: /web-1/ }).waitFor();
    const pinned = (await ops.listServers()).data.find((s: { title: string }) => s.title === 'web-1')!;
    const detail = await ops.getServer(pinned.id);
    await page.getByText(detail.host_key_fingerprint).waitFor();
    await page.locator('dd').filter({ hasText: 'directly' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'server');
  });

  test('adding a server through a jump host: the verified servers are offered, it verifies through the hop, and its page shows the route', async () => {
    await page.goto(`${bosun.url}/servers`);
    await page.getByRole('button', { name: 'Add a server' }).click();
    const { sshd } = bosun;
    await page.getByLabel('Title').fill('inner-1');
    // Another loopback address of the same sshd, reached through web-1's SSH connection (direct-tcpip).
    await page.getByLabel('Host', { exact: true }).fill('127.0.0.2');
    await page.getByLabel('Port').fill(String(sshd.port));
    await page.getByLabel('User').fill(sshd.username);
    await page.getByLabel('Jump host').selectOption({ label: `web-1 (${sshd.username}@${sshd.host}:${sshd.port})` });
    await page.getByRole('textbox', { name: /Private key/ }).fill(sshd.privateKey);
    await page.getByRole('button', { name: 'Add and verify' }).click();
    const row = page.locator('tr[data-server="inner-1"]');
    await row.getByText('verified', { exact: true }).waitFor({ timeout: 30_000 });
    const hop = (await ops.listServers()).data.find((s: { title: string }) => s.title === 'web-1')!;
    const inner = (await ops.listServers()).data.find((s: { title: string }) => s.title === 'inner-1')!;
    expect((await ops.getServer(inner.id)).via).toEqual([hop.id]);

    await row.getByRole('link', { name: 'inner-1' }).click();
    const route = page.locator('[data-route]');
    await route.getByRole('link', { name: `web-1 (${sshd.username}@${sshd.host}:${sshd.port})` }).waitFor();
    expect(await route.getByRole('link').getAttribute('href')).toBe(`/servers/${hop.id}`);
    await expectAccessible(page);
    await screenshot(page, 'server-through-jump-host');
  });

  test('running a deployment from its page: the log streams live, then a deep link to a line scrolls to it and highlights it', async () => {
    const serverId = (await ops.listServers()).data.find((s: { title: string }) => s.title === 'web-1')!.id;
    const deployment = await ops.define({
      name: 'release-web',
      server_id: serverId,
      parameters: [{ name: 'version', required: true, pattern: '[0-9.]+' }],
      steps: [
        { name: 'announce', command: 'echo "deploying $BOSUN_PARAM_VERSION"' },
        { name: 'roll', command: 'for i in $(seq 1 12); do echo "line-$i"; sleep 0.4; done' },
      ],
    });
    await page.goto(`${bosun.url}/deployments`);
    await page.getByRole('link', { name: 'release-web' }).click();
    await page.getByLabel(/version/).fill('1.4.2');
    await page.getByRole('button', { name: 'Preview the plan' }).click();
    await page.getByText('BOSUN_PARAM_VERSION=1.4.2').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'deployment');
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.waitForURL(/\/runs\/[0-9a-f]{24}$/);
    const runId = page.url().split('/').pop()!;

    // Live: a line shows while the run still runs.
    const log = page.getByRole('log', { name: 'Output of roll' });
    await log.getByText('line-3', { exact: true }).waitFor({ timeout: 20_000 });
    expect((await ops.getRun(deployment.id, runId)).status).toBe('running');
    await screenshot(page, 'run-live');
    await page.locator('h1').getByText('success').waitFor({ timeout: 30_000 });
    await log.getByText('line-12', { exact: true }).waitFor();
    expect(await page.getByRole('log', { name: 'Output of announce' }).innerText()).toContain('deploying 1.4.2');
    await expectAccessible(page);
    await screenshot(page, 'run');

    const linked = await newPage(browser);
    await linked.context().addCookies(await page.context().cookies());
    await linked.goto(`${bosun.url}/deployments/${deployment.id}/runs/${runId}#L2-7`);
    const line = linked.locator('#L2-7');
    await line.waitFor();
    expect(await line.getAttribute('class')).toContain('log-line-target');
    expect(await line.innerText()).toContain('line-7');
    await expectAccessible(linked);
    await screenshot(linked, 'run-deep-link');
    expect(problemsOf(linked)).toEqual([]);
    await linked.close();
  });

  test('cancelling a running run from its page stops it, as the API then says too', async () => {
    const serverId = (await ops.listServers()).data.find((s: { title: string }) => s.title === 'web-1')!.id;
    const deployment = await ops.define({ name: 'long-one', server_id: serverId, steps: [{ name: 'wait', command: 'echo waiting; sleep 60' }] });
    await page.goto(`${bosun.url}/deployments/${deployment.id}`);
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.getByRole('log', { name: 'Output of wait' }).getByText('waiting').waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: 'Cancel the run' }).click();
    await page.locator('h1').getByText('cancelled').waitFor({ timeout: 30_000 });
    const runId = page.url().split('/').pop()!;
    expect((await ops.getRun(deployment.id, runId)).status).toBe('cancelled');
    await expect(page.getByRole('button', { name: 'Cancel the run' }).count()).resolves.toBe(0);
  });

  test('everything is reachable by keyboard: from the top of a deployment’s page, Tab reaches its Run button', async () => {
    const deployment = (await ops.listDeployments()).find((d: { name: string }) => d.name === 'long-one')!;
    await page.goto(`${bosun.url}/deployments/${deployment.id}`);
    await page.getByRole('button', { name: 'Run now' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    let reached = false;
    for (let i = 0; i < 30 && !reached; i += 1) {
      await page.keyboard.press('Tab');
      reached = (await page.evaluate(() => document.activeElement?.textContent)) === 'Run now';
    }
    expect(reached).toBe(true);
  });

  test('the command policy page: an administrator makes "change" steps wait for a person', async () => {
    await page.goto(`${bosun.url}/policy`);
    const form = page.getByRole('form', { name: 'Command policy' });
    await form.getByLabel('change', { exact: true }).check();
    await form.getByLabel(/may run at all/).check();
    await page.getByRole('button', { name: 'Save the policy' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    const policy = (await bosun.api.get('/api/v1/policy').set(bearer(ops.token))).body.data;
    expect(policy).toEqual({ allow_destructive: true, require_approval_for: expect.arrayContaining(['change', 'destructive']), agents_require_approval_for_change: true, managed_by: null });
    // Letting agents' changes run is one box; saving the page keeps what is not touched.
    await form.getByLabel(/an agent’s change steps wait/).uncheck();
    await page.getByRole('button', { name: 'Save the policy' }).click();
    await eventually(async () => (await bosun.api.get('/api/v1/policy').set(bearer(ops.token))).body.data.agents_require_approval_for_change, (v) => v === false);
    await form.getByLabel(/an agent’s change steps wait/).check();
    await page.getByRole('button', { name: 'Save the policy' }).click();
    await eventually(async () => (await bosun.api.get('/api/v1/policy').set(bearer(ops.token))).body.data, (v) => v.agents_require_approval_for_change === true && v.allow_destructive === true);
    await expectAccessible(page);
    await screenshot(page, 'policy');
  });

  test('a migration: a risky copy waits in the thread, is approved in the page (recording who), shows its progress, then a follow-up runs', async () => {
    const work = sharedFolder('bosun-e2e-move-');
    const from = path.join(work, 'www');
    mkdirSync(from);
    writeFileSync(path.join(from, 'index.html'), '<h1>shop</h1>\n');
    writeFileSync(path.join(from, 'catalogue.bin'), Buffer.alloc(6 * 1024 * 1024, 3));
    const to = path.join(work, 'srv');
    await ops.addServer({ host: '127.0.0.3', title: 'new-1' });

    await page.goto(`${bosun.url}/migration-plans`);
    await page.getByRole('button', { name: 'New migration plan' }).click();
    await page.getByLabel('Title').fill('move the shop');
    await page.getByLabel('From (source)').selectOption({ label: 'web-1' });
    await page.getByLabel('To (target)').selectOption({ label: 'new-1' });
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'move the shop' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'migration-plan');

    await page.getByLabel('Instruction').fill(`copy ${from} to ${to}`);
    await page.getByRole('button', { name: 'Plan and run' }).click();
    await page.waitForURL(/\/conversations\/[0-9a-f]{24}$/);
    const conversationId = page.url().split('/').pop()!;
    // Planning and the policy's check, then the wait: a minute, like the other waits for a run here (30 s fell short once on a loaded clean-clone run).
    await page
      .locator('h1')
      .getByText('awaiting_approval')
      .waitFor({ timeout: 60_000 })
      .catch(async (error) => {
        const seen = (await ops.request('get', `/conversations/${conversationId}`)).body.data;
        throw new Error(`${(error as Error).message}\nthe API's conversation: ${JSON.stringify({ status: seen?.status, steps: seen?.steps?.map((st: { status: string }) => st.status) })}`);
      });
    await page.locator('.risk-change').first().waitFor();
    // Nothing ran before the decision.
    expect(existsSync(to)).toBe(false);
    await expectAccessible(page);
    await screenshot(page, 'conversation-waiting');

    // Only a person decides: the page signed in as a service account offers no decision; a person's page approves.
    await page.getByText('Waits for a person with the conversations:write scope').waitFor();
    expect(await page.getByRole('group', { name: 'Decide on step 1' }).count()).toBe(0);
    const person = await personToken(ops, 'Olivia', 'operator');
    const personPage = await newPage(browser);
    try {
      await personPage.goto(`${bosun.url}/conversations/${conversationId}`);
      await personPage.waitForURL(/\/sign-in/);
      await signIn(personPage, person.token);
      await personPage.goto(`${bosun.url}/conversations/${conversationId}`);
      await personPage.getByRole('group', { name: 'Decide on step 1' }).getByRole('button', { name: 'Approve and run' }).click();
    } finally {
      await personPage.close();
    }
    // The transfer's progress shows while it runs, then the step completes.
    await page.getByRole('progressbar', { name: 'Transfer of step 1' }).waitFor({ timeout: 20_000 });
    await page.locator('h1').getByText('completed').waitFor({ timeout: 60_000 });
    const conversation = (await bosun.api.get(`/api/v1/conversations/${conversationId}`).set(bearer(ops.token))).body.data;
    expect(conversation.steps[0]).toMatchObject({ status: 'completed', risk: 'change', approval: { decision: 'approved', decided_by: 'Olivia (person)' } });
    await page.getByText(`by ${conversation.steps[0].approval.decided_by}`).waitFor();
    expect(readFileSync(path.join(to, 'index.html'), 'utf8')).toBe('<h1>shop</h1>\n');

    await page.getByLabel('Next instruction').fill('show the hostname on both servers');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('region', { name: '“show the hostname on both servers”' }).waitFor();
    await page.locator('h1').getByText('completed').waitFor({ timeout: 60_000 });
    await page.getByRole('region', { name: '“show the hostname on both servers”' }).locator('.status-completed').first().waitFor({ timeout: 30_000 });
    await expectAccessible(page);
    await screenshot(page, 'conversation');

    await page.goto(`${bosun.url}/conversations`);
    await page.getByRole('link', { name: conversationId.slice(-8) }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'conversations');
  }, 180_000);

  test('a server’s page lists what ran on it lately: runs and conversations, each a link', async () => {
    const web = (await ops.listServers()).data.find((s: { title: string }) => s.title === 'web-1')!;
    await page.goto(`${bosun.url}/servers/${web.id}`);
    const activity = page.getByRole('region', { name: 'Recent activity' });
    await activity.getByRole('link', { name: 'release-web' }).waitFor();
    await activity.getByRole('link', { name: /^copy / }).waitFor();
    expect(await activity.getByText('migration (source)').count()).toBe(1);
    await expectAccessible(page);
    await screenshot(page, 'server-activity');
    await activity.getByRole('link', { name: 'long-one' }).click();
    await page.locator('h1').getByText('cancelled').waitFor();
  });

  test('the tokens page: a new token is shown once with a copy button, works, and is revoked from its row', async () => {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: bosun.url });
    await page.goto(`${bosun.url}/tokens`);
    await page.getByLabel('Name').fill('ci-e2e');
    await page.getByLabel('deployments:run').check();
    await page.getByRole('button', { name: 'Create the token' }).click();
    const shown = page.getByLabel('The new token');
    await shown.waitFor();
    const token = await shown.innerText();
    expect(token).toMatch(/^bsn_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
    await expectAccessible(page);
    await screenshot(page, 'tokens');
    expect((await bosun.api.get('/api/v1/servers').set(bearer(token))).status).toBe(200);
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.content()).not.toContain(token);
    expect(await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage))).toBe('{}{}');

    const row = page.locator('tr[data-token="ci-e2e"]');
    // What it can do: its identity's admin role narrowed to the two scopes it was made with.
    await row.getByText('admin: read, deployments:run on every server').waitFor();
    await row.getByRole('button', { name: 'Revoke ci-e2e' }).click();
    await row.getByRole('button', { name: 'Yes, revoke ci-e2e' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await bosun.api.get('/api/v1/servers').set(bearer(token))).status).toBe(401);
    await page.getByLabel('Show revoked').check();
    await page.locator('tr[data-token="ci-e2e"]').getByText('revoked').waitFor();
  });

  test('signing out: back to sign-in, and the console’s pages are closed until one signs in again', async () => {
    await page.goto(`${bosun.url}/servers`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/);
    await page.getByText('Signed out.').waitFor();
    await page.goto(`${bosun.url}/servers`);
    await page.waitForURL(/\/sign-in\?next=%2Fservers/);
    expect(problemsOf(page)).toEqual([]);
  });

  test('revoking the token of an open page sends it to sign-in, saying why, and back where it was afterwards', async () => {
    const { token } = await createToken({ org: 'console-e2e', name: 'soon-revoked', scopes: ['read'] });
    const viewer = await newPage(browser);
    await viewer.goto(`${bosun.url}/deployments`);
    await signIn(viewer, token);
    await viewer.getByRole('link', { name: 'release-web' }).click();
    await viewer.getByRole('heading', { name: 'release-web' }).waitFor();
    // A read-only token is not offered what it cannot do.
    expect(await viewer.getByRole('button', { name: 'Run now' }).count()).toBe(0);
    const at = viewer.url();
    await revokeToken('console-e2e', 'soon-revoked');
    await viewer.waitForURL(/\/sign-in\?next=/, { timeout: 10_000 });
    await viewer.getByText('The token was revoked').waitFor();
    await signIn(viewer, ops.token);
    expect(viewer.url()).toBe(at);
    await viewer.close();
  });
});
