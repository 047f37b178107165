/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer } from '../support/http';
import { eventually } from '../support/eventually';
import { accessibilityViolations, launchBrowser, newPage, screenshot } from '../support/browser';
import { userWithToken } from '../support/client';

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
    await page.getByRole('heading', { name: '1 entry' }).waitFor();
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
});
