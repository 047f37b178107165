/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer } from '../support/http';
import { eventually } from '../support/eventually';
import { accessibilityViolations, launchBrowser, newPage, problemsOf, screenshot, signedInPage } from '../support/browser';
import { userWithToken } from '../support/client';
import { insertChainedEntries, organizationIdOf } from '../support/audit-bulk';

/**
 * The audit trail in the console, in Debian's Chromium against the whole stack: an auditor signs in,
 * sees only the Audit page, reads who did what, filters it and verifies the chain.
 */
describe('the console’s audit page', () => {
  let bosun: SharedBosun;
  let browser: Browser;
  let admin: string;
  let page: Page;

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await bosun.token('console-audit');
    browser = await launchBrowser();
    page = await newPage(browser);
  });
  afterAll(async () => {
    await browser?.close();
    await bosun?.stop();
  });

  const post = async (token: string, path: string, body: object) => (await bosun.api.post(`/api/v1${path}`).set(bearer(token)).send(body)).body.data;

  test('an auditor reads who did what, filters it, and verifies the chain', async () => {
    await post(admin, '/freezes', { name: 'black-friday', starts_at: '2099-11-27T00:00:00Z', ends_at: '2099-11-30T00:00:00Z' });
    const auditor = await post(admin, '/service-accounts', { name: 'auditor' });
    await post(admin, '/role-bindings', { role: 'auditor', subject: { type: 'service_account', id: auditor.id } });
    const token = (await post(admin, `/service-accounts/${auditor.id}/tokens`, { name: 'auditor-token' })).token as string;
    await eventually(async () => (await bosun.api.get('/api/v1/audit').set(bearer(admin))).body.meta.total as number, (total) => total >= 4);

    await page.goto(`${bosun.url}/audit`);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${bosun.url}/audit`);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Audit' }).waitFor();
    expect(await nav.getByRole('link', { name: 'People' }).count()).toBe(0);

    await page.getByRole('cell', { name: 'freeze.create' }).waitFor();
    await page.getByRole('cell', { name: 'role-binding.create' }).waitFor();
    await page.getByLabel('Action').fill('freeze.*');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('heading', { name: 'Entries 1–1 of 1' }).waitFor();
    await page.getByRole('button', { name: 'Verify the chain' }).click();
    await page.getByRole('status').filter({ hasText: /Chain intact: \d+ entries checked/ }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'audit');
  });

  test('an administrator sees who did what on a run’s page: its trigger and its commands', async () => {
    const ops = userWithToken(bosun, admin);
    const deployment = await ops.defineDeployment(await ops.addServer(), [{ name: 'hello', command: 'echo hello' }]);
    const run = await ops.runToEnd(deployment.id);
    await eventually(async () => (await bosun.api.get(`/api/v1/audit?run=${run.id}`).set(bearer(admin))).body.meta.total as number, (total) => total >= 2);

    const adminPage = await newPage(browser);
    await adminPage.goto(`${bosun.url}/deployments/${deployment.id}/runs/${run.id}`);
    await adminPage.getByLabel('API token').fill(admin);
    await adminPage.getByRole('button', { name: 'Sign in' }).click();
    const panel = adminPage.getByRole('region', { name: 'Who did what' });
    await panel.getByRole('cell', { name: 'run.trigger' }).waitFor();
    await panel.getByRole('cell', { name: 'echo hello → exit 0' }).waitFor();
    expect(await accessibilityViolations(adminPage)).toEqual([]);
    await screenshot(adminPage, 'run-who-did-what');
    await adminPage.close();
  });

  test('a trail of 200 entries reads 50 a page, each naming and linking its deployment, run and server, filtered by names', async () => {
    const owner = await bosun.token('console-audit-pages', ['admin'], 'release-bot');
    // An older history first (its commands' server and run long deleted), then a deployment run on web-1.
    await insertChainedEntries(bosun.mongoUri, await organizationIdOf(bosun.mongoUri, bosun.org('console-audit-pages')), 190);
    const ops = userWithToken(bosun, owner);
    const server = await ops.addServer({ title: 'web-1', host: '127.0.0.3' });
    const deployment = await ops.defineDeployment(server, [{ name: 'hello', command: 'echo hello' }], 'deploy-web');
    const run = await ops.runToEnd(deployment.id);
    const stranger = await bosun.token('console-audit-stranger');
    expect((await bosun.api.post(`/api/v1/servers/${server}/verify`).set(bearer(stranger))).status).toBe(404);
    await eventually(async () => (await bosun.api.get(`/api/v1/audit?run=${run.id}&action=command.run`).set(bearer(owner))).body.meta.total as number, (total) => total === 1);

    const ownerPage = await signedInPage(browser, bosun.url, owner);
    // The sign-in's own entry chained first: the pages counted below stay where they are.
    await eventually(async () => (await bosun.api.get('/api/v1/audit?action=session.sign_in').set(bearer(owner))).body.meta.total as number, (total) => total === 1);
    await ownerPage.goto(`${bosun.url}/audit`);
    const entries = ownerPage.getByRole('region', { name: /^Entries / });
    await ownerPage.getByRole('heading', { name: /^Entries 1–50 of (19\d|2\d\d)$/ }).waitFor();
    expect(await entries.getByRole('row').count()).toBe(51);
    const command = entries.getByRole('row').filter({ hasText: 'echo hello → exit 0' });
    expect(await command.getByRole('link', { name: 'deploy-web' }).getAttribute('href')).toBe(`/deployments/${deployment.id}`);
    expect(await command.getByRole('link', { name: `run ${run.id.slice(-8)}` }).getAttribute('href')).toBe(`/deployments/${deployment.id}/runs/${run.id}`);
    expect(await command.getByRole('link', { name: 'web-1' }).getAttribute('href')).toBe(`/servers/${server}`);
    await ownerPage.getByRole('navigation', { name: 'Pages' }).getByText('Page 1 of 4').waitFor();
    expect(await ownerPage.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
    expect(await accessibilityViolations(ownerPage)).toEqual([]);
    await screenshot(ownerPage, 'audit-200-entries');

    // Older, a reload (the page is the URL's), and back to the newest.
    await ownerPage.getByRole('link', { name: 'Older →' }).click();
    await ownerPage.getByRole('heading', { name: /^Entries 51–100 of / }).waitFor();
    expect(ownerPage.url()).toMatch(/\/audit\?before=\d+$/);
    await ownerPage.reload();
    await ownerPage.getByRole('heading', { name: /^Entries 51–100 of / }).waitFor();
    await entries.getByRole('row').filter({ hasText: 'server 00000001 (deleted)' }).first().waitFor();
    await ownerPage.getByRole('navigation', { name: 'Pages' }).scrollIntoViewIfNeeded();
    await screenshot(ownerPage, 'audit-200-entries-page-2');
    expect(await accessibilityViolations(ownerPage)).toEqual([]);
    await ownerPage.getByRole('link', { name: 'Older →' }).click();
    await ownerPage.getByRole('heading', { name: /^Entries 101–150 of / }).waitFor();
    await ownerPage.getByRole('link', { name: '← Newer' }).click();
    await ownerPage.getByRole('heading', { name: /^Entries 51–100 of / }).waitFor();
    expect(ownerPage.url()).toMatch(/\/audit\?after=\d+$/);
    await ownerPage.getByRole('link', { name: '← Newer' }).click();
    await ownerPage.getByRole('heading', { name: /^Entries 1–50 of / }).waitFor();

    // A server typed by its name (the datalist offers it): the URL keeps its id, and the page reads the same reloaded.
    await ownerPage.locator('#audit-servers option[value="web-1"]').waitFor({ state: 'attached' });
    expect(await ownerPage.locator('#audit-servers option').evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value))).toEqual(['web-1']);
    await ownerPage.getByLabel('Server').fill('web-1');
    await ownerPage.getByRole('button', { name: 'Filter' }).click();
    const onWeb1 = (await bosun.api.get(`/api/v1/audit?server=${server}`).set(bearer(owner))).body.meta.total as number;
    expect(onWeb1).toBeLessThan(50);
    await ownerPage.getByRole('heading', { name: `Entries 1–${onWeb1} of ${onWeb1}` }).waitFor();
    expect(ownerPage.url()).toBe(`${bosun.url}/audit?server=${server}`);
    await ownerPage.reload();
    await ownerPage.getByRole('heading', { name: `Entries 1–${onWeb1} of ${onWeb1}` }).waitFor();
    // The URL's id is shown by its name once the choices are read.
    await ownerPage.waitForFunction(() => document.querySelector<HTMLInputElement>('input[name="server"]')?.value === 'web-1');
    await ownerPage.getByLabel('Action').fill('command.run');
    await ownerPage.getByRole('button', { name: 'Filter' }).click();
    // The server's page above may read "1–N of N" too: wait for this filter's URL and its own count, not any such heading.
    await ownerPage.waitForURL(`${bosun.url}/audit?server=${server}&action=command.run`);
    const commandsOnWeb1 = (await bosun.api.get(`/api/v1/audit?server=${server}&action=command.run`).set(bearer(owner))).body.meta.total as number;
    await ownerPage.getByRole('heading', { name: `Entries 1–${commandsOnWeb1} of ${commandsOnWeb1}` }).waitFor();
    await entries.getByRole('row').filter({ hasText: 'echo hello → exit 0' }).waitFor();
    expect(await entries.getByRole('row').filter({ hasText: 'echo hello → exit 0' }).count()).toBe(1);

    // An actor typed by name: the URL keeps its id.
    const bot = ((await bosun.api.get('/api/v1/audit/choices').set(bearer(owner))).body.data.actors as Array<{ id: string; name: string }>).find((actor) => actor.name === 'release-bot')!;
    const byBot = (await bosun.api.get(`/api/v1/audit?actor=${bot.id}`).set(bearer(owner))).body.meta.total as number;
    await ownerPage.goto(`${bosun.url}/audit`);
    await ownerPage.locator('#audit-actors option[value="release-bot"]').waitFor({ state: 'attached' });
    await ownerPage.getByLabel('Actor').fill('release-bot');
    await ownerPage.getByRole('button', { name: 'Filter' }).click();
    await ownerPage.waitForURL(`${bosun.url}/audit?actor=${bot.id}`);
    await ownerPage.getByRole('heading', { name: `Entries 1–${byBot} of ${byBot}` }).waitFor();
    expect(await entries.getByRole('row').filter({ hasText: 'bosun worker' }).count()).toBe(0);

    // At 1,280 px the trail still fits the window.
    const narrow = await signedInPage(browser, bosun.url, owner, { viewport: { width: 1280, height: 900 } });
    await narrow.goto(`${bosun.url}/audit`);
    await narrow.getByRole('heading', { name: /^Entries 1–50 of / }).waitFor();
    expect(await narrow.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
    await screenshot(narrow, 'audit-200-entries-1280');

    // The stranger's own trail holds its refused attempt on web-1, by id only; its filters offer none of the owner's names.
    const strangerPage = await signedInPage(browser, bosun.url, stranger);
    await strangerPage.goto(`${bosun.url}/audit?action=server.verify`);
    await strangerPage.getByRole('row').filter({ hasText: `server ${server.slice(-8)} (deleted)` }).waitFor();
    expect(await strangerPage.locator('main').innerText()).not.toMatch(/web-1|deploy-web/);
    await strangerPage.locator('#audit-actors option').first().waitFor({ state: 'attached' });
    expect(await strangerPage.locator('#audit-servers option').count()).toBe(0);
    expect([...problemsOf(ownerPage), ...problemsOf(narrow), ...problemsOf(strangerPage)]).toEqual([]);
    await Promise.all([ownerPage, narrow, strangerPage].map((p) => p.context().close()));
  });
});
