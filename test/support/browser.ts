/// <reference lib="dom" />
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';

/** Debian's Chromium (`.ci/run` installs it); playwright-core never downloads a browser of its own. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where the tests write each page's screenshot for a reviewer (not committed). */
export const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'test-output', 'screenshots');

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // This machine's network is closed: Chromium's own background traffic would only fail.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** `options`: the context's own (a time zone, a locale) besides the viewport. */
export async function newPage(browser: Browser, options: BrowserContextOptions = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, ...options });
  const page = await context.newPage();
  // Anything the page refuses (its Content-Security-Policy above all) fails the test that caused it.
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 40[134]/.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  (page as Page & { problems: string[] }).problems = problems;
  return page;
}

export const problemsOf = (page: Page) => (page as Page & { problems?: string[] }).problems ?? [];

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false });
  return file;
}

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical findings on the page as it is now (evaluated by DevTools: the page's CSP stays on). */
export async function accessibilityViolations(page: Page): Promise<Array<{ id: string; impact: string; help: string; nodes: string[] }>> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }> }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
}

/** A new page signed in to the console at `baseUrl` with an API token, as a person does on the sign-in page. */
export async function signedInPage(browser: Browser, baseUrl: string, token: string, options: BrowserContextOptions = {}): Promise<Page> {
  const page = await newPage(browser, options);
  await page.goto(`${baseUrl}/sign-in`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  return page;
}

/** Opens a console page from the main navigation, as a person does: from the Govern menu when it is there. */
export async function openFromNav(page: Page, label: string): Promise<void> {
  const nav = page.getByRole('navigation', { name: 'Main' });
  await nav.getByRole('link').first().waitFor();
  const inline = nav.getByRole('list', { name: 'Operate' }).getByRole('link', { name: label, exact: true });
  if (await inline.count()) return inline.click();
  const menu = nav.locator('details.nav-menu');
  if ((await menu.count()) && !(await menu.evaluate((details) => (details as HTMLDetailsElement).open))) await menu.locator('summary').click();
  await nav.getByRole('list', { name: 'Govern' }).getByRole('link', { name: label, exact: true }).click();
}

/** How wide the page is against its viewport: a page wider than its window scrolls sideways. */
export const pageWidth = (page: Page) => page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, viewport: window.innerWidth }));
