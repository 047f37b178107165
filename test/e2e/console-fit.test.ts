/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { addPerson, asUser, type User } from '../support/client';
import { accessibilityViolations, launchBrowser, problemsOf, screenshot, signedInPage } from '../support/browser';
import { EVENT_TYPES } from '../../src/domain/notifications/event-types';

/*
 * The administrator's pages fit the window and say what they mean, at 1,400 and 1,280 px: three
 * channels subscribed to every event, a channel's deliveries and the server import fit without a
 * horizontal scroll, and each placeholder of the import form shows in full; the tokens list says
 * what each token can do (an approver's token of scope admin is no admin token); an organization
 * with no team is told what a team is for and how to add one; the console has its icon.
 */

const WIDTHS = [1400, 1280] as const;

/** The page is no wider than the window: nothing makes it scroll sideways. */
const overflow = (page: Page) => page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth }));

/** Each placeholder of the page's fields, and whether it shows in full: as wide as its field's text box at most, and in a textarea no more lines than its rows. */
const placeholders = (page: Page) =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('main input[placeholder], main textarea[placeholder]')).map((field) => {
      const style = getComputedStyle(field);
      const context = document.createElement('canvas').getContext('2d')!;
      context.font = style.font;
      const room = field.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      const lines = field.placeholder.split('\n');
      const widest = Math.max(...lines.map((line: string) => context.measureText(line).width));
      const rows = field instanceof HTMLTextAreaElement ? field.rows : 1;
      return { name: field.name, placeholder: field.placeholder, shown: widest <= room && lines.length <= rows };
    }),
  );

