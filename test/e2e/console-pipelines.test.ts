/// <reference lib="dom" />
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { addPerson, asUser, type User } from '../support/client';
import { accessibilityViolations, launchBrowser, pageWidth, problemsOf, screenshot, signedInPage } from '../support/browser';
import { sharedFolder } from '../support/trees';

type Json = any;

/*
 * Pipelines in Chromium: a person finds a pipeline from the navigation, sees its stages drawn as a
 * graph, runs it from its form and watches the run go through to success without reloading. A gated
 * stage: the person who triggered the run is told why she cannot approve it; an approver approves it
 * (or rejects it with a reason) from the run's page and the run goes on (or fails).
 */

describe('pipelines in the console', () => {
  let bosun: SharedBosun;
  let admin: User;
  let carol: User & { id: string };
  let alice: User & { id: string };
  let browser: Browser;
  let work: string;
  const pipelines: Record<string, string> = {};

  const created = async (user: User, url: string, body: object) => {
    const res = await user.request('post', url, body);
    if (res.status !== 201) throw new Error(`POST ${url}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as Json;
  };
  /** Each stage's box on the page, its status as it shows it. */
  const stageStatuses = (page: Page) =>
    page.locator('[data-stage-box]').evaluateAll((boxes) => Object.fromEntries(boxes.map((b) => [(b as HTMLElement).dataset.stageBox, (b as HTMLElement).dataset.stageStatus ?? null])));

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await asUser(bosun, 'console-pipelines');
    const server = await admin.addServer({ host: '127.0.0.2', title: 'web-1', tags: ['web'] });
    carol = await addPerson(bosun, admin, 'Carol', 'admin');
    alice = await addPerson(bosun, admin, 'Alice', 'approver');
    work = sharedFolder('bosun-console-pipelines-');
    // The build waits for the test's go: the run is seen running before it ends.
    await created(carol, '/deployments', { name: 'build', server_id: server, parameters: [{ name: 'version', required: true }], steps: [{ name: 'build', command: `while [ -d ${work} ] && [ ! -e ${work}/go ]; do sleep 0.1; done; echo "artifact=web-$BOSUN_PARAM_VERSION.tgz" >> "$BOSUN_OUTPUT"` }] });
    for (const name of ['test-eu', 'test-us', 'ship']) await created(carol, '/deployments', { name, server_id: server, steps: [{ name, command: `echo ${name}` }] });
    pipelines.release = (
      await created(carol, '/pipelines', {
        name: 'release',
        parameters: [{ name: 'version', required: true }],
        stages: [
          { name: 'build', deployment: 'build', parameters: { version: '${{ pipeline.parameters.version }}' } },
          { name: 'test-eu', deployment: 'test-eu', needs: ['build'] },
          { name: 'test-us', deployment: 'test-us', needs: ['build'] },
          { name: 'ship', deployment: 'ship', needs: ['test-eu', 'test-us'] },
        ],
      })
    ).id;
    pipelines.gated = (
      await created(carol, '/pipelines', {
        name: 'gated-release',
        stages: [
          { name: 'check', deployment: 'test-eu' },
          { name: 'production', deployment: 'ship', needs: ['check'], gate: { approvals: 1, expires_in: '4h' } },
        ],
      })
    ).id;
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    for (const user of [admin, carol, alice]) user?.close();
    await bosun?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  test('from the navigation to a pipeline’s graph, a run from its form, watched live to success', async () => {
    const page = await signedInPage(browser, bosun.url, carol.token);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Pipelines' }).click();
    const row = page.locator('tr[data-pipeline="release"]');
    await row.waitFor();
    expect(await row.locator('td').allInnerTexts()).toEqual(['release', '4', 'never run', '—']);
    expect(await accessibilityViolations(page)).toEqual([]);
    await row.getByRole('link', { name: 'release' }).click();

    // The stages in columns by depth, an arrow for each need.
    const graph = page.getByRole('group', { name: 'The stages of release' });
    await graph.locator('[data-stage-box]').first().waitFor();
    expect(await graph.locator('[data-stage-box]').evaluateAll((boxes) => boxes.map((b) => (b as HTMLElement).dataset.stageBox))).toEqual(['build', 'test-eu', 'test-us', 'ship']);
    await graph.locator('path[data-arrow-from]').nth(3).waitFor({ state: 'attached' });
    const arrows = await graph.locator('path[data-arrow-from]').evaluateAll((paths) => paths.map((p) => `${p.getAttribute('data-arrow-from')} → ${p.getAttribute('data-arrow-to')}`));
    expect(arrows.sort()).toEqual(['build → test-eu', 'build → test-us', 'test-eu → ship', 'test-us → ship']);
    const left = (name: string) => graph.locator(`[data-stage-box="${name}"]`).evaluate((b) => Math.round(b.getBoundingClientRect().left));
    expect([await left('build') < (await left('test-eu')), await left('test-eu') === (await left('test-us')), await left('test-us') < (await left('ship'))]).toEqual([true, true, true]);
    expect(await graph.locator('[data-stage-box="build"] a').getAttribute('href')).toMatch(/^\/deployments\/[0-9a-f]{24}$/);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'pipeline-definition');

    // Run it from the form; the page goes to the run and follows it without reloading.
    await page.getByRole('form', { name: 'Run the pipeline' }).getByLabel('version').fill('v42');
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.waitForURL(new RegExp(`/pipelines/${pipelines.release}/runs/[0-9a-f]{24}$`));
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    const runGraph = page.locator('.pipeline-graph');
    await runGraph.locator('[data-stage-box="build"][data-stage-status="running"]').waitFor({ timeout: 30_000 });
    expect(await stageStatuses(page)).toEqual({ build: 'running', 'test-eu': 'pending', 'test-us': 'pending', ship: 'pending' });
    await page.locator('main h1').getByText('running').waitFor();
    // The build's deployment run began after its stage did: the box follows its own status too.
    await runGraph.locator('[data-stage-box="build"] [data-deployment-run-status]').getByText('running', { exact: true }).waitFor();
    await screenshot(page, 'pipeline-run-running');

    writeFileSync(path.join(work, 'go'), '');
    await page.locator('main h1').getByText('success').waitFor({ timeout: 60_000 });
    expect(await stageStatuses(page)).toEqual({ build: 'success', 'test-eu': 'success', 'test-us': 'success', ship: 'success' });
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    // Each stage links to its deployment run, and the run's parameter is shown.
    const runLinks = await runGraph.locator('a[data-stage-run]').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    expect(runLinks).toHaveLength(4);
    for (const href of runLinks) expect(href).toMatch(/^\/deployments\/[0-9a-f]{24}\/runs\/[0-9a-f]{24}$/);
    await page.locator('dl.facts').getByText('v42').waitFor();
    // The build's output, as its step wrote it.
    const outputs = runGraph.locator('[data-stage-box="build"] dl');
    expect([await outputs.locator('dt').allInnerTexts(), await outputs.locator('dd').allInnerTexts()]).toEqual([['artifact'], ['web-v42.tgz']]);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'pipeline-run-success');

    // At 1,280 px: the page fits, the navigation holds on one line.
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(await pageWidth(page)).toEqual({ scroll: 1280, viewport: 1280 });
    const nav = page.getByRole('navigation', { name: 'Main' });
    const tops = await nav.locator('a, summary').evaluateAll((items) => [...new Set(items.filter((i) => (i as HTMLElement).checkVisibility()).map((i) => Math.round(i.getBoundingClientRect().top)))]);
    expect(tops).toHaveLength(1);
    await screenshot(page, 'pipeline-run-success-1280');
    await page.goto(`${bosun.url}/pipelines`);
    await row.locator('.status', { hasText: 'success' }).waitFor();
    expect(await pageWidth(page)).toEqual({ scroll: 1280, viewport: 1280 });
    await screenshot(page, 'pipelines-1280');
    expect(problemsOf(page)).toEqual([]);
    await page.close();
  }, 120_000);

  test('a gated stage: the triggerer is told why not; an approver approves from the run’s page and the run goes on; a rejection asks a reason and fails the run', async () => {
    const carolPage = await signedInPage(browser, bosun.url, carol.token);
    await carolPage.goto(`${bosun.url}/pipelines/${pipelines.gated}`);
    await carolPage.getByRole('button', { name: 'Run now' }).click();
    await carolPage.waitForURL(new RegExp(`/pipelines/${pipelines.gated}/runs/[0-9a-f]{24}$`));
    const runUrl = carolPage.url();
    const carolGate = carolPage.locator('[data-stage-box="production"]');
    // A loaded machine may take a while to run the check; if the gate never shows, say what the API and the page showed.
    await carolGate
      .getByText('You triggered this run: another person must approve it')
      .waitFor({ timeout: 60_000 })
      .catch(async (error: Error) => {
        const run = (await carol.request('get', `/pipelines/${pipelines.gated}/runs/${runUrl.split('/').pop()}`)).body.data;
        throw new Error(`${error.message}\nthe run as the API shows it: ${JSON.stringify(run)}\nthe page's stages: ${JSON.stringify(await stageStatuses(carolPage))}`);
      });
    expect(await carolGate.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(await stageStatuses(carolPage)).toEqual({ check: 'success', production: 'awaiting_approval' });
    await screenshot(carolPage, 'pipeline-gate-triggerer');

    const alicePage = await signedInPage(browser, bosun.url, alice.token);
    await alicePage.goto(runUrl);
    const gate = alicePage.locator('[data-stage-box="production"]');
    await gate.getByText('0 of 1 approval').waitFor();
    await gate.getByRole('button', { name: 'Approve' }).waitFor();
    expect(await accessibilityViolations(alicePage)).toEqual([]);
    await screenshot(alicePage, 'pipeline-gate-waiting');
    await gate.getByRole('button', { name: 'Approve' }).click();
    await alicePage.locator('main h1').getByText('success').waitFor({ timeout: 60_000 });
    await gate.getByText('Approved by Alice').waitFor();
    expect(await stageStatuses(alicePage)).toEqual({ check: 'success', production: 'success' });
    // The triggerer's page followed it too.
    await carolPage.locator('main h1').getByText('success').waitFor({ timeout: 30_000 });
    await screenshot(alicePage, 'pipeline-gate-approved');

    // Another run, rejected: the reason is asked, shown, and the run fails.
    await carolPage.goto(`${bosun.url}/pipelines/${pipelines.gated}`);
    await carolPage.getByRole('button', { name: 'Run now' }).click();
    await carolPage.waitForURL((url) => url.toString() !== runUrl && /\/runs\/[0-9a-f]{24}$/.test(url.pathname));
    await alicePage.goto(carolPage.url());
    await gate.getByRole('button', { name: 'Reject…' }).click({ timeout: 30_000 });
    await gate.getByLabel('Reason').fill('the change window is closed');
    await gate.getByRole('button', { name: 'Reject', exact: true }).click();
    await alicePage.locator('main h1').getByText('failed').waitFor({ timeout: 30_000 });
    await gate.getByText('Rejected by Alice: the change window is closed').waitFor();
    expect(await stageStatuses(alicePage)).toEqual({ check: 'success', production: 'failed' });
    expect(await accessibilityViolations(alicePage)).toEqual([]);
    await screenshot(alicePage, 'pipeline-gate-rejected');
    expect([...problemsOf(carolPage), ...problemsOf(alicePage)]).toEqual([]);
    await carolPage.close();
    await alicePage.close();
  }, 240_000);
});
