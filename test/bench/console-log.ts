/// <reference lib="dom" />
/**
 * npm run bench:console-log — the console's log view in Debian's Chromium, against the whole stack:
 *   (a) a step of 500,000 lines (about 40 MiB): time from navigation to its last lines on screen,
 *       scrolling to the top, jumping to a line anchor (#L1-250000), and the page's JS heap after;
 *   (b) a chatty step (1,000 lines a second for BENCH_CHATTY_SECONDS, default 60, each line carrying
 *       the time it was written): how far behind the write the last line on screen is, sampled every 100 ms;
 * with a baseline measured in the same run: loading the console's servers page in the same browser.
 * Goals (issue 14): first lines ≤ 1.5 s, top and anchor ≤ 1 s each, heap ≤ 150 MB, last line within 1 s.
 */
import type { Page } from 'playwright-core';
import { bearer } from '../support/bosun';
import { asUser } from '../support/client';
import { launchBrowser, newPage } from '../support/browser';
import { runBench } from './harness';

const LINES = Number(process.env.BENCH_LOG_LINES ?? 500_000);
const CHATTY_SECONDS = Number(process.env.BENCH_CHATTY_SECONDS ?? 60);
const ms = (x: number) => `${Math.round(x)} ms`;
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

async function timed(what: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await what();
  return performance.now() - t0;
}

runBench({ stepOutputLimitBytes: 128 * 1024 }, async (bosun) => {
  const ops = await asUser(bosun, 'bench-console');
  const server = await ops.addServer({ host: '127.0.0.6' });
  // 80 bytes a line: 500,000 lines are 40 MB.
  const big = await ops.defineDeployment(server, [
    { name: 'big', command: `awk 'BEGIN { for (i = 1; i <= ${LINES}; i++) printf "%07d the quick brown fox jumps over the lazy dog and on and on: %s\\n", i, "0123456789ab" }'` },
  ], 'big-log');
  const ingest = performance.now();
  const run = await ops.runToEnd(big.id, 600_000);
  const ingestMs = performance.now() - ingest;
  const stored = (await bosun.api.get(`/api/v1/deployments/${big.id}/runs/${run.id}/steps/1/log?limit=1`).set(bearer(ops.token))).body.data;
  if (run.status !== 'success' || stored.total_lines !== LINES) throw new Error(`the big step: ${run.status}, ${stored.total_lines} lines stored`);

  const browser = await launchBrowser();
  const page = await newPage(browser);
  await page.goto(`${bosun.url}/sign-in`);
  await page.getByLabel('API token').fill(ops.token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();

  const baselines: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    baselines.push(await timed(async () => {
      await page.goto(`${bosun.url}/servers?tag=none-${i}`);
      await page.getByText('No server matches.').waitFor();
    }));
  }
  const baseline = percentile(baselines, 50);

  const lastLine = String(LINES).padStart(7, '0');
  const firstLines: number[] = [];
  const tops: number[] = [];
  const anchors: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    await page.goto(`${bosun.url}/servers`);
    firstLines.push(await timed(async () => {
      await page.goto(`${bosun.url}/deployments/${big.id}/runs/${run.id}`);
      await page.locator(`#L1-${LINES}`).getByText(lastLine).waitFor();
    }));
    tops.push(await timed(async () => {
      await page.getByRole('log', { name: 'Output of big' }).evaluate((el) => (el.scrollTop = 0));
      await page.locator('#L1-1').getByText('0000001').waitFor();
    }));
    const line = 250_000 + i;
    anchors.push(await timed(async () => {
      await page.evaluate((target) => {
        const a = document.createElement('a');
        a.href = `#L1-${target}`;
        document.body.append(a);
        a.click();
        a.remove();
      }, line);
      await page.locator(`#L1-${line}.log-line-target`).getByText(String(line).padStart(7, '0')).waitFor();
    }));
  }
  const heap = await heapUsed(page);

  // (b) A chatty step, watched live from its start.
  const chatty = await ops.defineDeployment(server, [
    {
      name: 'chatty',
      command:
        `perl -MTime::HiRes=time,sleep -e '$| = 1; my $t0 = time; for my $i (1 .. ${CHATTY_SECONDS * 1000}) { ` +
        `printf "%d %07d %s\\n", int(time * 1000), $i, "x" x 60; my $wait = $t0 + $i / 1000 - time; sleep($wait) if $wait > 0 }'`,
    },
  ], 'chatty-log');
  await page.goto(`${bosun.url}/deployments/${chatty.id}`);
  await page.getByRole('button', { name: 'Run now' }).click();
  await page.waitForURL(/\/runs\/[0-9a-f]{24}$/);
  const log = page.getByRole('log', { name: 'Output of chatty' });
  await log.locator('.log-line').first().waitFor({ timeout: 30_000 });
  const samples = await log.evaluate(
    (el, seconds) =>
      new Promise<Array<{ lag: number; line: number }>>((resolve) => {
        const taken: Array<{ lag: number; line: number }> = [];
        const timer = setInterval(() => {
          const rows = el.querySelectorAll('.log-line .log-text');
          const text = rows[rows.length - 1]?.textContent ?? '';
          const [written, line] = text.split(' ');
          if (written && line) taken.push({ lag: Date.now() - Number(written), line: Number(line) });
          if (Number(line) >= seconds * 1000 || taken.length > seconds * 12) {
            clearInterval(timer);
            resolve(taken);
          }
        }, 100);
      }),
    CHATTY_SECONDS,
  );
  const chattyHeap = await heapUsed(page);
  const version = browser.version();
  await browser.close();

  const lags = samples.map((s) => s.lag);
  const reached = Math.max(...samples.map((s) => s.line));
  const med = (xs: number[]) => percentile(xs, 50);
  console.log(`bench:console-log — ${LINES.toLocaleString('en')} lines (${(stored.total_length / 1048576).toFixed(1)} MiB stored, written by the step in ${(ingestMs / 1000).toFixed(1)} s); Chromium ${version}`);
  console.log(`baseline: the servers page loads in ${ms(baseline)} (median of 3)`);
  console.log(`first lines on screen after navigation: ${ms(med(firstLines))} median, ${ms(Math.max(...firstLines))} worst (goal ≤ 1500 ms; ×${(med(firstLines) / baseline).toFixed(1)} the baseline)`);
  console.log(`scroll to the top: ${ms(med(tops))} median, ${ms(Math.max(...tops))} worst (goal ≤ 1000 ms)`);
  console.log(`jump to a line anchor: ${ms(med(anchors))} median, ${ms(Math.max(...anchors))} worst (goal ≤ 1000 ms)`);
  console.log(`JS heap after all that: ${(heap / 1048576).toFixed(1)} MB (goal ≤ 150 MB)`);
  console.log(
    `chatty step (1,000 lines/s for ${CHATTY_SECONDS} s): last line on screen behind its write by ${ms(med(lags))} median, ${ms(percentile(lags, 95))} p95, ${ms(Math.max(...lags))} worst ` +
      `(goal ≤ 1000 ms); the page showed line ${reached.toLocaleString('en')} of ${(CHATTY_SECONDS * 1000).toLocaleString('en')}; heap ${(chattyHeap / 1048576).toFixed(1)} MB`,
  );
});

/** The page's JS heap after a garbage collection, as Chromium's DevTools protocol reports it. */
async function heapUsed(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  const { usedSize } = await cdp.send('Runtime.getHeapUsage');
  await cdp.detach();
  return usedSize;
}