describe('the console’s pages fit and say what they mean', () => {
  let bosun: SharedBosun;
  let bot: User;
  let carol: User & { id: string };
  let ann: User & { id: string };
  let browser: Browser;
  let channels: string[];

  beforeAll(async () => {
    bosun = await sharedBosun();
    bot = await asUser(bosun, 'console-fit');
    carol = await addPerson(bosun, bot, 'Carol', 'admin');
    // Only an approver, on the servers tagged web: her token has the default scope, admin.
    ann = await addPerson(bosun, bot, 'Ann', 'approver', ['web']);
    channels = [];
    for (const name of ['operations-webhooks', 'release-announcements', 'security-and-audit']) {
      const body = { name, type: 'webhook', url: `http://127.0.0.1:9/${name}/hooks`, events: [...EVENT_TYPES], filter: { tags: ['prod', 'web', 'db'], only_final_failure: true } };
      channels.push((await bot.request('post', '/notification-channels', body)).body.data.id);
    }
    // A delivery to show on a channel's page (nothing listens on port 9: it is retried).
    await bot.request('post', `/notification-channels/${channels[0]}/test`);
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    for (const user of [bot, carol, ann]) user?.close();
    await bosun?.stop();
  });

  test.each(WIDTHS)('at %i px: the notifications and a channel’s deliveries fit', async (width) => {
    const page = await signedInPage(browser, bosun.url, carol.token, { viewport: { width, height: 900 } });
    await page.goto(`${bosun.url}/notifications`);
    await page.locator('tr[data-channel]').nth(2).waitFor();
    await page.getByRole('form', { name: 'Add a channel' }).getByLabel('run.failed').waitFor();
    expect(await overflow(page)).toEqual({ scrollWidth: width, innerWidth: width });
    await screenshot(page, `fit-notifications-${width}`);
    if (width === 1400) expect(await accessibilityViolations(page)).toEqual([]);

    await page.goto(`${bosun.url}/notifications/${channels[0]}`);
    await page.locator('tr[data-delivery]').waitFor();
    expect(await overflow(page)).toEqual({ scrollWidth: width, innerWidth: width });
    await screenshot(page, `fit-channel-${width}`);
    if (width === 1400) expect(await accessibilityViolations(page)).toEqual([]);
    expect(problemsOf(page)).toEqual([]);
  }, 90_000);

  test.each(WIDTHS)('at %i px: the server import fits, and every placeholder of its form shows in full', async (width) => {
    const page = await signedInPage(browser, bosun.url, carol.token, { viewport: { width, height: 900 } });
    await page.goto(`${bosun.url}/servers/import`);
    await page.getByRole('form', { name: 'Import an inventory' }).waitFor();
    expect(await overflow(page)).toEqual({ scrollWidth: width, innerWidth: width });
    const shown = await placeholders(page);
    expect(shown.map((p) => p.name)).toEqual(expect.arrayContaining(['source', 'username', 'private_key', 'tags']));
    expect(shown.filter((p) => !p.shown)).toEqual([]);
    await page.getByText('for hosts whose inventory names no user').waitFor();
    await screenshot(page, `fit-server-import-${width}`);
    if (width === 1400) expect(await accessibilityViolations(page)).toEqual([]);
    expect(problemsOf(page)).toEqual([]);
  }, 90_000);

  test.each(WIDTHS)('at %i px: tokens say what they can do — an approver’s token of scope admin approves, an admin’s is admin', async (width) => {
    const page = await signedInPage(browser, bosun.url, carol.token, { viewport: { width, height: 900 } });
    await page.goto(`${bosun.url}/tokens`);
    const annRow = page.locator('tr[data-token="ann-token"]');
    expect(await annRow.locator('[data-token-can]').innerText()).toBe('approver: read, approve on servers tagged web\nscopes: admin');
    expect(await page.locator('tr[data-token="carol-token"] [data-token-can]').innerText()).toBe('admin: everything on every server\nscopes: admin');
    expect(await overflow(page)).toEqual({ scrollWidth: width, innerWidth: width });
    await screenshot(page, `fit-tokens-${width}`);
    if (width === 1400) expect(await accessibilityViolations(page)).toEqual([]);

    // Ann's own account says the same of her token.
    const hers = await signedInPage(browser, bosun.url, ann.token, { viewport: { width, height: 900 } });
    await hers.goto(`${bosun.url}/account`);
    expect(await hers.locator('tr[data-token="ann-token"] [data-token-can]').innerText()).toBe('approver: read, approve on servers tagged web\nscopes: admin');
    expect(await overflow(hers)).toEqual({ scrollWidth: width, innerWidth: width });
    await screenshot(hers, `fit-account-${width}`);
    if (width === 1400) expect(await accessibilityViolations(hers)).toEqual([]);
    expect([...problemsOf(page), ...problemsOf(hers)]).toEqual([]);
  }, 90_000);

  test.each(WIDTHS)('at %i px: with no team, the teams page says what a team is for and how to add one', async (width) => {
    const page = await signedInPage(browser, bosun.url, carol.token, { viewport: { width, height: 900 } });
    await page.goto(`${bosun.url}/teams`);
    // Said once the list has loaded, never while it loads (nor "no people" while they load).
    await page.getByRole('heading', { name: '0 teams' }).waitFor();
    expect(await page.getByRole('form', { name: 'Add a team' }).getByRole('checkbox').count()).toBe(2);
    const empty = page.locator('[data-empty="teams"]');
    expect(await empty.innerText()).toMatch(/^No team yet\. A team grants roles to several people at once: add one with the form above .+ then give it a role on the Role bindings page/);
    expect(await empty.getByRole('link', { name: 'Role bindings' }).getAttribute('href')).toBe('/role-bindings');
    expect(await overflow(page)).toEqual({ scrollWidth: width, innerWidth: width });
    await screenshot(page, `fit-teams-empty-${width}`);
    if (width === 1400) expect(await accessibilityViolations(page)).toEqual([]);
    expect(problemsOf(page)).toEqual([]);
  }, 90_000);

  test('the console has its icon: /favicon.ico is an image, linked from every page’s head', async () => {
    const icon = await bosun.api.get('/favicon.ico');
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(String(icon.body)).toMatch(/^<svg /);
    const page = await signedInPage(browser, bosun.url, carol.token);
    expect(await page.locator('head link[rel="icon"]').getAttribute('href')).toBe('/favicon.ico');
    // Chromium loads it under the page's Content-Security-Policy (img-src 'self') without a complaint.
    const loaded = await page.evaluate(async () => {
      const image = new Image();
      image.src = '/favicon.ico';
      await image.decode();
      return image.naturalWidth > 0;
    });
    expect(loaded).toBe(true);
    expect(problemsOf(page)).toEqual([]);
  }, 60_000);
});
