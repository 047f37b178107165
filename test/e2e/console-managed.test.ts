/// <reference lib="dom" />
import type { Browser } from 'playwright-core';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { addPerson, asUser, type User } from '../support/client';
import { accessibilityViolations, launchBrowser, problemsOf, screenshot, signedInPage } from '../support/browser';
import { markManaged } from '../support/managed-by';

/*
 * A deployment kept in Git (issue 38) on its console page: where it comes from ("Managed in Git:
 * platform-repo @ 3f2a1c0, deploy/web.yaml"), and its Delete button disabled with that reason as
 * its tooltip and accessible description; a deployment made by hand keeps its button.
 */

describe('a managed deployment in the console', () => {
  let bosun: SharedBosun;
  let admin: User;
  let ada: User & { id: string };
  let browser: Browser;
  let managed: string;
  let byHand: string;

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await asUser(bosun, 'console-managed');
    const server = await admin.addServer({ title: 'cm-web' });
    managed = (await admin.define({ name: 'web-release', server_id: server, steps: [{ name: 'release', command: 'echo released' }] })).id;
    byHand = (await admin.define({ name: 'hand-made', server_id: server, steps: [{ name: 'say', command: 'echo hi' }] })).id;
    await markManaged(bosun.mongoUri, 'Deployment', managed, { source: 'platform-repo', revision: '3f2a1c0d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a49', path: 'deploy/web.yaml' });
    ada = await addPerson(bosun, admin, 'Ada', 'admin');
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    for (const user of [admin, ada]) user?.close();
    await bosun?.stop();
  });

  test('its page names the source, revision and file, and its Delete button is disabled saying why', async () => {
    const page = await signedInPage(browser, bosun.url, ada.token);
    await page.goto(`${bosun.url}/deployments/${managed}`);
    const note = page.locator('#managed-by');
    await note.waitFor();
    expect(await note.innerText()).toBe('Managed in Git: platform-repo @ 3f2a1c0, deploy/web.yaml');
    const remove = page.getByRole('button', { name: 'Delete web-release' });
    expect(await remove.isDisabled()).toBe(true);
    expect(await remove.getAttribute('title')).toBe('Managed in Git: platform-repo @ 3f2a1c0, deploy/web.yaml: change it there');
    expect(await remove.getAttribute('aria-describedby')).toBe('managed-by');
    // The Run form stays: running is not changing the definition.
    expect(await page.getByRole('button', { name: /^Run/ }).first().isEnabled()).toBe(true);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'managed-deployment');

    await page.goto(`${bosun.url}/deployments/${byHand}`);
    await page.getByRole('heading', { name: 'hand-made' }).waitFor();
    expect(await page.locator('#managed-by').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Delete hand-made' }).isEnabled()).toBe(true);
    expect(problemsOf(page)).toEqual([]);
    await page.close();
  });
});
