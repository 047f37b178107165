/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer } from '../support/http';
import { accessibilityViolations, launchBrowser, newPage, openFromNav, problemsOf, screenshot } from '../support/browser';

/**
 * People, teams, service accounts and role bindings in the console, in Debian's Chromium against the
 * whole stack: an administrator gives a team a role and reads what it means; a service account's
 * token, shown once, signs in and sees only its own account. Every page passes axe-core and is
 * photographed into test-output/screenshots/.
 */
describe('the console’s people and roles pages', () => {
  let bosun: SharedBosun;
  let browser: Browser;
  let admin: string;
  let page: Page;
  /** The service account's token, as the page showed it once. */
  let ciToken = '';

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await bosun.token('console-access');
    browser = await launchBrowser();
    page = await newPage(browser);
  });
  afterAll(async () => {
    await browser?.close();
    await bosun?.stop();
  });

  const expectAccessible = async (p: Page) => expect(await accessibilityViolations(p)).toEqual([]);
  const signIn = async (p: Page, token: string) => {
    await p.getByLabel('API token').fill(token);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('button', { name: 'Sign out' }).waitFor();
  };
  const nav = (p: Page) => p.getByRole('navigation', { name: 'Main' });
  const stored = (p: Page) => p.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage));

  test('an administrator adds a person, then a team with them in it', async () => {
    await page.goto(`${bosun.url}/people`);
    await page.waitForURL(/\/sign-in\?next=%2Fpeople/);
    await signIn(page, admin);
    await page.waitForURL(`${bosun.url}/people`);

    for (const [name, email] of [['Ada Lovelace', 'ada@example.com'], ['Grace Hopper', '']] as const) {
      await page.getByLabel('Name').fill(name);
      await page.getByLabel('Email').fill(email);
      await page.getByRole('button', { name: 'Add the person' }).click();
      await page.locator(`tr[data-person="${name}"]`).getByText('enabled').waitFor();
    }
    await page.locator('tr[data-person="Ada Lovelace"]').getByText('ada@example.com').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'access-people');

    await openFromNav(page, 'Teams');
    await page.getByLabel('Team name').fill('web team');
    await page.getByLabel('Ada Lovelace').check();
    await page.getByRole('button', { name: 'Add the team' }).click();
    const team = page.locator('tr[data-team="web team"]');
    await team.getByText('Ada Lovelace').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'access-teams');

    // Its members are changed on its own page.
    await team.getByRole('link', { name: 'web team' }).click();
    const members = page.getByRole('group', { name: 'Members' });
    expect(await members.getByLabel('Ada Lovelace').isChecked()).toBe(true);
    await members.getByLabel('Grace Hopper').check();
    await page.getByRole('button', { name: 'Save the members' }).click();
    await page.getByRole('status').getByText('Saved').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'access-team');
    await openFromNav(page, 'Teams');
    await page.locator('tr[data-team="web team"]').getByText('Ada Lovelace, Grace Hopper').waitFor();
  });

  test('granting the team a role limited to a tag: its members’ pages say what that means, in a sentence', async () => {
    await openFromNav(page, 'Role bindings');
    const form = page.getByRole('form', { name: 'Grant a role' });
    await form.getByLabel('Role').selectOption('operator');
    await form.getByLabel('Given to').selectOption({ label: 'web team' });
    await form.getByLabel('Only servers tagged').fill('web');
    await form.getByLabel('At most servers per run').fill('20');
    await form.getByRole('button', { name: 'Grant the role' }).click();
    const sentence = 'operator on servers tagged web, every deployment, at most 20 servers per run';
    await page.getByRole('row').filter({ hasText: 'web team' }).getByText(sentence).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'access-role-bindings');

    // What can Ada do: reached from her row on the people page.
    await openFromNav(page, 'People');
    await page.locator('tr[data-person="Ada Lovelace"]').getByRole('link', { name: 'Ada Lovelace' }).click();
    const can = page.getByRole('region', { name: 'What Ada Lovelace can do' });
    await can.getByText(sentence, { exact: true }).waitFor();
    await can.getByText('through the team web team').waitFor();
    await can.getByText('may read, deployments:run, conversations:write').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'access-person');
  });

  test('a service account’s token is shown once, and the account is given the viewer role from its page', async () => {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: bosun.url });
    await openFromNav(page, 'Service accounts');
    await page.getByLabel('Name').fill('ci-release');
    await page.getByLabel('Description').fill('The release pipeline');
    await page.getByRole('button', { name: 'Add the service account' }).click();
    // An agent is marked so from its row (and back): the API agrees.
    const row = page.locator('tr[data-account="ci-release"]');
    await row.getByRole('button', { name: 'Mark as an agent: ci-release' }).click();
    await row.getByRole('button', { name: 'Mark as not an agent: ci-release' }).waitFor();
    const marked = (await bosun.api.get('/api/v1/service-accounts').set(bearer(admin))).body.data as Array<{ name: string; agent: boolean }>;
    expect(marked.find((a) => a.name === 'ci-release')?.agent).toBe(true);
    await row.getByRole('button', { name: 'Mark as not an agent: ci-release' }).click();
    await row.getByRole('button', { name: 'Mark as an agent: ci-release' }).waitFor();
    await row.getByRole('link', { name: 'ci-release' }).click();
    await page.getByRole('heading', { level: 1, name: 'ci-release' }).waitFor();
    await page.getByRole('region', { name: 'What ci-release can do' }).getByText('No role: ci-release can do nothing yet.').waitFor();

    const form = page.getByRole('form', { name: 'Make a token for ci-release' });
    await form.getByLabel('Name').fill('ci-release-1');
    await form.getByRole('button', { name: 'Create the token' }).click();
    const shown = page.getByLabel('The new token');
    await shown.waitFor();
    ciToken = await shown.innerText();
    expect(ciToken).toMatch(/^bsn_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'access-service-account');
    await page.getByRole('button', { name: 'Done' }).click();
    await shown.waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(ciToken);
    expect(await stored(page)).toBe('{}{}');

    await page.getByRole('link', { name: 'Grant a role' }).click();
    const grant = page.getByRole('form', { name: 'Grant a role' });
    await grant.getByLabel('Role').selectOption('viewer');
    expect(await grant.getByLabel('Given to').inputValue()).toMatch(/^service_account:/);
    await grant.getByRole('button', { name: 'Grant the role' }).click();
    await page.getByRole('row').filter({ hasText: 'ci-release' }).getByText('viewer on every server, every deployment', { exact: true }).waitFor();
  });

  test('disabling the person: their row says so, and the API agrees', async () => {
    await openFromNav(page, 'People');
    const ada = page.locator('tr[data-person="Ada Lovelace"]');
    await ada.getByRole('button', { name: 'Disable Ada Lovelace' }).click();
    await ada.getByText('disabled', { exact: true }).waitFor();
    await ada.getByRole('button', { name: 'Enable Ada Lovelace' }).waitFor();
    const people = (await bosun.api.get('/api/v1/people').set(bearer(admin))).body.data as Array<{ name: string; disabled: boolean }>;
    expect(people.find((p) => p.name === 'Ada Lovelace')?.disabled).toBe(true);
    expect(problemsOf(page)).toEqual([]);
  });

  test('a viewer signs in with the service account’s token: no admin navigation, and its own account with its tokens', async () => {
    const viewer = await newPage(browser);
    await viewer.goto(`${bosun.url}/account`);
    await signIn(viewer, ciToken);
    await viewer.waitForURL(`${bosun.url}/account`);
    for (const name of ['People', 'Teams', 'Service accounts', 'Role bindings', 'Tokens']) expect([name, await nav(viewer).getByRole('link', { name, exact: true }).count()]).toEqual([name, 0]);

    await viewer.getByRole('heading', { level: 1, name: 'My account' }).waitFor();
    await viewer.getByRole('region', { name: 'What you can do' }).getByText('viewer on every server, every deployment', { exact: true }).waitFor();
    const tokens = viewer.getByRole('region', { name: /^Your \d+ tokens?$/ });
    await tokens.locator('tr[data-token="ci-release-1"]').getByText('this session').waitFor();
    await expectAccessible(viewer);
    await screenshot(viewer, 'access-account');

    // Its own token: only the scopes it holds are offered; shown once; revoked from its row.
    const form = viewer.getByRole('form', { name: 'Make a token for yourself' });
    expect(await form.getByRole('checkbox').evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value))).toEqual(['read']);
    await form.getByLabel('Name').fill('ci-release-laptop');
    await form.getByRole('button', { name: 'Create the token' }).click();
    const mine = await viewer.getByLabel('The new token').innerText();
    expect((await bosun.api.get('/api/v1/me').set(bearer(mine))).body.data.identity.name).toBe('ci-release');
    await viewer.getByRole('button', { name: 'Done' }).click();
    const row = tokens.locator('tr[data-token="ci-release-laptop"]');
    await row.getByRole('button', { name: 'Revoke ci-release-laptop' }).click();
    await row.getByRole('button', { name: 'Yes, revoke ci-release-laptop' }).click();
    await row.getByText('revoked').waitFor();
    expect((await bosun.api.get('/api/v1/me').set(bearer(mine))).status).toBe(401);
    expect(await stored(viewer)).toBe('{}{}');

    // An administrator's page typed in by hand says whose it is, and offers nothing.
    await viewer.goto(`${bosun.url}/people`);
    await viewer.getByText('Managing people, teams, service accounts and roles takes the admin role.').waitFor();
    expect(await viewer.getByRole('button', { name: /Disable|Add the person/ }).count()).toBe(0);
    await expectAccessible(viewer);
    await screenshot(viewer, 'access-people-refused');
    expect(problemsOf(viewer)).toEqual([]);
    await viewer.close();
  });
});
