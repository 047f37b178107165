/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { addPerson, asUser, type User } from '../support/client';
import { accessibilityViolations, launchBrowser, problemsOf, screenshot, signedInPage } from '../support/browser';

/*
 * Guards visible before they bite (issue 36.8, 36.12): a rollout's gate, health check and rollback
 * steps on its page and in its plan; a freeze on the servers tagged web shown on the server's page,
 * the servers list and the deployment's page; a recurring freeze marking a schedule's next runs; and
 * Run now on a frozen deployment — refused before the click for an operator, run through the freeze
 * by an admin who says why. Every freeze a test declares is deleted at its end.
 */

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe('guards and freezes in the console, before they bite', () => {
  let bosun: SharedBosun;
  let bot: User;
  let carol: User & { id: string };
  let olly: User & { id: string };
  let browser: Browser;
  const servers: Record<string, string> = {};
  let rollout: { id: string };
  let hotfix: { id: string };

  beforeAll(async () => {
    bosun = await sharedBosun();
    bot = await asUser(bosun, 'console-guards', await bosun.token('console-guards', ['admin'], 'guard-bot'));
    servers['web-1'] = await bot.addServer({ host: '127.0.0.2', title: 'web-1', tags: ['web'] });
    servers['web-2'] = await bot.addServer({ host: '127.0.0.3', title: 'web-2', tags: ['web'] });
    servers['db-1'] = await bot.addServer({ host: '127.0.0.4', title: 'db-1', tags: ['db'] });
    rollout = await bot.define({
      name: 'web-rollout',
      targets: { tags: ['web'] },
      strategy: {
        batch_size: 1,
        gates: [{ before_batch: 2, approvals: 2, expires_in: '4h' }],
        health_check: { command: 'curl -fsS http://localhost/health', soak_seconds: 30, retries: 2, interval_seconds: 5 },
      },
      rollback: { automatic: true, steps: [{ name: 'restore', command: 'ln -sfn /srv/previous /srv/current' }] },
      steps: [{ name: 'release', command: 'echo released' }],
    });
    hotfix = await bot.defineDeployment(servers['web-1']!, [{ name: 'patch', command: 'echo patched' }], 'web-hotfix');
    carol = await addPerson(bosun, bot, 'Carol', 'admin');
    olly = await addPerson(bosun, bot, 'Olly', 'operator');
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    for (const user of [bot, carol, olly]) user?.close();
    await bosun?.stop();
  });

  const signedIn = (token: string): Promise<Page> => signedInPage(browser, bosun.url, token);

  /** Screenshots at the default 1,400 px and at 1,280 px. */
  async function atBothWidths(page: Page, name: string) {
    await screenshot(page, name);
    await page.setViewportSize({ width: 1280, height: 900 });
    await screenshot(page, `${name}-1280`);
    await page.setViewportSize({ width: 1400, height: 900 });
  }

  /** Runs `story` with these freezes declared (as the bot, an admin), deleting them after. */
  async function whileFrozen<T>(bodies: object[], story: () => Promise<T>): Promise<T> {
    const ids: string[] = [];
    try {
      for (const body of bodies) {
        const res = await bot.request('post', '/freezes', body);
        expect(res.status).toBe(201);
        ids.push(res.body.data.id);
      }
      return await story();
    } finally {
      for (const id of ids) await bot.request('delete', `/freezes/${id}`);
    }
  }

  test('a rollout shows its gate, health check and rollback steps on its page and in its plan preview; a one-server deployment names its server', async () => {
    const page = await signedIn(carol.token);
    await page.goto(`${bosun.url}/deployments`);
    const hotfixRow = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'web-hotfix', exact: true }) });
    expect(await hotfixRow.locator('td').nth(1).innerText()).toBe('web-1');

    await page.goto(`${bosun.url}/deployments/${rollout.id}`);
    const guards = page.getByRole('region', { name: 'Guards' });
    await guards.waitFor();
    expect(await guards.locator('[data-guard]').allInnerTexts()).toEqual([
      'Approval gate after batch 1, before batch 2: 2 approvals needed, expires 4h after it opens',
      expect.stringMatching(/^Health check on each target after its batch:\s*curl -fsS http:\/\/localhost\/health\s*after 30 s soak · limit 10 s · 2 retries 5 s apart$/),
      expect.stringMatching(/^Rollback steps run at once on every server a halted run touched:\s*restore\s*ln -sfn \/srv\/previous \/srv\/current$/),
    ]);
    expect(await accessibilityViolations(page)).toEqual([]);
    await atBothWidths(page, 'deployment-guards');

    await page.getByRole('button', { name: 'Preview the plan' }).click();
    const plan = page.getByLabel('Plan');
    await plan.getByText('Plan: 2 targets in 2 batches').waitFor();
    expect(await plan.locator('[data-guard]').allInnerTexts()).toEqual(await guards.locator('[data-guard]').allInnerTexts());
    await plan.scrollIntoViewIfNeeded();
    await screenshot(page, 'deployment-plan-guards');

    await page.goto(`${bosun.url}/deployments/${hotfix.id}`);
    await page.locator('[data-runs-on]').getByRole('link', { name: 'web-1' }).waitFor();
    expect(await page.locator('[data-runs-on]').innerText()).toBe('Runs on web-1.');
    expect(problemsOf(page)).toEqual([]);
  });

  test('a freeze covering tag web now is on the server’s page, the servers list and the deployment’s page; one opening in 2 days on db-1 is too', async () => {
    const now = Date.now();
    await whileFrozen(
      [
        { name: 'web-freeze', starts_at: iso(now - HOUR), ends_at: iso(now + 5 * HOUR), tags: ['web'] },
        { name: 'db-maintenance', starts_at: iso(now + 48 * HOUR), ends_at: iso(now + 50 * HOUR), tags: ['db'] },
        { name: 'far-away', starts_at: iso(now + 10 * 24 * HOUR), ends_at: iso(now + 11 * 24 * HOUR), tags: null },
      ],
      async () => {
        const page = await signedIn(carol.token);
        await page.goto(`${bosun.url}/servers/${servers['web-1']}`);
        const notices = page.getByRole('list', { name: 'Change freezes' });
        await notices.waitFor();
        expect(await notices.locator('[data-freeze-notice]').allInnerTexts()).toEqual([`Frozen now by web-freeze until ${await localTime(page, now + 5 * HOUR)}`]);
        expect(await accessibilityViolations(page)).toEqual([]);
        await atBothWidths(page, 'server-frozen');

        await page.goto(`${bosun.url}/servers`);
        const row = (title: string) => page.locator(`tr[data-server="${title}"]`);
        await row('web-1').locator('[data-freeze-notice="now"]').waitFor();
        expect(await row('web-2').locator('[data-freeze-notice]').allInnerTexts()).toEqual([`Frozen now by web-freeze until ${await localTime(page, now + 5 * HOUR)}`]);
        expect(await row('db-1').locator('[data-freeze-notice]').allInnerTexts()).toEqual([
          `Change freeze by db-maintenance from ${await localTime(page, now + 48 * HOUR)} until ${await localTime(page, now + 50 * HOUR)}`,
        ]);
        // The date column says what it dates.
        const added = page.getByRole('columnheader', { name: 'Added' });
        expect(await added.locator('[title]').getAttribute('title')).toBe('When the server was added to Bosun');
        expect(await accessibilityViolations(page)).toEqual([]);
        await atBothWidths(page, 'servers-frozen');

        await page.goto(`${bosun.url}/deployments/${rollout.id}`);
        await page.getByRole('list', { name: 'Change freezes' }).waitFor();
        expect(await page.getByRole('list', { name: 'Change freezes' }).innerText()).toBe(`Frozen now by web-freeze until ${await localTime(page, now + 5 * HOUR)} (2 of its servers)`);
        expect(problemsOf(page)).toEqual([]);
      },
    );
  });

  test('a recurring freeze marks the schedule’s next runs that fall inside it', async () => {
    const created = await bot.request('post', `/deployments/${hotfix.id}/schedules`, { name: 'hourly', cron: '0 * * * *', time_zone: 'UTC' });
    expect(created.status).toBe(201);
    // A window opening at the top of the hour three hours from now, two hours long: two of the next ten hourly runs fall in it.
    const opens = (new Date().getUTCHours() + 3) % 24;
    await whileFrozen([{ name: 'nightly-window', cron: `0 ${opens} * * *`, duration: '2h', time_zone: 'UTC', tags: ['web'] }], async () => {
      const page = await signedIn(carol.token);
      await page.goto(`${bosun.url}/deployments/${hotfix.id}`);
      const nextRuns = page.getByRole('table', { name: 'Next runs of hourly' });
      await nextRuns.waitFor();
      const rows = nextRuns.locator('tbody tr');
      expect(await rows.count()).toBe(10);
      const marked = await rows.evaluateAll((trs) => trs.map((tr, i) => (tr.getAttribute('data-frozen') ? i : -1)).filter((i) => i >= 0));
      const { body } = await bot.request('get', `/deployments/${hotfix.id}/schedules/${created.body.data.id}`);
      const inside = body.data.next_runs.flatMap((r: { at: string; frozen_by: unknown[] }, i: number) => (r.frozen_by.length ? [i] : []));
      expect(inside).toHaveLength(2);
      expect(marked).toEqual(inside);
      expect(await rows.nth(inside[0]).innerText()).toContain('in freeze nightly-window: skipped');
      expect(await accessibilityViolations(page)).toEqual([]);
      await nextRuns.scrollIntoViewIfNeeded();
      await screenshot(page, 'schedule-next-runs-frozen');
    });
    expect((await bot.request('delete', `/deployments/${hotfix.id}/schedules/${created.body.data.id}`)).status).toBe(204);
  });

  test('Run now on a frozen deployment: an operator is told until when and cannot click; an admin runs it through the freeze with a reason', async () => {
    const now = Date.now();
    const schedule = (await bot.request('post', `/deployments/${hotfix.id}/schedules`, { name: 'hourly-frozen', cron: '0 * * * *', time_zone: 'UTC' })).body.data;
    await whileFrozen([{ name: 'web-freeze', starts_at: iso(now - HOUR), ends_at: iso(now + 5 * HOUR), tags: ['web'] }], async () => {
      const until = iso(now + 5 * HOUR);
      const ollyPage = await signedIn(olly.token);
      await ollyPage.goto(`${bosun.url}/deployments/${hotfix.id}`);
      const ollyForm = ollyPage.getByRole('form', { name: 'Run the deployment' });
      const frozenButton = ollyForm.getByRole('button', { name: `Frozen until ${await localTime(ollyPage, until)}` });
      await frozenButton.waitFor();
      expect(await frozenButton.isDisabled()).toBe(true);
      expect(await ollyForm.locator('[data-frozen-run]').innerText()).toBe(
        `A change freeze covers its servers until ${await localTime(ollyPage, until)}: a run now is refused. Only a person with role admin may run through a freeze.`,
      );
      expect(await ollyForm.getByLabel('Run through the freeze').count()).toBe(0);
      // A schedule's Run now says it too: its tick would be skipped, frozen.
      const card = ollyPage.getByRole('article', { name: 'Schedule hourly-frozen' });
      expect(await card.locator('[data-frozen-run-now]').innerText()).toBe(
        `Frozen by web-freeze until ${await localTime(ollyPage, until)}: a tick now would be skipped (it runs as ${schedule.run_as.name}, and only a person with role admin runs through a freeze, from the Run form above).`,
      );
      expect(await card.getByRole('button', { name: 'Run now' }).isDisabled()).toBe(true);
      expect(await accessibilityViolations(ollyPage)).toEqual([]);
      await atBothWidths(ollyPage, 'deployment-frozen-operator');

      const page = await signedIn(carol.token);
      await page.goto(`${bosun.url}/deployments/${hotfix.id}`);
      const form = page.getByRole('form', { name: 'Run the deployment' });
      await form.getByLabel('Run through the freeze').check();
      await form.getByLabel('Reason').fill('hotfix for INC-9: checkout is down');
      expect(await accessibilityViolations(page)).toEqual([]);
      await atBothWidths(page, 'deployment-frozen-admin');
      await form.getByRole('button', { name: 'Run now through the freeze' }).click();

      await page.waitForURL(/\/runs\/[0-9a-f]{24}$/);
      const override = page.locator('[data-freeze-override]');
      await override.waitFor();
      const runId = page.url().split('/').pop()!;
      const run = await carol.waitForRun(hotfix.id, runId);
      expect(run).toMatchObject({ status: 'success', freeze_override: { by: { name: 'Carol' }, reason: 'hotfix for INC-9: checkout is down', freezes: ['web-freeze'] } });
      expect(await override.innerText()).toBe(`Triggered through the freeze web-freeze by Carol at ${await localTime(page, run.freeze_override.at)}: hotfix for INC-9: checkout is down`);
      await screenshot(page, 'run-through-freeze');
      expect([...problemsOf(ollyPage), ...problemsOf(page)]).toEqual([]);
    });
    expect((await bot.request('delete', `/deployments/${hotfix.id}/schedules/${schedule.id}`)).status).toBe(204);
  });
});

/** A moment as the console's When shows it in this page's locale and zone. */
const localTime = (page: Page, at: number | string) => page.evaluate((ms) => new Date(ms).toLocaleString(), typeof at === 'number' ? at : Date.parse(at));
