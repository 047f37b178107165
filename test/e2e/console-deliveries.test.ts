/// <reference lib="dom" />
import type { Browser } from 'playwright-core';
import { startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';
import { eventually } from '../support/eventually';
import { accessibilityViolations, launchBrowser, problemsOf, screenshot, signedInPage } from '../support/browser';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

// The API's JSON, as the tests read it.
type Json = any;

/*
 * A channel whose receiver refuses everything, in the console: each delivery says this round's
 * attempts out of the retry policy's maximum, when the next attempt is due (in how long, and at what
 * time), why one waits with no attempt at all, and — after the last attempt — that it is dead.
 */

/** The policy this Bosun runs: 4 s, then 8 s, and dead after the 3rd attempt (about 12 s); 24 h and 33 by default. */
const RETRY_SECONDS = 4;
const MAX_ATTEMPTS = 3;

describe('a refused channel’s deliveries in the console', () => {
  let bosun: Bosun;
  let admin: User;
  let browser: Browser;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    bosun = await startBosun({ env: { NOTIFICATION_RETRY_SECONDS: String(RETRY_SECONDS), NOTIFICATION_MAX_ATTEMPTS: String(MAX_ATTEMPTS) } });
    admin = await asUser(bosun, 'deliveries');
    receiver = await startReceiver();
    receiver.answer = () => ({ status: 503, body: 'down for maintenance' });
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.stop();
    admin?.close();
    await bosun?.stop();
  });

  test('attempts out of the maximum, the next attempt’s time, why the second waits, and dead after the last attempt', async () => {
    const channel = (await admin.request('post', '/notification-channels', { name: 'refused', type: 'webhook', url: receiver.url, events: ['run.failed'] })).body.data;
    // Two pings: one subject (the channel), so the second waits for the first.
    await admin.request('post', `/notification-channels/${channel.id}/test`);
    await eventually(async () => (await admin.request('get', `/notification-channels/${channel.id}/deliveries`)).body.data, (d: unknown[]) => d.length === 1);
    await admin.request('post', `/notification-channels/${channel.id}/test`);
    const listed: Json[] = await eventually(async () => (await admin.request('get', `/notification-channels/${channel.id}/deliveries`)).body.data, (d: Json[]) => d.length === 2 && d[1].status === 'delivering');
    const [second, first] = listed;

    const page = await signedInPage(browser, bosun.url, admin.token);
    await page.goto(`${bosun.url}/notifications/${channel.id}`);
    const firstRow = page.locator(`tr[data-delivery="${first!.id}"]`);
    const secondRow = page.locator(`tr[data-delivery="${second!.id}"]`);

    // The first is retrying: n of 3 attempts failed, the next one in so many seconds (counting down), at a time.
    await firstRow.getByText(new RegExp(`^[12] of ${MAX_ATTEMPTS} attempts failed: the receiver answered 503`)).waitFor();
    await firstRow.locator('.status', { hasText: 'retrying' }).waitFor();
    const next = firstRow.locator('[data-next-attempt]', { hasText: new RegExp(`^in \\d+ s\\s*at \\d.+ · attempt (2 of ${MAX_ATTEMPTS}|3 of ${MAX_ATTEMPTS}, the last: dead if it fails)$`) });
    await next.waitFor();
    expect(await next.locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
    await firstRow.locator('[data-attempts]', { hasText: new RegExp(`^[12] of ${MAX_ATTEMPTS}$`) }).waitFor();
    // The second has no attempt yet, and says why.
    expect(await secondRow.locator('[data-attempts]').innerText()).toBe(`0 of ${MAX_ATTEMPTS}`);
    await secondRow.locator('[data-delivery-state]', { hasText: /^waiting for the ping before it to be delivered or given up: one channel’s events go out in order$/ }).waitFor();
    expect(await secondRow.locator('td').nth(3).innerText()).toBe('after the one before it');
    await screenshot(page, 'deliveries-retrying');
    expect(await accessibilityViolations(page)).toEqual([]);

    // After the third attempt: dead, with no next attempt; the receiver saw exactly three, one webhook-id.
    await firstRow.locator('.status', { hasText: 'dead' }).waitFor({ timeout: 60_000 });
    expect(await firstRow.locator('[data-delivery-state]').innerText()).toBe(`not delivered in ${MAX_ATTEMPTS} attempts: the receiver answered 503`);
    expect(await firstRow.locator('td').nth(3).innerText()).toBe('none');
    expect(receiver.received.filter((r) => r.id === `msg_${first!.id}`)).toHaveLength(MAX_ATTEMPTS);
    const dead = (await admin.request('get', `/notification-channels/${channel.id}/deliveries?status=dead`)).body.data;
    expect(dead).toEqual([expect.objectContaining({ id: first!.id, round_attempts: MAX_ATTEMPTS, attempt_count: MAX_ATTEMPTS, max_attempts: MAX_ATTEMPTS, next_attempt_at: null, pending_reason: null })]);
    // The second goes next; the page follows it.
    await secondRow.getByText(new RegExp(`of ${MAX_ATTEMPTS} attempts failed`)).waitFor();
    await screenshot(page, 'deliveries-dead');
    expect(problemsOf(page)).toEqual([]);
  }, 120_000);

  test('the API says why a pending delivery waits, and its policy; a redeliver begins a new round', async () => {
    const channel = (await admin.request('post', '/notification-channels', { name: 'api-view', type: 'webhook', url: receiver.url, events: ['run.failed'] })).body.data;
    await admin.request('post', `/notification-channels/${channel.id}/test`);
    const [first]: Json[] = await eventually(async () => (await admin.request('get', `/notification-channels/${channel.id}/deliveries`)).body.data, (d: Json[]) => d[0]?.status === 'delivering');
    await admin.request('post', `/notification-channels/${channel.id}/test`);
    const waiting: Json[] = await eventually(
      async () => (await admin.request('get', `/notification-channels/${channel.id}/deliveries?status=pending`)).body.data,
      (d: Json[]) => d.length === 1 && /waiting for/.test(d[0].pending_reason ?? ''),
    );
    expect(waiting[0]).toMatchObject({ attempt_count: 0, round_attempts: 0, max_attempts: MAX_ATTEMPTS, waiting_for: first.id, next_attempt_at: null });

    const dead: Json[] = await eventually(async () => (await admin.request('get', `/notification-channels/${channel.id}/deliveries?status=dead`)).body.data, (d: Json[]) => d.length === 1, 60_000);
    receiver.answer = () => ({ status: 204 });
    const again = await admin.request('post', `/notification-channels/${channel.id}/deliveries/${dead[0].id}/redeliver`);
    expect(again.status).toBe(202);
    expect(again.body.data).toMatchObject({ status: 'pending', attempt_count: MAX_ATTEMPTS, round_attempts: 0, pending_reason: expect.any(String) });
    const delivered: Json[] = await eventually(async () => (await admin.request('get', `/notification-channels/${channel.id}/deliveries`)).body.data, (d: Json[]) => d.every((x) => x.status === 'delivered'), 60_000);
    expect(delivered.find((d) => d.id === dead[0].id)).toMatchObject({ round_attempts: 1, attempt_count: MAX_ATTEMPTS + 1 });
  }, 120_000);
});
