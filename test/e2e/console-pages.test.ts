/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { CONSOLE_PAGES } from '../../src/api/console/pages';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { addPerson, asUser, type User } from '../support/client';
import { bearer } from '../support/http';
import { eventually } from '../support/eventually';
import { accessibilityViolations, launchBrowser, pageWidth, problemsOf, screenshot, signedInPage } from '../support/browser';

/*
 * Every page of the console, with an organization's realistic data (a gated fleet run waiting, a
 * failed run, change freezes, a schedule, 200 audit entries, 3 notification channels, people, teams,
 * a conversation, a migration plan, a pipeline whose run waits at a stage's gate), at 1,400 and 1,280 px: none is wider than its window, axe
 * finds no serious or critical violation, and each is photographed for a reviewer. The list of
 * pages is the console's own (src/api/console/pages.ts): a page added without its URL here fails.
 */

const WIDTHS = [1400, 1280];

describe('every page of the console, with realistic data, at 1,400 and 1,280 px', () => {
  let bosun: SharedBosun;
  let admin: User;
  let carol: User & { id: string };
  let browser: Browser;
  const urls: Record<string, string> = {};

  const post = async (path: string, body: object) => {
    const res = await bosun.api.post(`/api/v1${path}`).set(bearer(admin.token)).send(body);
    if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await asUser(bosun, 'console-pages');
    const servers: string[] = [];
    for (const [host, title, tags] of [['127.0.0.2', 'web-1', ['web', 'eu']], ['127.0.0.3', 'web-2', ['web', 'eu']], ['127.0.0.4', 'web-3', ['web', 'us']], ['127.0.0.5', 'db-1', ['db']], ['127.0.0.6', 'api-1', ['api']]] as const) {
      servers.push(await admin.addServer({ host, title, tags: [...tags] }));
    }
    carol = await addPerson(bosun, admin, 'Carol', 'admin');
    const alice = await addPerson(bosun, admin, 'Alice', 'approver');
    const team = await post('/teams', { name: 'release', members: [alice.id] });
    await post('/role-bindings', { role: 'approver', subject: { type: 'team', id: team.id }, servers: { tags: ['web'] } });
    const ci = await post('/service-accounts', { name: 'ci', description: 'the CI pipeline' });
    await post('/role-bindings', { role: 'operator', subject: { type: 'service_account', id: ci.id } });
    alice.close();

    const gated = await carol.define({ name: 'web-release', targets: { tags: ['web'] }, strategy: { batch_size: 1, gates: [{ before_batch: 2, approvals: 1, expires_in: '4h' }], health_check: { command: 'true' } }, rollback: { steps: [{ name: 'restore', command: 'echo restored' }], automatic: false }, steps: [{ name: 'release', command: 'echo released v42' }] });
    const { run_id: gatedRun } = await carol.trigger(gated.id);
    await carol.waitForRun(gated.id, gatedRun, (run) => run.status === 'awaiting_approval');
    const failing = await carol.define({ name: 'db-migrate', targets: { tags: ['db'] }, steps: [{ name: 'migrate', command: 'echo "relation users is locked by another migration that has run for a long while" >&2; exit 3' }] });
    const failed = await carol.runToEnd(failing.id);
    const single = await carol.defineDeployment(servers[4]!, [{ name: 'restart', command: 'echo restarted' }], 'api-restart');
    const done = await carol.runToEnd(single.id);
    await post(`/deployments/${single.id}/schedules`, { name: 'nightly', cron: '30 2 * * *', time_zone: 'Europe/Berlin', run_as: ci.id, note: 'restart before the morning traffic' });

    await post('/freezes', { name: 'db-maintenance', tags: ['db'], starts_at: new Date(Date.now() - 60_000).toISOString(), ends_at: new Date(Date.now() + 2 * 3600_000).toISOString(), note: 'storage migration' });
    await post('/freezes', { name: 'weekend', cron: '0 18 * * 5', duration: '62h', time_zone: 'Europe/Berlin', tags: ['web'], note: 'no changes over the weekend' });
    const events = ['run.failed', 'run.succeeded', 'run.awaiting_approval', 'run.approval_expiring', 'run.cancelled', 'run.paused', 'run.rolled_back', 'server.offline', 'conversation.finished', 'schedule.tick_skipped'];
    const channels = [];
    for (const name of ['ops hooks', 'release announcements', 'pager bridge']) channels.push(await post('/notification-channels', { name, type: 'webhook', url: `http://127.0.0.1:9/${name.replace(/ /g, '-')}`, events }));
    // A pipeline whose run waits at its second stage's gate.
    const pipeline = await post('/pipelines', {
      name: 'api-release',
      stages: [
        { name: 'restart', deployment: 'api-restart' },
        { name: 'verify', deployment: 'api-restart', needs: ['restart'], gate: { approvals: 1, expires_in: '4h' } },
      ],
    });
    const pipelineRun = await bosun.api.post(`/api/v1/pipelines/${pipeline.id}/run`).set(bearer(admin.token)).send({});
    expect(pipelineRun.status).toBe(202);
    await eventually(
      async () => (await bosun.api.get(`/api/v1/pipelines/${pipeline.id}/runs/${pipelineRun.body.run_id}`).set(bearer(admin.token))).body.data?.status,
      (status) => status === 'awaiting_approval',
      60_000,
    );
    const plan = await post('/migration-plans', { title: 'move the database to db-2', source_server_id: servers[3], target_server_id: servers[4] });
    const conversation = await post('/conversations', { chatable_type: 'server', chatable_id: servers[4], message: 'show uptime' });
    // About 200 entries in the audit trail, of writes a team makes.
    const titles = ['web-1', 'web-2', 'web-3', 'db-1', 'api-1'];
    for (let i = 0; i < 190; i += 1) {
      const res = await bosun.api.patch(`/api/v1/servers/${servers[i % 5]}`).set(bearer(carol.token)).send({ title: titles[i % 5] });
      expect(res.status).toBe(200);
    }

    const fill: Record<string, string> = {
      serverId: servers[0]!,
      deploymentId: gated.id,
      runId: gatedRun,
      conversationId: conversation.id,
      planId: plan.id,
      channelId: channels[0].id,
      personId: carol.id,
      accountId: ci.id,
      teamId: team.id,
      pipelineId: pipeline.id,
      pipelineRunId: pipelineRun.body.run_id,
    };
    for (const page of CONSOLE_PAGES) urls[page.name] = page.path.replace(/:([A-Za-z]+)/g, (_, key: string) => fill[key]!);
    urls.target = `/deployments/${gated.id}/runs/${gatedRun}/targets/${servers[0]}`;
    // The failed run and the finished one-server run have their pages too.
    urls['failed run'] = `/deployments/${failing.id}/runs/${failed.id}`;
    urls['one-server run'] = `/deployments/${single.id}/runs/${done.id}`;
    browser = await launchBrowser();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    for (const user of [admin, carol]) user?.close();
    await bosun?.stop();
  });

  for (const width of WIDTHS) {
    test(`every page at ${width} px fits its window and has no serious accessibility violation`, async () => {
      const page: Page = await signedInPage(browser, bosun.url, carol.token, { viewport: { width, height: 900 } });
      const found: Record<string, unknown> = {};
      for (const [name, url] of Object.entries(urls)) {
        if (name === 'sign-in') continue;
        await page.goto(`${bosun.url}${url}`);
        await page.locator('main h1').first().waitFor();
        // What a page loads comes after its heading: wait until nothing says it is loading.
        await page.waitForFunction(() => !document.querySelector('main')?.textContent?.includes('Loading…'));
        const size = await pageWidth(page);
        const violations = await accessibilityViolations(page);
        if (size.scroll > size.viewport || violations.length) found[name] = { url, size, violations };
        await screenshot(page, `page-${name.replace(/ /g, '-')}-${width}`);
      }
      expect(found).toEqual({});
      expect(problemsOf(page)).toEqual([]);
      await page.close();
    }, 300_000);
  }
});
