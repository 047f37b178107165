/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { addPerson, asUser, type User } from '../support/client';
import { launchBrowser, openFromNav, problemsOf, screenshot, signedInPage } from '../support/browser';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/*
 * An administrator adds a webhook channel in the console, copies its secret (shown once), sends it a
 * test, opens its deliveries, and redelivers the ping: the receiver gets it twice, with one webhook-id.
 */

describe('notification channels in the console', () => {
  let bosun: SharedBosun;
  let bot: User;
  let carol: User & { id: string };
  let browser: Browser;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    bosun = await sharedBosun();
    bot = await asUser(bosun, 'console-notify');
    carol = await addPerson(bosun, bot, 'Carol', 'admin');
    receiver = await startReceiver();
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.stop();
    for (const user of [bot, carol]) user?.close();
    await bosun?.stop();
  });

  const signedIn = (token: string): Promise<Page> => signedInPage(browser, bosun.url, token);

  test('add a channel, see its secret once, send a test, redeliver it from its deliveries', async () => {
    const page = await signedIn(carol.token);
    await openFromNav(page, 'Notifications');
    const form = page.getByRole('form', { name: 'Add a channel' });
    await form.getByLabel('Name').fill('ops hooks');
    await form.getByLabel('URL').fill(receiver.url);
    await form.getByRole('button', { name: 'Add the channel' }).click();
    const secret = await page.getByLabel('The signing secret').innerText();
    expect(secret).toMatch(/^whsec_/);
    receiver.secret = secret;
    const row = page.locator('tr[data-channel="ops hooks"]');
    await row.getByRole('button', { name: 'Send a test to ops hooks' }).click();
    await eventually(async () => receiver.events('ping'), (r) => r.length === 1);

    await row.getByRole('link', { name: 'ops hooks' }).click();
    const delivery = page.locator('tr[data-delivery]');
    await delivery.getByText('delivered').waitFor();
    await delivery.getByRole('button', { name: /^Redeliver ping/ }).click();
    const [first, second] = await eventually(async () => receiver.events('ping'), (r) => r.length === 2);
    expect([first!.verified, second!.verified]).toEqual([true, true]);
    expect(second!.id).toBe(first!.id);
    await screenshot(page, 'notification-deliveries');
    expect((await bot.request('get', '/notification-channels')).body.data.map((c: { name: string }) => c.name)).toEqual(['ops hooks']);
    expect(problemsOf(page)).toEqual([]);
  }, 90_000);
});
