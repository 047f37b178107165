/// <reference lib="dom" />
import type { Browser } from 'playwright-core';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { addPerson, asUser, type User } from '../support/client';
import { bearer } from '../support/http';
import { accessibilityViolations, launchBrowser, openFromNav, pageWidth, problemsOf, screenshot, signedInPage } from '../support/browser';

/*
 * A person's first page, in Chromium against the whole stack: an approver signs in and lands on the
 * dashboard, which says what waits for her (and keeps the count in the navigation live), what is in
 * progress, what failed, which freeze holds; its link opens the run with the gate in view. An
 * administrator adds a schedule from a deployment's page and finds it on the Schedules page; the
 * navigation, grouped, holds on one line at 1,280 px.
 */

describe('the dashboard and the navigation', () => {
  let bosun: SharedBosun;
  let admin: User;
  let carol: User & { id: string };
  let alice: User & { id: string };
  let browser: Browser;
  const gated = (name: string, tag: string) =>
    carol.define({ name, targets: { tags: [tag] }, strategy: { batch_size: 1, gates: [{ before_batch: 2, approvals: 1, expires_in: '4h' }] }, steps: [{ name: 'release', command: 'echo released' }] });

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await asUser(bosun, 'console-dashboard');
    for (const [host, title, tag] of [['127.0.0.2', 'web-1', 'web'], ['127.0.0.3', 'web-2', 'web'], ['127.0.0.4', 'db-1', 'db'], ['127.0.0.5', 'api-1', 'api'], ['127.0.0.6', 'api-2', 'api']] as const) {
      await admin.addServer({ host, title, tags: [tag] });
    }
    carol = await addPerson(bosun, admin, 'Carol', 'admin');
    alice = await addPerson(bosun, admin, 'Alice', 'approver');
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    for (const user of [admin, carol, alice]) user?.close();
    await bosun?.stop();
  });

  const post = async (path: string, body: object) => (await bosun.api.post(`/api/v1${path}`).set(bearer(admin.token)).send(body)).body.data;

  test('an approver lands on what waits for her; the count follows new runs and decisions live; its link opens the gate', async () => {
    const web = await gated('web-release', 'web');
    const { run_id: webRun } = await carol.trigger(web.id);
    await carol.waitForRun(web.id, webRun, (run) => run.status === 'awaiting_approval');
    const db = await carol.define({ name: 'db-migrate', targets: { tags: ['db'] }, steps: [{ name: 'migrate', command: 'echo "relation users is locked" >&2; exit 3' }] });
    const failed = await carol.runToEnd(db.id);
    expect(failed.status).toBe('failed');
    await post('/freezes', { name: 'db-maintenance', tags: ['db'], starts_at: new Date(Date.now() - 60_000).toISOString(), ends_at: new Date(Date.now() + 2 * 3600_000).toISOString() });

    const page = await signedInPage(browser, bosun.url, alice.token);
    await page.waitForURL(`${bosun.url}/dashboard`);
    const waiting = page.locator('#waiting');
    await waiting.getByRole('row').filter({ hasText: 'web-release' }).getByText('0 of 1, before batch 2').waitFor();
    await page.getByRole('navigation', { name: 'Main' }).locator('[data-waiting-count="1"]').waitFor();
    const inProgress = page.getByRole('table', { name: 'In progress' });
    expect(await inProgress.locator(`[data-run="${webRun}"]`).getAttribute('data-status')).toBe('awaiting_approval');
    const failures = page.getByRole('table', { name: 'Failed in the last 24 hours' });
    await failures.locator(`[data-run="${failed.id}"]`).getByText('db-migrate').waitFor();
    expect(await failures.locator(`[data-run="${failed.id}"]`).innerText()).toContain(failed.error);
    await page.getByRole('table', { name: 'Change freezes now and soon' }).locator('[data-freeze="db-maintenance"]').getByText('holds now').waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'dashboard-1400');

    // A new gated run: the count and the lists follow without a reload; Alice's approval takes it off.
    const api = await gated('api-release', 'api');
    const { run_id: apiRun } = await carol.trigger(api.id);
    await page.getByRole('navigation', { name: 'Main' }).locator('[data-waiting-count="2"]').waitFor();
    await waiting.locator(`[data-run="${apiRun}"]`).waitFor();
    await inProgress.locator(`[data-run="${apiRun}"][data-status="awaiting_approval"]`).getByText('1 success, 1 waiting for approval of 2').waitFor();
    expect((await alice.decide(api.id, apiRun, 'approve', { comment: 'fine' })).status).toBe(200);
    await page.getByRole('navigation', { name: 'Main' }).locator('[data-waiting-count="1"]').waitFor();
    await waiting.locator(`[data-run="${apiRun}"]`).waitFor({ state: 'detached' });

    // The link opens the run with its gate in view.
    await page.setViewportSize({ width: 1400, height: 500 });
    await waiting.getByRole('link', { name: 'web-release' }).click();
    await page.waitForURL(`${bosun.url}/deployments/${web.id}/runs/${webRun}#gate`);
    await page.getByRole('region', { name: 'Approval gate before batch 2' }).waitFor();
    await page.waitForFunction(() => {
      const box = document.getElementById('gate')?.getBoundingClientRect();
      return !!box && box.top >= 0 && box.top < window.innerHeight;
    });

    // The person who triggered it is not asked.
    const carolPage = await signedInPage(browser, bosun.url, carol.token, { viewport: { width: 1280, height: 900 } });
    await carolPage.waitForURL(`${bosun.url}/dashboard`);
    await carolPage.locator('#waiting').getByText('Nothing waits for your approval.').waitFor();
    await carolPage.getByRole('table', { name: 'In progress' }).locator(`[data-run="${webRun}"]`).waitFor();
    expect(await carolPage.locator('[data-waiting-count]').count()).toBe(0);
    expect(await pageWidth(carolPage)).toEqual({ scroll: 1280, viewport: 1280 });
    await screenshot(carolPage, 'dashboard-1280');
    expect([...problemsOf(page), ...problemsOf(carolPage)]).toEqual([]);
    await page.close();
    await carolPage.close();
  });

  test('an administrator adds a schedule from a deployment’s page and finds it on the Schedules page; the navigation holds on one line at 1,280 px', async () => {
    const ci = await post('/service-accounts', { name: 'ci' });
    await post('/role-bindings', { role: 'operator', subject: { type: 'service_account', id: ci.id } });
    const deployment = await carol.define({ name: 'nightly-report', targets: { tags: ['db'] }, steps: [{ name: 'report', command: 'echo report' }] });

    const page = await signedInPage(browser, bosun.url, carol.token, { viewport: { width: 1280, height: 900 } });
    const nav = page.getByRole('navigation', { name: 'Main' });
    const tops = await nav.locator('a, summary').evaluateAll((items) => [...new Set(items.filter((i) => (i as HTMLElement).checkVisibility()).map((i) => Math.round(i.getBoundingClientRect().top)))]);
    expect(tops).toHaveLength(1);
    expect(await pageWidth(page)).toEqual({ scroll: 1280, viewport: 1280 });

    await page.goto(`${bosun.url}/deployments/${deployment.id}`);
    const schedules = page.getByRole('region', { name: 'Schedules' });
    await schedules.getByRole('button', { name: 'Add a schedule' }).click();
    const form = schedules.getByRole('form', { name: 'Add a schedule' });
    await form.getByLabel('Name').fill('nightly');
    await form.getByLabel('Cron expression').fill('30 2 * * *');
    await form.getByLabel('Time zone', { exact: true }).fill('Europe/Berlin');
    await form.getByLabel('Runs as').selectOption({ label: 'ci' });
    await form.getByLabel('Note').fill('the report for the morning');
    await form.getByRole('button', { name: 'Add the schedule' }).click();
    await schedules.getByRole('article', { name: 'Schedule nightly' }).waitFor();
    expect(await form.count()).toBe(0);

    await openFromNav(page, 'Schedules');
    await page.waitForURL(`${bosun.url}/schedules`);
    const row = page.getByRole('table', { name: 'Every schedule' }).locator('[data-schedule="nightly"]');
    await row.getByRole('link', { name: 'nightly-report' }).waitFor();
    expect(await row.innerText()).toContain('cron 30 2 * * * in Europe/Berlin');
    const next = Date.parse((await row.locator('[data-next-run]').getAttribute('data-next-run'))!);
    expect(next).toBeGreaterThan(Date.now());
    expect(next - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'schedules-1280');

    // The governing pages are one menu away; the menu says where one is.
    await openFromNav(page, 'Notifications');
    await page.waitForURL(`${bosun.url}/notifications`);
    await nav.locator('summary', { hasText: 'Govern: Notifications' }).waitFor();
    // The longest it gets still leaves room for who is signed in.
    const [menuBox, whoBox] = [await nav.locator('summary').boundingBox(), await page.getByRole('link', { name: /^My account:/ }).boundingBox()];
    expect(menuBox!.x + menuBox!.width).toBeLessThanOrEqual(whoBox!.x);
    // Sign out on one line (two lines of text would make it about 50 px high).
    expect((await page.getByRole('button', { name: 'Sign out' }).boundingBox())!.height).toBeLessThan(40);
    expect(problemsOf(page)).toEqual([]);
    await page.close();
  });
});
