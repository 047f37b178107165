/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { io } from 'socket.io-client';
import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';
import { accessibilityViolations, launchBrowser, newPage, screenshot } from '../support/browser';
import { startOidcProvider, type OidcProvider } from '../support/oidc-provider';
import { portForProcess } from '../support/ports';
import type { BosunSocket } from '../support/socket';
import { PendingSignInModel } from '../../src/domain/sessions/pending-sign-ins';

/**
 * People sign in to the console through a real OpenID provider (oidc-provider, in a child process)
 * in Chromium: login and consent at the provider, the callback, the session cookie, their provider
 * groups mapped to teams; the refusals (disabled, unknown, a forged state or nonce); a provider down.
 */
describe('signing in to the console through OpenID Connect', () => {
  let bosun: Bosun;
  let provider: OidcProvider;
  let admin: User;
  let browser: Browser;
  const teams: Record<string, string> = {};
  const people: Record<string, string> = {};

  beforeAll(async () => {
    const port = await portForProcess();
    // Bosun reads the provider's metadata when a sign-in needs it: the provider may start after Bosun.
    // With a worker: the audit trail's chainer runs there, and sign-ins are read back from the trail.
    bosun = await startBosun({
      env: {
        OIDC_ISSUER_URL: `http://127.0.0.1:${port}`,
        OIDC_CLIENT_ID: 'bosun',
        OIDC_CLIENT_SECRET: 'bosun-client-secret',
        OIDC_SCOPES: 'openid profile email groups',
        OIDC_ORGANIZATION: 'acme',
        OIDC_DISPLAY_NAME: 'Acme SSO',
      },
    });
    admin = await asUser(bosun, 'acme');
    const post = async (path: string, body: object) => (await bosun.api.post(`/api/v1${path}`).set(bearer(admin.token)).send(body).expect(201)).body.data.id as string;
    for (const [name, subject] of [['alice', 'alice-sub'], ['bob', 'bob-sub']] as const) people[name] = await post('/people', { name, oidc_subject: subject });
    teams.ops = await post('/teams', { name: 'ops', oidc_groups: ['ops-group'] });
    // Alice was in dev; her provider no longer says she is.
    teams.dev = await post('/teams', { name: 'dev', oidc_groups: ['dev-group'], members: [people.alice] });
    teams.manual = await post('/teams', { name: 'manual', members: [people.alice] });
    await post('/role-bindings', { role: 'viewer', subject: { type: 'team', id: teams.ops } });
    provider = await startOidcProvider({
      port,
      clients: [{ client_id: 'bosun', client_secret: 'bosun-client-secret', redirect_uris: [`${bosun.url}/api/v1/session/oidc/callback`] }],
      accounts: {
        'alice-sub': { name: 'Alice', email: 'alice@example.com', groups: ['ops-group', 'other-group'] },
        'bob-sub': { name: 'Bob', groups: ['ops-group'] },
        'mallory-sub': { name: 'Mallory', groups: ['ops-group'] },
      },
      // The provider's clock is 25 s behind and its ID tokens live 10 s: each arrives already expired by
      // Bosun's clock, and is accepted within openid-client's tolerance (30 s).
      clockSkewSeconds: -25,
      idTokenTtlSeconds: 10,
    });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await provider?.stop();
    admin?.close();
    await bosun?.stop();
  });

  /** The audit trail's sign-in entries, once one matches. */
  const auditEntries = (match: (entry: any) => boolean) =>
    eventually(async () => ((await bosun.api.get('/api/v1/audit?action=session.*&per_page=100').set(bearer(admin.token))).body.data as any[]).filter(match), (list) => list.length > 0);

  const sessionCookie = async (page: Page) => (await page.context().cookies()).find((c) => c.name === 'bosun_session');
  const asCookie = (value: string) => `bosun_session=${value}`;

  /** From Bosun's sign-in page to the provider, and through its login and consent as `subject`. */
  async function throughProvider(page: Page, subject: string, beforeConsent?: () => Promise<void>) {
    await page.goto(`${bosun.url}/sign-in`);
    await page.getByRole('link', { name: 'Sign in with Acme SSO' }).click();
    await page.waitForURL(`${provider.issuer}/**`);
    await page.locator('input[name=login]').fill(subject);
    await page.locator('input[name=password]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await beforeConsent?.();
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  test('a person signs in through the provider: a session cookie, their identity, their groups’ teams', async () => {
    const page = await newPage(browser);
    await page.goto(`${bosun.url}/sign-in`);
    await page.getByRole('link', { name: 'Sign in with Acme SSO' }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in-oidc');

    await throughProvider(page, 'alice-sub');
    await page.waitForURL(`${bosun.url}/dashboard`);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    const cookie = await sessionCookie(page);
    expect([cookie?.httpOnly, cookie?.sameSite]).toEqual([true, 'Strict']);
    expect(await page.evaluate(() => document.cookie)).toBe('');

    const me = await bosun.api.get('/api/v1/me').set('Cookie', asCookie(cookie!.value)).expect(200);
    expect(me.body.data.identity).toEqual({ type: 'person', id: people.alice, name: 'alice' });
    expect(me.body.data.token).toBeNull();
    // In ops (her group), out of dev (a mapped group she lost), still in manual (mapped to no group).
    expect(me.body.data.teams.map((t: { name: string }) => t.name).sort()).toEqual(['manual', 'ops']);
    const session = await bosun.api.get('/api/v1/session').set('Cookie', asCookie(cookie!.value)).expect(200);
    expect([session.body.data.organization, session.body.data.token_name, session.body.data.rights]).toEqual(['acme', null, ['read']]);
    // In the audit trail: the person, their session, the method and where from.
    const [signedIn] = await auditEntries((e) => e.action === 'session.sign_in' && e.actor.id === people.alice && e.outcome === 'ok');
    expect(signedIn).toMatchObject({ actor: { type: 'person', name: 'alice', token_id: null, session_id: expect.any(String) }, details: { method: 'oidc', subject: 'alice-sub' }, source_address: expect.any(String) });
    await page.context().close();
  });

  test('disabling a signed-in person ends their session at once, over HTTP and on an open socket', async () => {
    const page = await newPage(browser);
    await throughProvider(page, 'alice-sub');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    const cookie = asCookie((await sessionCookie(page))!.value);
    const socket: BosunSocket = io(bosun.url, { transports: ['websocket'], reconnection: false, extraHeaders: { cookie } });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('connect_error', reject));
    const ended = new Promise((resolve) => socket.once('session_ended', resolve));

    await bosun.api.patch(`/api/v1/people/${people.alice}`).set(bearer(admin.token)).send({ disabled: true }).expect(200);
    expect(await ended).toEqual({ reason: 'disabled', message: 'Your identity was disabled' });
    const refused = await bosun.api.get('/api/v1/me').set('Cookie', cookie).expect(401);
    expect(refused.body.error.code).toBe('unauthorized');
    socket.close();
    await bosun.api.patch(`/api/v1/people/${people.alice}`).set(bearer(admin.token)).send({ disabled: false }).expect(200);
    await page.context().close();
  });

  test('a disabled person, and one Bosun does not know, are refused and told why', async () => {
    await bosun.api.patch(`/api/v1/people/${people.bob}`).set(bearer(admin.token)).send({ disabled: true }).expect(200);
    const page = await newPage(browser);
    await throughProvider(page, 'bob-sub');
    await page.waitForURL(`${bosun.url}/sign-in?sso=disabled`);
    await page.getByRole('alert').filter({ hasText: 'Your identity is disabled: ask an administrator.' }).waitFor();
    expect(await sessionCookie(page)).toBeUndefined();

    await page.context().close();

    const another = await newPage(browser);
    await throughProvider(another, 'mallory-sub');
    await another.waitForURL(`${bosun.url}/sign-in?sso=unknown_person`);
    await another.getByRole('alert').filter({ hasText: 'Bosun does not know you yet' }).waitFor();
    expect(await sessionCookie(another)).toBeUndefined();
    expect(await accessibilityViolations(another)).toEqual([]);
    await screenshot(another, 'sign-in-oidc-unknown-person');
    await another.context().close();

    // Both refusals are in the audit trail, with why.
    await auditEntries((e) => e.outcome === 'refused' && e.actor.id === people.bob && e.details.reason === 'disabled');
    const [unknown] = await auditEntries((e) => e.outcome === 'refused' && e.details.reason === 'unknown_person');
    expect(unknown).toMatchObject({ action: 'session.sign_in', actor: { type: 'person', id: null, name: 'Mallory' }, details: { method: 'oidc', subject: 'mallory-sub' } });
  });

  test('a callback with a forged state, or an ID token with another nonce, is refused', async () => {
    // A sign-in begun (its key in the browser's cookie, the provider's URL carrying the real state), come back with another state.
    const begun = await bosun.api.get('/api/v1/session/oidc').expect(303);
    const pendingCookie = (begun.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('bosun_oidc='))!.split(';')[0]!;
    expect(new URL(begun.headers.location!).searchParams.get('code_challenge_method')).toBe('S256');
    const forged = await bosun.api.get('/api/v1/session/oidc/callback?code=some-code&state=forged-state').set('Cookie', pendingCookie).expect(303);
    expect(forged.headers.location).toBe('/sign-in?sso=failed');
    expect(String(forged.headers['set-cookie'])).not.toContain('bosun_session=');
    // The sign-in was used up: the real state cannot finish it now.
    const state = new URL(begun.headers.location!).searchParams.get('state');
    const replayed = await bosun.api.get(`/api/v1/session/oidc/callback?code=some-code&state=${state}`).set('Cookie', pendingCookie).expect(303);
    expect(replayed.headers.location).toBe('/sign-in?sso=expired');

    // The nonce Bosun expects is not the one the provider was sent (and signs into the ID token).
    const page = await newPage(browser);
    await throughProvider(page, 'alice-sub', async () => {
      await PendingSignInModel.updateMany({}, { $set: { nonce: 'another-nonce' } });
    });
    await page.waitForURL(`${bosun.url}/sign-in?sso=failed`);
    await page.getByRole('alert').filter({ hasText: 'could not be verified' }).waitFor();
    expect(await sessionCookie(page)).toBeUndefined();
    await page.context().close();

    // A callback replayed (its sign-in already taken) or made up finds nothing to finish.
    const madeUp = await bosun.api.get('/api/v1/session/oidc/callback?code=x&state=y').expect(303);
    expect(madeUp.headers.location).toBe('/sign-in?sso=expired');
  });

  test('with the provider down, the sign-in page says so, and a token still signs in', async () => {
    await provider.stop();
    const page = await newPage(browser);
    // Bosun looks the provider up again after a few seconds: the page says so once it has.
    await eventually(
      async () => {
        await page.goto(`${bosun.url}/sign-in`);
        return page.getByRole('alert').filter({ hasText: 'The identity provider (Acme SSO) cannot be reached' }).waitFor({ timeout: 2_000 }).then(() => true, () => false);
      },
      (shown) => shown,
    );
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in-oidc-unreachable');
    await page.getByLabel('API token').fill(admin.token);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.context().close();
  });
});

describe('when the organization lets a first sign-in create the person (OIDC_CREATE_PEOPLE)', () => {
  let bosun: Bosun;
  let provider: OidcProvider;
  let browser: Browser;
  let admin: User;

  beforeAll(async () => {
    const port = await portForProcess();
    bosun = await startBosun({
      worker: false,
      env: { OIDC_ISSUER_URL: `http://127.0.0.1:${port}`, OIDC_CLIENT_ID: 'bosun', OIDC_CLIENT_SECRET: 'secret', OIDC_SCOPES: 'openid profile email groups', OIDC_ORGANIZATION: 'newcomers', OIDC_DISPLAY_NAME: 'Acme SSO', OIDC_CREATE_PEOPLE: 'true' },
    });
    admin = await asUser(bosun, 'newcomers');
    const ops = (await bosun.api.post('/api/v1/teams').set(bearer(admin.token)).send({ name: 'ops', oidc_groups: ['ops-group'] }).expect(201)).body.data.id as string;
    await bosun.api.post('/api/v1/role-bindings').set(bearer(admin.token)).send({ role: 'operator', subject: { type: 'team', id: ops } }).expect(201);
    provider = await startOidcProvider({
      port,
      clients: [{ client_id: 'bosun', client_secret: 'secret', redirect_uris: [`${bosun.url}/api/v1/session/oidc/callback`] }],
      accounts: { 'carol-sub': { name: 'Carol', email: 'carol@example.com', groups: ['ops-group'] } },
    });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await provider?.stop();
    admin?.close();
    await bosun?.stop();
  });

  test('Carol, unknown to Bosun, signs in: she is created, matched by her subject, and in her group’s team with its rights', async () => {
    const signIn = async () => {
      const page = await newPage(browser);
      await page.goto(`${bosun.url}/sign-in`);
      await page.getByRole('link', { name: 'Sign in with Acme SSO' }).click();
      await page.waitForURL(`${provider.issuer}/**`);
      await page.locator('input[name=login]').fill('carol-sub');
      await page.locator('input[name=password]').fill('any password');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      const cookie = (await page.context().cookies()).find((c) => c.name === 'bosun_session')!;
      const me = (await bosun.api.get('/api/v1/me').set('Cookie', `bosun_session=${cookie.value}`).expect(200)).body.data;
      await page.context().close();
      return me;
    };
    const first = await signIn();
    expect(first.identity).toMatchObject({ type: 'person', name: 'Carol' });
    expect(first.teams.map((t: { name: string }) => t.name)).toEqual(['ops']);
    expect(first.bindings.map((b: { role: string }) => b.role)).toEqual(['operator']);
    const people = (await bosun.api.get('/api/v1/people').set(bearer(admin.token)).expect(200)).body.data;
    expect(people).toEqual([expect.objectContaining({ name: 'Carol', email: 'carol@example.com', oidc_subject: 'carol-sub', disabled: false })]);
    // The second sign-in finds her: one person, the same id.
    expect((await signIn()).identity.id).toBe(first.identity.id);
    expect((await bosun.api.get('/api/v1/people').set(bearer(admin.token)).expect(200)).body.meta.total).toBe(1);
  });
});
