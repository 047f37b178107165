/// <reference lib="dom" />
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { addPerson, asUser, type User } from '../support/client';
import { accessibilityViolations, launchBrowser, problemsOf, screenshot, signedInPage } from '../support/browser';
import { sharedFolder } from '../support/trees';

/*
 * A run's page tells what a run waits for: the targets behind its gate wait for approval (not
 * queued), its duration splits the time it ran from the time it waited, the gate's card names who
 * may approve it (a person, a team; never the one who triggered it), and a log's Follow lets go once
 * its step has ended.
 */

const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
const HERE = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3)';

/** "12 s running · 3 s waiting for approval" as the page shows it: the seconds of each part. */
const partsOf = (text: string) => Object.fromEntries(text.split(' · ').map((part) => [part.replace(/^[\d\s]+s /, ''), Number(/^(\d+) s/.exec(part)?.[1] ?? NaN)]));

describe('a run that waits, on its page', () => {
  let bosun: SharedBosun;
  let admin: User;
  let carol: User & { id: string };
  let alice: User & { id: string };
  let dave: User & { id: string };
  let servers: string[];
  let browser: Browser;
  let work: string;

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await asUser(bosun, 'console-run-waiting');
    servers = [];
    for (const [i, host] of ADDRESSES.entries()) servers.push(await admin.addServer({ host, title: `waiting-${i + 1}`, tags: ['waiting'] }));
    // The log's own server: its run never queues behind the fleet runs' targets.
    servers.push(await admin.addServer({ host: '127.0.0.5', title: 'logged' }));
    carol = await addPerson(bosun, admin, 'Carol', 'admin');
    alice = await addPerson(bosun, admin, 'Alice', 'approver');
    // Erin approves through her team; Dave, who only reads, is never named.
    dave = await addPerson(bosun, admin, 'Dave', 'viewer');
    const erin = (await admin.request('post', '/people', { name: 'Erin' })).body.data;
    const team = (await admin.request('post', '/teams', { name: 'release', members: [erin.id] })).body.data;
    expect((await admin.request('post', '/role-bindings', { role: 'approver', subject: { type: 'team', id: team.id } })).status).toBe(201);
    work = sharedFolder('bosun-console-run-waiting-');
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    for (const user of [admin, carol, alice, dave]) user?.close();
    await bosun?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const targetStatuses = (page: Page) => page.locator('li[data-target] .status').allInnerTexts();

  test('at its gate: the targets behind it wait for approval, the duration counts the wait apart, the card names who may approve', async () => {
    const deployment = await carol.define({ name: 'waiting-release', targets: { tags: ['waiting'] }, strategy: { batch_size: 1, gates: [{ before_batch: 2, approvals: 1, expires_in: '4h' }] }, steps: [{ name: 'release', command: 'echo released' }] });
    const { run_id: runId } = await carol.trigger(deployment.id);
    const waiting = await carol.waitForRun(deployment.id, runId, (run) => run.status === 'awaiting_approval');
    const runUrl = `${bosun.url}/deployments/${deployment.id}/runs/${runId}`;

    const page = await signedInPage(browser, bosun.url, alice.token);
    await page.goto(runUrl);
    const gate = page.getByRole('region', { name: 'Approval gate before batch 2' });
    // Alice and the team release may approve; Carol triggered the run and is not named.
    expect(await gate.locator('[data-approvers]').innerText()).toBe('May approve: Alice or a member of team release');
    expect(await targetStatuses(page)).toEqual(['success', 'waiting for approval', 'waiting for approval']);
    expect(await page.locator('[data-summary]').innerText()).toBe('1 success, 2 waiting for approval');
    expect(await page.locator('li[data-target] .status-held-approval').first().getAttribute('title')).toBe('queued: the run waits for approval before batch 2');

    // The wait counts on each second while the time it ran stands still.
    const duration = page.locator('[data-duration]');
    const first = partsOf(await duration.innerText());
    expect(Object.keys(first)).toEqual(['running', 'waiting for approval']);
    await page.waitForFunction((seen) => {
      const text = document.querySelector('[data-duration]')?.textContent ?? '';
      return new RegExp(`^${seen.running} s running · (\\d+) s waiting for approval$`).test(text) && Number(/· (\d+) s/.exec(text)![1]) > seen.waiting;
    }, { running: first.running!, waiting: first['waiting for approval']! });
    expect(first.running).toBe((await carol.getRun(deployment.id, runId)).running_seconds);
    expect(waiting.waits.current).toEqual({ for: 'approval', since: waiting.gate.opened_at });
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'run-waiting-gate');

    const narrow = await signedInPage(browser, bosun.url, carol.token, { viewport: { width: 1280, height: 900 } });
    await narrow.goto(runUrl);
    const carolGate = narrow.getByRole('region', { name: 'Approval gate before batch 2' });
    await carolGate.getByText('You triggered this run: another person must approve it').waitFor();
    expect(await carolGate.locator('[data-approvers]').innerText()).toBe('May approve: Alice or a member of team release');
    expect(await narrow.locator('[data-duration]').innerText()).toMatch(/^\d+ s running · \d+ s waiting for approval$/);
    expect(await accessibilityViolations(narrow)).toEqual([]);
    await screenshot(narrow, 'run-waiting-gate-1280');

    // Approved on the page: the card no longer names Alice, the targets run, and the wait stops counting.
    await gate.getByRole('button', { name: 'Approve' }).click();
    await page.locator('h1').getByText('success').waitFor({ timeout: 30_000 });
    expect(await targetStatuses(page)).toEqual(['success', 'success', 'success']);
    expect(await gate.locator('[data-approvers]').count()).toBe(0);
    const done = await carol.getRun(deployment.id, runId);
    const ended = `${done.running_seconds} s running · ${done.waits.approval_seconds} s waiting for approval`;
    await page.locator('[data-duration]', { hasText: new RegExp(`^${ended}$`) }).waitFor();
    await narrow.locator('h1').getByText('success').waitFor({ timeout: 30_000 });
    await narrow.locator('[data-duration]', { hasText: new RegExp(`^${ended}$`) }).waitFor();
    expect([...problemsOf(page), ...problemsOf(narrow)]).toEqual([]);
  });

  test('paused: the targets not started say so, and so does the duration; a gate opened later is read with who may approve it', async () => {
    const deployment = await carol.define({
      name: 'waiting-paused',
      targets: { tags: ['waiting'] },
      strategy: { batch_size: 1, gates: [{ before_batch: 3, approvals: 1 }] },
      steps: [{ name: 'release', command: `${HERE}; while [ -d ${work} ] && [ ! -e ${work}/go-$here ]; do sleep 0.1; done` }],
    });
    const { run_id: runId } = await carol.trigger(deployment.id);
    await carol.waitForRun(deployment.id, runId, (run) => run.targets[0].status === 'running');
    const page = await signedInPage(browser, bosun.url, carol.token);
    await page.goto(`${bosun.url}/deployments/${deployment.id}/runs/${runId}`);
    await page.locator('li[data-target] .status-running').waitFor();
    expect(await targetStatuses(page)).toEqual(['running', 'queued', 'queued']);
    expect(await carol.decide(deployment.id, runId, 'pause', { reason: 'checking the dashboards' })).toMatchObject({ status: 200 });
    writeFileSync(path.join(work, `go-${ADDRESSES[0]}`), '');
    await page.locator('h1').getByText('paused').waitFor({ timeout: 30_000 });
    expect(await targetStatuses(page)).toEqual(['success', 'paused', 'paused']);
    // Held long enough to count a second (a pause rounded to 0 s is not shown once it has ended).
    await page.locator('[data-duration]', { hasText: /^.+ running · (?!0 s )\S.* paused$/ }).waitFor();

    // Resumed: batch 2 runs, then the gate before batch 3 opens on the open page, naming who may approve.
    writeFileSync(path.join(work, `go-${ADDRESSES[1]}`), '');
    expect(await carol.decide(deployment.id, runId, 'resume')).toMatchObject({ status: 200 });
    await page.locator('h1').getByText('awaiting_approval').waitFor({ timeout: 30_000 });
    const gate = page.getByRole('region', { name: 'Approval gate before batch 3' });
    expect(await gate.locator('[data-approvers]').innerText()).toBe('May approve: Alice or a member of team release');
    expect(await targetStatuses(page)).toEqual(['success', 'success', 'waiting for approval']);
    await page.locator('[data-duration]', { hasText: /^.+ running · .+ waiting for approval · .+ paused$/ }).waitFor();
    await carol.cancelRun(deployment.id, runId);
    await page.locator('h1').getByText('cancelled').waitFor({ timeout: 30_000 });
    expect(problemsOf(page)).toEqual([]);
  });

  test('a log followed while its step runs lets go of Follow once the step has ended, its last line in view', async () => {
    const deployment = await admin.defineDeployment(servers[3]!, [
      { name: 'count', command: `for i in $(seq 1 200); do echo "line $i"; done; while [ -d ${work} ] && [ ! -e ${work}/count-go ]; do sleep 0.1; done; echo "the last line"` },
    ]);
    const { run_id: runId } = await admin.trigger(deployment.id);
    await admin.waitForRun(deployment.id, runId, (run) => run.status === 'running');
    const page = await signedInPage(browser, bosun.url, carol.token);
    await page.goto(`${bosun.url}/deployments/${deployment.id}/runs/${runId}`);
    const follow = page.getByRole('checkbox', { name: 'Follow' });
    await page.getByText('line 200', { exact: true }).waitFor();
    expect(await follow.isChecked()).toBe(true);

    writeFileSync(path.join(work, 'count-go'), '');
    await page.locator('h1').getByText('success').waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => !(document.querySelector('.log-bar input[type=checkbox]') as HTMLInputElement).checked);
    // The last line is there and in view: the view followed the step to its end before letting go.
    const last = page.getByText('the last line', { exact: true });
    await last.waitFor();
    expect(await last.isVisible()).toBe(true);
    const inView = await last.evaluate((line) => {
      const box = line.closest('.log-lines')!.getBoundingClientRect();
      const own = line.getBoundingClientRect();
      return own.top >= box.top && own.bottom <= box.bottom;
    });
    expect(inView).toBe(true);
    await page.locator('.log-lines').scrollIntoViewIfNeeded();
    await screenshot(page, 'run-log-ended');
    expect(problemsOf(page)).toEqual([]);
  });
});
