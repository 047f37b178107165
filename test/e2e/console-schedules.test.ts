/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { addPerson, asUser, type User } from '../support/client';
import { accessibilityViolations, launchBrowser, openFromNav, problemsOf, screenshot, signedInPage } from '../support/browser';

/*
 * A person in New York looks after a nightly release scheduled in Berlin: the deployment's page shows
 * its next runs in both zones; she pauses it with a note during an incident (the API agrees), unpauses
 * it, runs it now and follows the tick to its run. Then the Freezes page's week calendar.
 */

const HER_ZONE = 'America/New_York';
const format = (iso: string, zone: string) =>
  new Intl.DateTimeFormat('en-US', { timeZone: zone, weekday: 'short', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' }).format(new Date(iso));

describe('schedules and freezes in the console', () => {
  let bosun: SharedBosun;
  let bot: User;
  let carol: User & { id: string };
  let browser: Browser;
  let deploymentId: string;
  let scheduleId: string;

  beforeAll(async () => {
    bosun = await sharedBosun();
    bot = await asUser(bosun, 'console-schedules', await bosun.token('console-schedules', ['admin'], 'release-bot'));
    const serverId = await bot.addServer({ host: '127.0.0.2' });
    deploymentId = (await bot.defineDeployment(serverId, [{ name: 'release', command: 'echo released' }], 'web-release')).id;
    const created = await bot.request('post', `/deployments/${deploymentId}/schedules`, { name: 'nightly', cron: '30 2 * * *', time_zone: 'Europe/Berlin', note: 'the nightly release' });
    expect(created.status).toBe(201);
    scheduleId = created.body.data.id;
    carol = await addPerson(bosun, bot, 'Carol', 'admin');
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    for (const user of [bot, carol]) user?.close();
    await bosun?.stop();
  });

  const signedIn = (token: string): Promise<Page> => signedInPage(browser, bosun.url, token, { timezoneId: HER_ZONE, locale: 'en-US' });

  test('next runs in her zone and Berlin’s; paused with a note, unpaused, run now: the tick leads to its run', async () => {
    const page = await signedIn(carol.token);
    await page.goto(`${bosun.url}/deployments/${deploymentId}`);
    const card = page.getByRole('article', { name: 'Schedule nightly' });
    const nextRuns = card.getByRole('table', { name: 'Next runs of nightly' });
    await nextRuns.waitFor();
    expect(await nextRuns.locator('th').allInnerTexts()).toEqual([`YOUR TIME (${HER_ZONE})`, 'SCHEDULE’S TIME (Europe/Berlin)']);
    const { body } = await bot.request('get', `/deployments/${deploymentId}/schedules/${scheduleId}`);
    const first = body.data.next_runs[0].at as string;
    expect(await nextRuns.locator('tbody tr').count()).toBe(10);
    expect(await nextRuns.locator('tbody tr').first().locator('td').allInnerTexts()).toEqual([format(first, HER_ZONE), format(first, 'Europe/Berlin')]);
    expect(format(first, 'Europe/Berlin')).toContain('02:30 AM');
    await card.getByText('No ticks yet.').waitFor();

    const pause = card.getByRole('form', { name: 'Pause nightly' });
    await pause.getByLabel('Note').fill('INC-7: disk full on db-1');
    await pause.getByRole('button', { name: 'Pause' }).click();
    await card.locator('[data-pause]').getByText('by Carol').waitFor();
    expect(await card.locator('[data-pause]').innerText()).toMatch(/^by Carol .+: INC-7: disk full on db-1$/);
    await card.getByText('No next runs while paused.').waitFor();
    expect((await bot.request('get', `/deployments/${deploymentId}/schedules/${scheduleId}`)).body.data).toMatchObject({
      paused: true,
      pause: { by: { type: 'person', name: 'Carol' }, note: 'INC-7: disk full on db-1' },
      next_runs: [],
    });
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'deployment-schedule-paused');

    const unpause = card.getByRole('form', { name: 'Unpause nightly' });
    await unpause.getByLabel('Note').fill('db-1 has room again');
    await unpause.getByRole('button', { name: 'Unpause' }).click();
    await nextRuns.waitFor();
    expect((await bot.request('get', `/deployments/${deploymentId}/schedules/${scheduleId}`)).body.data).toMatchObject({ paused: false, pause: { note: 'db-1 has room again' } });

    await card.getByRole('button', { name: 'Run now' }).click();
    const fired = card.locator('tr[data-tick="fired"]');
    await fired.waitFor({ timeout: 30_000 });
    await fired.getByText('run now by Carol').waitFor();
    const [tick] = (await bot.request('get', `/deployments/${deploymentId}/schedules/${scheduleId}/ticks`)).body.data;
    expect(tick).toMatchObject({ outcome: 'fired', requested_by: { name: 'Carol' } });
    await page.getByRole('region', { name: 'Runs' }).getByRole('link', { name: tick.run_id.slice(-8) }).waitFor();
    await page.evaluate(() => document.getElementById('schedules')?.scrollIntoView());
    await screenshot(page, 'deployment-schedules');

    await fired.getByRole('link', { name: `Run ${tick.run_id.slice(-8)}` }).click();
    await page.locator('[data-trigger]').getByText('scheduled by nightly at').waitFor();
    expect(await page.locator('[data-trigger]').innerText()).toMatch(/^scheduled by nightly at .+ · as release-bot \(service account\)$/);
    await eventually(async () => (await bot.getRun(deploymentId, tick.run_id)).status, (status) => status === 'success');
    expect(problemsOf(page)).toEqual([]);
  });

  test('the Freezes page draws this week’s windows, one-off and recurring, with what they cover', async () => {
    // A one-off freeze through the API; a recurring one declared through the page's form.
    const now = Date.now();
    const blackFriday = await bot.request('post', '/freezes', { name: 'black-friday', starts_at: new Date(now - 3_600_000).toISOString(), ends_at: new Date(now + 30 * 3_600_000).toISOString(), tags: null, note: 'no changes while the sale runs' });
    expect(blackFriday.status).toBe(201);
    const page = await signedIn(carol.token);
    await page.goto(`${bosun.url}/deployments/${deploymentId}`);
    await openFromNav(page, 'Freezes');

    const form = page.getByRole('form', { name: 'Declare a freeze' });
    await form.getByLabel('Name').fill('business-hours');
    await form.getByLabel('Recurring').check();
    await form.getByLabel('Starts (cron)').fill('0 8 * * 1-5');
    await form.getByLabel('Lasts').fill('10h');
    await form.getByLabel('Time zone').fill('Europe/Berlin');
    await form.getByLabel('Tags').fill('prod');
    await form.getByRole('button', { name: 'Declare' }).click();
    const declared = await eventually(async () => (await bot.request('get', '/freezes')).body.data, (list: Array<{ name: string }>) => list.length === 2);
    expect(declared.find((f: { name: string }) => f.name === 'business-hours')).toMatchObject({ kind: 'recurring', cron: '0 8 * * 1-5', duration: '10h', time_zone: 'Europe/Berlin', tags: ['prod'], created_by: { name: 'Carol' } });

    const week = page.getByRole('list', { name: 'Calendar week' });
    await week.locator('[data-freeze="black-friday"]').first().waitFor();
    await week.locator('[data-freeze="business-hours"]').first().waitFor();
    const days = week.locator(':scope > li');
    expect(await days.count()).toBe(7);
    // Business hours in Berlin (08:00–18:00, UTC+1 in winter, UTC+2 in summer) are 02:00–12:00 or 03:00–13:00 in New York, Monday to Friday.
    for (const i of [0, 1, 2, 3, 4]) expect(await days.nth(i).locator('[data-freeze="business-hours"]').innerText()).toMatch(/^business-hours\n0[23]:00 AM–1[23]:00 PM\nservers tagged prod$/);
    for (const i of [5, 6]) expect(await days.nth(i).locator('[data-freeze="business-hours"]').count()).toBe(0);
    const today = week.locator('li.today');
    expect(await today.locator('[data-freeze="black-friday"]').innerText()).toContain('all servers');
    expect(await page.locator('tr[data-freeze-row="business-hours"]').innerText()).toContain('cron 0 8 * * 1-5 for 10h, in Europe/Berlin');
    await screenshot(page, 'freezes-week');

    await page.getByRole('button', { name: 'Next week →' }).click();
    await week.locator('[data-freeze="business-hours"]').first().waitFor();
    expect(await week.locator('[data-freeze="business-hours"]').count()).toBe(5);

    // The page's URL loaded directly (a reload, a pasted link) is the same page, not the API's 404.
    await page.reload();
    expect(page.url()).toBe(`${bosun.url}/freezes`);
    await week.locator('[data-freeze="black-friday"]').first().waitFor();
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toMatch(/freezes/i);
    expect(problemsOf(page)).toEqual([]);
  });
});
