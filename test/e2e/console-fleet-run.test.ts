/// <reference lib="dom" />
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { asUser, type User } from '../support/client';
import { accessibilityViolations, launchBrowser, newPage, problemsOf, screenshot } from '../support/browser';
import { sharedFolder } from '../support/trees';

/*
 * A fleet run's page in Chromium: five "servers" (the test sshd on five loopback addresses), two at a
 * time. Each target's step waits for a file of its address, so the test decides when each target
 * finishes and sees the page follow: targets running, then succeeded, the next batch starting, the
 * counts the API gives.
 */

const ADDRESSES = [2, 3, 4, 5, 6].map((n) => `127.0.0.${n}`);
const TITLES = ADDRESSES.map((_, i) => `fleet-${i + 1}`);
const HERE = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3)';

type Counts = Record<string, number>;
interface Shown {
  heading: string;
  summary: string;
  targets: Record<string, { batch: string; status: string }>;
}

/** What the run page shows of its targets: the section's heading, the counts in words, each target's batch and status. */
const shownOn = (page: Page): Promise<Shown> =>
  page.evaluate(() => {
    const section = document.querySelector('.target-grid')?.closest('section');
    const targets: Record<string, { batch: string; status: string }> = {};
    for (const li of Array.from(document.querySelectorAll<HTMLElement>('li[data-target]'))) {
      targets[li.dataset.target!] = { batch: li.querySelector('.small')?.textContent ?? '', status: li.querySelector('.status')?.textContent ?? '' };
    }
    return { heading: section?.querySelector('h2')?.textContent ?? '', summary: section?.querySelector('[data-summary]')?.textContent ?? '', targets };
  });

/** The counts as the page says them ("1 success, 2 running"), as the API's summary has them (zeros left out). */
const countsIn = (summary: string): Counts => Object.fromEntries(summary.split(', ').filter(Boolean).map((part) => [part.split(' ')[1]!, Number(part.split(' ')[0])]));
const nonZero = (summary: Counts): Counts => Object.fromEntries(Object.entries(summary).filter(([k, n]) => k !== 'total' && n > 0));

describe('a fleet run in the console', () => {
  let bosun: SharedBosun;
  let ops: User;
  let browser: Browser;
  let page: Page;
  let work: string;

  beforeAll(async () => {
    bosun = await sharedBosun();
    ops = await asUser(bosun, 'console-fleet');
    for (const [i, host] of ADDRESSES.entries()) await ops.addServer({ host, title: TITLES[i], tags: ['fleet'] });
    work = sharedFolder('bosun-console-fleet-');
    browser = await launchBrowser();
    page = await newPage(browser);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    ops?.close();
    await bosun?.stop();
    // Steps still waiting (a failed test) end when their folder is gone.
    rmSync(work, { recursive: true, force: true });
  });

  const release = (title: string) => writeFileSync(path.join(work, `go-${ADDRESSES[TITLES.indexOf(title)]}`), '');
  const statuses = (...byTarget: string[]) => Object.fromEntries(TITLES.map((title, i) => [title, byTarget[i]!]));
  /** Waits until the page shows these statuses, then checks its counts against the API's summary (nothing moves meanwhile: every step waits for its file). */
  const expectShown = async (p: Page, deploymentId: string, runId: string, expected: Record<string, string>) => {
    const shown = await eventually(
      () => shownOn(p),
      (s) => JSON.stringify(Object.fromEntries(Object.entries(s.targets).map(([t, v]) => [t, v.status]))) === JSON.stringify(expected),
      30_000,
    );
    expect(Object.values(shown.targets).map((t) => t.batch)).toEqual(['batch 1', 'batch 1', 'batch 2', 'batch 2', 'batch 3']);
    const { summary } = await ops.getRun(deploymentId, runId);
    expect(countsIn(shown.summary)).toEqual(nonZero(summary));
    expect(shown.heading).toBe(`Targets: ${summary.success} of ${summary.total} succeeded`);
    return shown;
  };
  const durationOn = async (p: Page) => {
    const text = await p.locator('dt', { hasText: 'Duration' }).locator('+ dd').innerText();
    const [, min, s] = /^(?:(\d+) min )?(\d+) s$/.exec(text.trim()) ?? [];
    if (s === undefined) throw new Error(`Duration reads "${text}"`);
    return Number(min ?? 0) * 60 + Number(s);
  };

  test('started from its deployment’s page, then opened directly: every target, its batch and status, live, and the counts the API gives', async () => {
    const deployment = await ops.define({
      name: 'web-fleet',
      targets: { tags: ['fleet'] },
      strategy: { batch_size: 2 },
      steps: [{ name: 'release', command: `${HERE}; while [ -d ${work} ] && [ ! -e ${work}/go-$here ]; do sleep 0.1; done; echo "released $here"` }],
    });

    await page.goto(`${bosun.url}/sign-in`);
    await page.getByLabel('API token').fill(ops.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.goto(`${bosun.url}/deployments/${deployment.id}`);
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.waitForURL(/\/runs\/[0-9a-f]{24}$/);
    const runUrl = page.url();
    const runId = runUrl.split('/').pop()!;

    // The first batch runs, the others wait their turn.
    await expectShown(page, deployment.id, runId, statuses('running', 'running', 'queued', 'queued', 'queued'));
    await page.locator('.crumbs').getByRole('link', { name: 'web-fleet' }).waitFor();
    // The duration counts up while it runs.
    const first = await durationOn(page);
    await eventually(() => durationOn(page), (d) => d >= first + 2, 30_000);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'fleet-run-live');

    // Opened directly (a link pasted in a chat), it shows the same, and follows too.
    const direct = await newPage(browser);
    await direct.context().addCookies(await page.context().cookies());
    await direct.goto(runUrl);
    await expectShown(direct, deployment.id, runId, statuses('running', 'running', 'queued', 'queued', 'queued'));

    release('fleet-1');
    await expectShown(page, deployment.id, runId, statuses('success', 'running', 'queued', 'queued', 'queued'));
    release('fleet-2');
    // The second batch starts once the first is done.
    await expectShown(page, deployment.id, runId, statuses('success', 'success', 'running', 'running', 'queued'));
    await expectShown(direct, deployment.id, runId, statuses('success', 'success', 'running', 'running', 'queued'));
    await screenshot(page, 'fleet-run-second-batch');

    for (const title of TITLES.slice(2)) release(title);
    await page.locator('h1').getByText('success').waitFor({ timeout: 30_000 });
    const all = statuses('success', 'success', 'success', 'success', 'success');
    const ended = await expectShown(page, deployment.id, runId, all);
    expect(ended).toMatchObject({ heading: 'Targets: 5 of 5 succeeded', summary: '5 success' });
    // Finished: the duration stops at the API's.
    expect(await durationOn(page)).toBe((await ops.getRun(deployment.id, runId)).duration_seconds);
    await screenshot(page, 'fleet-run');
    await expectShown(direct, deployment.id, runId, all);

    // Opened directly after it ended.
    await direct.reload();
    await expectShown(direct, deployment.id, runId, all);
    await direct.locator('.crumbs').getByRole('link', { name: 'web-fleet' }).waitFor();
    expect(await accessibilityViolations(direct)).toEqual([]);
    await screenshot(direct, 'fleet-run-direct');
    expect(problemsOf(page)).toEqual([]);
    expect(problemsOf(direct)).toEqual([]);
    await direct.close();
  });
});
