/// <reference lib="dom" />
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { addPerson, asUser, type User } from '../support/client';
import { accessibilityViolations, launchBrowser, problemsOf, screenshot, signedInPage } from '../support/browser';
import { sharedFolder } from '../support/trees';

/*
 * A gated rollout in Chromium: the person who triggered the run sees the gate without an Approve
 * button, and why; another person approves it on the page and watches the run go on to its end.
 * Then a run paused and resumed from its page.
 */

const ADDRESSES = ['127.0.0.2', '127.0.0.3'];
const HERE = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3)';

describe('guarded rollouts in the console', () => {
  let bosun: SharedBosun;
  let admin: User;
  let carol: User & { id: string };
  let alice: User & { id: string };
  let browser: Browser;
  let work: string;

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await asUser(bosun, 'console-gates');
    for (const [i, host] of ADDRESSES.entries()) await admin.addServer({ host, title: `gated-${i + 1}`, tags: ['gated'] });
    carol = await addPerson(bosun, admin, 'Carol', 'admin');
    alice = await addPerson(bosun, admin, 'Alice', 'approver');
    work = sharedFolder('bosun-console-gates-');
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    for (const user of [admin, carol, alice]) user?.close();
    await bosun?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const signedIn = (token: string): Promise<Page> => signedInPage(browser, bosun.url, token);

  test('the triggerer is told why she cannot approve; another person approves on the page and the run goes on to success', async () => {
    const deployment = await carol.define({ name: 'gated-release', targets: { tags: ['gated'] }, strategy: { batch_size: 1, gates: [{ before_batch: 2, approvals: 1, expires_in: '4h' }] }, steps: [{ name: 'release', command: 'echo released' }] });
    const { run_id: runId } = await carol.trigger(deployment.id);
    await carol.waitForRun(deployment.id, runId, (run) => run.status === 'awaiting_approval');
    const runUrl = `${bosun.url}/deployments/${deployment.id}/runs/${runId}`;

    const carolPage = await signedIn(carol.token);
    // The deployments list says what the run says: waiting for approval, not running.
    await carolPage.goto(`${bosun.url}/deployments`);
    const listed = carolPage.getByRole('row').filter({ has: carolPage.getByRole('link', { name: 'gated-release', exact: true }) });
    expect(await listed.locator('.status').innerText()).toBe('awaiting_approval');
    await carolPage.goto(runUrl);
    const carolGate = carolPage.getByRole('region', { name: 'Approval gate before batch 2' });
    await carolGate.getByText('0 of 1 approval · waiting').waitFor();
    await carolGate.getByText('You triggered this run: another person must approve it').waitFor();
    expect(await carolGate.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await screenshot(carolPage, 'gate-triggerer');

    const alicePage = await signedIn(alice.token);
    await alicePage.goto(runUrl);
    const gate = alicePage.getByRole('region', { name: 'Approval gate before batch 2' });
    await gate.getByRole('button', { name: 'Approve' }).waitFor();
    expect(await accessibilityViolations(alicePage)).toEqual([]);
    await screenshot(alicePage, 'gate-waiting');
    await gate.getByLabel('Comment').fill('canary is healthy');
    await gate.getByRole('button', { name: 'Approve' }).click();

    // The page follows the run on: the gate approved, the second batch run, the run a success.
    await alicePage.locator('h1').getByText('success').waitFor({ timeout: 30_000 });
    await gate.getByText('1 of 1 approval · approved').waitFor();
    await gate.getByText('canary is healthy').waitFor();
    expect(await alicePage.locator('li[data-target] .status').allInnerTexts()).toEqual(['success', 'success']);
    await carolPage.locator('h1').getByText('success').waitFor({ timeout: 30_000 });
    await screenshot(alicePage, 'gate-approved');
    await carolPage.goto(`${bosun.url}/deployments`);
    expect(await listed.locator('.status').innerText()).toBe('success');
    expect(await carol.getRun(deployment.id, runId)).toMatchObject({ status: 'success', gate: { outcome: 'approved', approvals: [{ by: { name: 'Alice' }, comment: 'canary is healthy' }] } });
    expect([...problemsOf(carolPage), ...problemsOf(alicePage)]).toEqual([]);
  });

  test('paused from the run’s page after its batch, then resumed', async () => {
    const deployment = await carol.define({
      name: 'paused-release',
      targets: { tags: ['gated'] },
      strategy: { batch_size: 1 },
      steps: [{ name: 'release', command: `${HERE}; while [ -d ${work} ] && [ ! -e ${work}/go-$here ]; do sleep 0.1; done` }],
    });
    const { run_id: runId } = await carol.trigger(deployment.id);
    await carol.waitForRun(deployment.id, runId, (run) => run.targets[0].status === 'running');
    const page = await signedIn(carol.token);
    await page.goto(`${bosun.url}/deployments/${deployment.id}/runs/${runId}`);
    const pause = page.getByRole('form', { name: 'Pause' });
    await pause.getByLabel('Reason').fill('checking the dashboards');
    await pause.getByRole('button', { name: 'Pause after this batch' }).click();
    await page.getByText('Pausing after this batch — asked by Carol: checking the dashboards').waitFor();

    writeFileSync(path.join(work, `go-${ADDRESSES[0]}`), '');
    await page.getByText('Paused — asked by Carol: checking the dashboards').waitFor({ timeout: 30_000 });
    await page.locator('h1').getByText('paused').waitFor();
    expect(await page.locator('li[data-target] .status').allInnerTexts()).toEqual(['success', 'paused']);
    await screenshot(page, 'run-paused');

    writeFileSync(path.join(work, `go-${ADDRESSES[1]}`), '');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.locator('h1').getByText('success').waitFor({ timeout: 30_000 });
    expect(problemsOf(page)).toEqual([]);
  });

  test('a failed run without an automatic rollback is rolled back from its page', async () => {
    const deployment = await carol.define({
      name: 'manual-rollback',
      targets: { tags: ['gated'] },
      steps: [{ name: 'release', command: 'echo broken; exit 1' }],
      rollback: { automatic: false, steps: [{ name: 'restore', command: 'echo "restoring: $BOSUN_ROLLBACK_REASON"' }] },
    });
    const run = await carol.runToEnd(deployment.id);
    expect([run.status, run.rollback_steps]).toEqual(['failed', 1]);
    const page = await signedIn(carol.token);
    await page.goto(`${bosun.url}/deployments/${deployment.id}/runs/${run.id}`);
    const form = page.getByRole('form', { name: 'Roll back' });
    await form.getByLabel('Reason').fill('release 1.4.2 broke both');
    await form.getByRole('button', { name: 'Roll back' }).click();
    // Seen failing once on a quiet machine (q13, 2026-11-29): if it does again, say what Bosun stored
    // beside what the page shows, so that a page that missed the end is told from a rollback that did not end.
    await page.getByText('rolled back on 2 of 2 touched servers').waitFor({ timeout: 30_000 }).catch(async (error: Error) => {
      const stored = await carol.getRun(deployment.id, run.id);
      const shown = await page.locator('[data-rollback]').allInnerTexts();
      throw new Error(`${error.message}\nstored: ${JSON.stringify({ status: stored.status, rollback: stored.rollback, targets: stored.targets })}\nshown: ${JSON.stringify(shown)}`);
    });
    await page.getByText('asked by Carol').waitFor();
    // Each target's line follows its own event, which may come after the run's summary: awaited, then the lines are exactly these.
    await page.locator('li[data-target] .health', { hasText: 'rollback success' }).nth(1).waitFor({ timeout: 30_000 });
    expect(await page.locator('li[data-target] .health').allInnerTexts()).toEqual(['rollback success', 'rollback success']);
    await screenshot(page, 'run-rolled-back');
    expect(problemsOf(page)).toEqual([]);
  });
});
