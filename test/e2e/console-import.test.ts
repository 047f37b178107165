/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { asUser, type User } from '../support/client';
import { accessibilityViolations, launchBrowser, openFromNav, problemsOf, screenshot, signedInPage } from '../support/browser';

/*
 * An operator pastes an inventory in the console, previews its diff (nothing changes), applies it,
 * and the servers it adds are verified on the tests' sshd.
 */

describe('inventory import in the console', () => {
  let bosun: SharedBosun;
  let ops: User;
  let browser: Browser;

  beforeAll(async () => {
    bosun = await sharedBosun();
    ops = await asUser(bosun, 'console-import');
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    ops?.close();
    await bosun?.stop();
  });

  const signedIn = (token: string): Promise<Page> => signedInPage(browser, bosun.url, token);

  test('preview the diff, then apply it: the servers are added and verified', async () => {
    const { port, username, privateKey } = bosun.sshd;
    const page = await signedIn(ops.token);
    await openFromNav(page, 'Servers');
    await page.getByRole('link', { name: 'Import an inventory' }).click();
    const form = page.getByRole('form', { name: 'Import an inventory' });
    await form.getByLabel('Source').fill('lab');
    await form.getByLabel('Content').fill(`[web]\nweb1 ansible_host=127.0.0.10\nweb2 ansible_host=127.0.0.11\n[all:vars]\nansible_port=${port}\n`);
    await form.getByLabel('Default user').fill(username);
    await form.getByLabel('Private key').fill(privateKey);
    await form.getByRole('button', { name: 'Preview' }).click();

    const diff = page.getByRole('table', { name: 'Import diff' });
    await page.getByRole('status').getByText('Preview, nothing changed: 2 to add, 0 to change, 0 unchanged, 0 missing').waitFor();
    expect(await diff.locator('tbody tr').allInnerTexts()).toEqual([`add\tweb1\t${username}@127.0.0.10:${port} · tags web`, `add\tweb2\t${username}@127.0.0.11:${port} · tags web`]);
    expect((await ops.listServers()).data).toEqual([]);
    await screenshot(page, 'server-import-preview');
    expect(await accessibilityViolations(page)).toEqual([]);

    // Applying sends what was previewed: an edit drops the preview until it is made again.
    await form.getByLabel('Tags').fill('lab');
    await form.getByRole('button', { name: 'Apply this import' }).waitFor({ state: 'detached' });
    await form.getByRole('button', { name: 'Preview' }).click();
    await diff.getByText('tags lab, web').first().waitFor();
    await form.getByRole('button', { name: 'Apply this import' }).click();
    await page.getByRole('status').getByText('Applied: 2 to add, 0 to change, 0 unchanged, 0 missing · verifying 2 servers, 8 at a time').waitFor();
    const servers = await eventually(async () => (await ops.listServers()).data as Array<{ title: string; status: string; tags: string[] }>, (list) => list.length === 2 && list.every((s) => s.status === 'verified'));
    expect(servers.map((s) => s.title).sort()).toEqual(['web1', 'web2']);
    expect(servers.map((s) => s.tags)).toEqual([['lab', 'web'], ['lab', 'web']]);
    expect(problemsOf(page)).toEqual([]);
  }, 120_000);
});
