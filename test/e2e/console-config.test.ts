/// <reference lib="dom" />
import type { Browser } from 'playwright-core';
import { addPerson, userWithToken, type User } from '../support/client';
import { accessibilityViolations, launchBrowser, openFromNav, pageWidth, problemsOf, screenshot, signedInPage } from '../support/browser';
import { eventually } from '../support/eventually';
import { authorizeKey, GitServer, newDeployKey } from '../support/git-server';
import { agentAccount } from '../support/mcp';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { Sshd } from '../support/sshd';

/*
 * The console's Config page (issue 38): definitions applied from files, one changed here with
 * `force: true` shown as drift (who, when, linked to its page), and each Git source's state —
 * in sync, failing with its plan's `file:line:column` errors, waiting for a host key an admin trusts.
 */

type Json = any;

const REVISION = '3f2a1c0d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a49';
const deploymentFile = (name: string, command: string) => `kind: Deployment
name: ${name}
spec:
  server: cc-web
  steps:
    - name: release
      command: ${command}
`;
const freezeFile = `kind: Freeze
name: year-end
spec:
  starts_at: "2099-12-20T00:00:00.000Z"
  ends_at: "2100-01-02T00:00:00.000Z"
`;

describe('the Config page', () => {
  let bosun: SharedBosun;
  let git: GitServer;
  let sshd: Sshd;
  let admin: User;
  let ada: User & { id: string };
  let browser: Browser;
  const deployKey = newDeployKey();

  beforeAll(async () => {
    bosun = await sharedBosun();
    [git, sshd] = await Promise.all([GitServer.start(), Sshd.startPrivate()]);
    authorizeKey(sshd.info, deployKey.publicKey);
    admin = userWithToken(bosun, await bosun.token('console-config'));
    await admin.addServer({ title: 'cc-web', host: '127.0.0.2' });
    await agentAccount(admin, 'config-sync', { role: 'admin' });
    ada = await addPerson(bosun, admin, 'Ada', 'admin');
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    for (const user of [admin, ada]) user?.close();
    await Promise.all([git?.stop(), sshd?.stop()]);
    await bosun?.stop();
  });

  test('a definition forced here shows as drift naming who and when, linked to its page, which says where it is managed', async () => {
    const files = {
      source: 'platform-repo',
      revision: REVISION,
      files: [
        { path: 'deploy/web.yaml', content: deploymentFile('web-release', 'echo v1') },
        { path: 'deploy/freezes.yaml', content: freezeFile },
      ],
    };
    const applied = await admin.request('post', '/config/apply', files);
    expect(applied.status).toBe(200);
    expect(applied.body.data.created).toBe(2);
    const deployment = ((await admin.request('get', '/deployments?per_page=100')).body.data as Json[]).find((d) => d.name === 'web-release')!;
    const forced = await admin.request('patch', `/deployments/${deployment.id}`, { steps: [{ name: 'release', command: 'echo hotfix' }], force: true });
    expect(forced.status).toBe(200);

    const drift = (await admin.request('get', '/config/drift')).body.data as Json[];
    expect(drift).toEqual([
      { kind: 'Deployment', id: deployment.id, name: 'web-release', source: 'platform-repo', revision: REVISION, path: 'deploy/web.yaml', forced_at: expect.any(String), forced_by: expect.any(String) },
    ]);

    const page = await signedInPage(browser, bosun.url, ada.token, { viewport: { width: 1400, height: 900 } });
    await openFromNav(page, 'Config');
    const row = page.locator('[data-drifted="Deployment/web-release"]');
    await row.waitFor();
    expect(await row.innerText()).toMatch(new RegExp(`Deployment\\s+web-release\\s+platform-repo @ 3f2a1c0, deploy/web.yaml\\s+forced by ${drift[0].forced_by}, `));
    expect(await page.locator('[data-drifted^="Freeze/"]').count()).toBe(0);
    expect(await accessibilityViolations(page)).toEqual([]);
    const width = await pageWidth(page);
    expect(width.scroll).toBeLessThanOrEqual(width.viewport);
    await screenshot(page, 'config-drift');

    await row.getByRole('link', { name: 'web-release' }).click();
    const note = page.locator('#managed-by');
    await note.waitFor();
    expect(await note.innerText()).toMatch(/^Managed in Git: platform-repo @ 3f2a1c0, deploy\/web\.yaml changed here since \(drifted\)/);
    const remove = page.getByRole('button', { name: 'Delete web-release' });
    expect(await remove.isDisabled()).toBe(true);
    expect(await remove.getAttribute('title')).toBe('Managed in Git: platform-repo @ 3f2a1c0, deploy/web.yaml: change it there');
    await screenshot(page, 'config-drifted-deployment');

    // CI applies the files again while the page is open: it follows without reloading (ConfigChanged).
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    expect((await admin.request('post', '/config/apply', files)).body.data.updated).toBe(1);
    await page.waitForFunction(() => !document.querySelector('#managed-by')?.textContent?.includes('drifted'), undefined, { timeout: 30_000 });
    await page.locator('main').getByText('echo v1').first().waitFor();
    // The Config page, reached from the navigation, shows no drift; a change forced elsewhere appears on it as it happens.
    await openFromNav(page, 'Config');
    await page.getByText('Nothing changed since it was applied').waitFor();
    expect((await admin.request('patch', `/deployments/${deployment.id}`, { steps: [{ name: 'release', command: 'echo hotfix 2' }], force: true })).status).toBe(200);
    await row.waitFor({ timeout: 30_000 });
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    expect(problemsOf(page)).toEqual([]);
    await page.close();
  }, 120_000);

  test('each source shows its revision, state and last plan; a failing one its errors; an unknown host key is trusted from the page', async () => {
    const repo = await git.repository('cc-platform');
    const good = await repo.commit({ 'bosun/web.yaml': deploymentFile('from-git', 'echo v1') });
    const gitSource = (await admin.request('post', '/config/sources', { name: 'cc-repo', git: { url: repo.gitUrl, path: 'bosun/' }, run_as: 'config-sync', web_url: 'https://git.example.com/acme/platform' })).body.data;
    const sshRepo = await git.repository('cc-over-ssh');
    await sshRepo.commit({ 'ssh.yaml': deploymentFile('over-ssh', 'echo ssh') });
    const sshSource = (await admin.request('post', '/config/sources', { name: 'ssh-repo', git: { url: sshRepo.overSsh(sshd.info).url }, credentials: { type: 'ssh_key', private_key: deployKey.privateKey }, run_as: 'config-sync' })).body.data;
    const sourceOf = async (id: string) => (await admin.request('get', `/config/sources/${id}`)).body.data as Json;
    expect((await admin.request('post', `/config/sources/${sshSource.id}/sync`, {})).status).toBe(202);
    await eventually(() => sourceOf(sshSource.id), (s) => s.status.offered_host_key !== null, 60_000);

    const page = await signedInPage(browser, bosun.url, ada.token, { viewport: { width: 1400, height: 900 } });
    await page.goto(`${bosun.url}/config`);
    const card = page.locator('[data-config-source="cc-repo"]');
    await card.locator('[data-source-state]').waitFor();
    expect(await card.getAttribute('data-state')).toBe('not synced yet');
    // Sync now from the page: the sync's outcome shows when it lands (ConfigChanged), without a reload.
    await card.getByRole('button', { name: 'Sync now' }).click();
    await page.locator('[data-config-source="cc-repo"][data-state="in sync"]').waitFor({ timeout: 60_000 });
    const revisionLink = card.getByRole('link', { name: good.slice(0, 7) });
    expect(await revisionLink.getAttribute('href')).toBe(`https://git.example.com/acme/platform/commit/${good}`);
    expect(await card.locator('[data-last-plan]').innerText()).toMatch(/1 to create, 0 to update, 0 to delete, 0 unchanged\./);

    const broken = await repo.commit({ 'bosun/web.yaml': deploymentFile('from-git', 'echo v2').replace('steps:', 'steps: [') });
    expect((await admin.request('post', `/config/sources/${gitSource.id}/sync`, {})).status).toBe(202);
    await page.locator('[data-config-source="cc-repo"][data-state="failing"]').waitFor({ timeout: 60_000 });
    expect(await card.locator('[data-last-error]').innerText()).toMatch(/^The last sync applied nothing: .*bosun\/web\.yaml:\d+:\d+: /);
    expect(await card.locator('[data-last-plan]').innerText()).toContain(`Last plan at ${broken.slice(0, 7)}`);
    expect(await card.getByRole('list', { name: "Errors of cc-repo's last plan" }).innerText()).toMatch(/^bosun\/web\.yaml:\d+:\d+: /);

    const ssh = page.locator('[data-config-source="ssh-repo"]');
    expect(await ssh.getAttribute('data-state')).toBe('waiting for a host key');
    const offered = (await sourceOf(sshSource.id)).status.offered_host_key.fingerprint as string;
    expect(await ssh.locator('[data-offered-host-key]').innerText()).toContain(offered);
    expect(await accessibilityViolations(page)).toEqual([]);
    const width = await pageWidth(page);
    expect(width.scroll).toBeLessThanOrEqual(width.viewport);
    await screenshot(page, 'config-sources');

    await ssh.getByRole('button', { name: 'Trust this key and sync' }).click();
    await page.locator('[data-config-source="ssh-repo"][data-state="in sync"]').waitFor({ timeout: 60_000 });
    expect((await sourceOf(sshSource.id)).host_key_fingerprint).toBe(offered);
    expect(problemsOf(page)).toEqual([]);
    await page.close();
  }, 180_000);
});
