import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isAlive } from '../../src/embedded/pids';
import type { StackState } from '../../src/embedded/stack';
import { bearer } from '../support/bosun';
import { userAt, type User } from '../support/client';
import { eventually } from '../support/eventually';
import { parseMetrics, valueOf } from '../support/metrics';
import { BosunProcess, embeddedStackEnv } from '../support/processes';

/*
 * Schedules on the embedded stack, as a user runs it (`npm start` with its own BOSUN_HOME, mongod
 * and Temporal dev server): an every-minute schedule runs, is paused, is unpaused; then the whole
 * machine "crashes" (Bosun, mongod and Temporal SIGKILLed at once) for three minutes across one
 * tick of two daily schedules, and after the restart the one with a 5-minute catch-up window runs
 * that tick once while the one with a 1-minute window records it as missed.
 */

// The API's JSON, as the tests read it.
type Json = any;

const MINUTE = 60_000;
const OUTAGE_MS = 3 * MINUTE;
const nextMinute = (at: number) => Math.ceil(at / MINUTE) * MINUTE;
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('schedules on the embedded stack: ticks, pause, and a crash across a tick', () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'bosun-schedules-'));
  const metricsToken = randomBytes(16).toString('hex');
  let env: NodeJS.ProcessEnv;
  const started: BosunProcess[] = [];
  let bosun: BosunProcess;
  let base: string;
  let token: string;
  let ops: User;
  let serverId: string;
  let accountId: string;
  /** The every-minute schedule while it exists: it must not tick across the outage of the second test. */
  let minutely: string | null = null;

  const start = async () => {
    bosun = new BosunProcess(env);
    started.push(bosun);
    base = await bosun.ready(180_000);
    return bosun;
  };

  const expectOk = async (res: { status: number; body: Json }, status: number, what: string): Promise<Json> => {
    if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const schedulesOf = (deploymentId: string) => `/deployments/${deploymentId}/schedules`;
  const createSchedule = async (deploymentId: string, body: Json) =>
    (await expectOk(await ops.request('post', schedulesOf(deploymentId), { time_zone: 'UTC', run_as: accountId, ...body }), 201, `create schedule ${body.name}`)).data;
  const ticksOf = async (deploymentId: string, scheduleId: string): Promise<Json[]> =>
    (await expectOk(await ops.request('get', `${schedulesOf(deploymentId)}/${scheduleId}/ticks?per_page=100`), 200, 'list ticks')).data;
  const runsOf = async (deploymentId: string): Promise<Json[]> => (await expectOk(await ops.request('get', `/deployments/${deploymentId}/runs?per_page=100`), 200, 'list runs')).data;
  // /metrics sits beside the API (not under /api/v1), behind METRICS_TOKEN.
  const scrape = async () => parseMetrics(await (await fetch(`${base.replace(/\/api\/v1$/, '')}/metrics`, { headers: bearer(metricsToken) })).text());
  const ticksCounted = async (outcome: string) => valueOf(await scrape(), 'bosun_schedule_ticks_total', { outcome });

  /** A fired tick's run, to its end: a success, started by this schedule for this due time. */
  const expectScheduledSuccess = async (deploymentId: string, scheduleId: string, tick: Json) => {
    expect(tick).toMatchObject({ outcome: 'fired', skipped: false, requested_by: null });
    const run = await ops.waitForRun(deploymentId, tick.run_id, (r) => ['success', 'failed', 'cancelled', 'timed_out'].includes(r.status), 120_000);
    expect(run.status).toBe('success');
    expect(run.trigger).toMatchObject({ type: 'schedule', schedule_id: scheduleId, scheduled_at: tick.scheduled_at });
  };

  /**
   * A machine crash: mongod, the Temporal dev server and Bosun SIGKILLed at once. The services run
   * in process groups of their own (detached, so Ctrl-C reaches Bosun alone) and are told to stop by
   * a parent-death SIGTERM when Bosun dies: they are killed first, group and all, so that no
   * handler of any of them runs.
   */
  const crash = async () => {
    const { mongo, temporal } = JSON.parse(readFileSync(path.join(home, 'stack.json'), 'utf8')) as StackState;
    for (const pid of [mongo!.pid, temporal!.pid]) process.kill(-pid, 'SIGKILL');
    process.kill(bosun.child.pid!, 'SIGKILL');
    await bosun.exited;
    await eventually(async () => [mongo!.pid, temporal!.pid].some(isAlive), (alive) => !alive, 10_000);
  };

  beforeAll(async () => {
    env = { ...(await embeddedStackEnv(home)), METRICS_TOKEN: metricsToken };
    await start();
    token = bosun.firstToken!;
    ops = userAt(base, token);
    serverId = await ops.addServer({ host: '127.0.0.12', title: 'scheduled' });
    // Ticks run as a service account allowed to run deployments.
    const account = (await expectOk(await ops.request('post', '/service-accounts', { name: 'scheduler' }), 201, 'create the service account')).data;
    await expectOk(await ops.request('post', '/role-bindings', { role: 'operator', subject: { type: 'service_account', id: account.id } }), 201, 'bind its role');
    accountId = account.id;
  }, 240_000);

  afterAll(async () => {
    ops?.close();
    // Gracefully: Ctrl-C stops the stack's mongod and Temporal with Bosun.
    await Promise.all(started.map((b) => b.stop('SIGINT')));
  }, 60_000);

  test('an every-minute schedule runs twice, is paused (no run; the tick is recorded as paused), and runs again once unpaused', async () => {
    const deployment = await ops.defineDeployment(serverId, [{ name: 'tick', command: 'echo tick' }], 'minutely');
    const schedule = await createSchedule(deployment.id, { name: 'minutely', every: '1m', catch_up_window: '30s', note: 'every minute' });
    expect(schedule).toMatchObject({ every: '1m', time_zone: 'UTC', paused: false, catch_up_window: '30s' });
    minutely = `${schedulesOf(deployment.id)}/${schedule.id}`;
    // Temporal carries it: every minute on the minute, the first within a minute from now.
    const [next, afterNext] = schedule.next_runs.map((r: Json) => Date.parse(r.at));
    expect([next % MINUTE, afterNext - next]).toEqual([0, MINUTE]);
    expect(next - Date.now()).toBeLessThanOrEqual(MINUTE);

    const twoFired = await eventually(
      async () => (await ticksOf(deployment.id, schedule.id)).filter((t) => t.outcome === 'fired'),
      (fired) => fired.length >= 2,
      4 * MINUTE,
    );
    // Newest first: the schedule's first two ticks are the last two.
    const [first, second] = [twoFired.at(-1), twoFired.at(-2)];
    expect(Date.parse(second.scheduled_at) - Date.parse(first.scheduled_at)).toBe(MINUTE);
    for (const tick of [first, second]) await expectScheduledSuccess(deployment.id, schedule.id, tick);

    // Paused (not in the last seconds before a due time, so Temporal has the pause before it): the next due time passes without a run.
    if (nextMinute(Date.now()) - Date.now() < 5_000) await wait(nextMinute(Date.now()) - Date.now() + 1_000);
    const paused = (await expectOk(await ops.request('post', `${schedulesOf(deployment.id)}/${schedule.id}/pause`, { note: 'maintenance' }), 200, 'pause')).data;
    expect(paused).toMatchObject({ paused: true, next_runs: [], pause: { note: 'maintenance' } });
    const pausedAt = Date.parse(paused.pause.at);
    const dueWhilePaused = nextMinute(pausedAt + 1);
    await wait(dueWhilePaused + 20_000 - Date.now());
    const sincePause = (ticks: Json[]) => ticks.filter((t) => Date.parse(t.scheduled_at) >= pausedAt);
    expect(sincePause(await ticksOf(deployment.id, schedule.id)).filter((t) => t.outcome === 'fired')).toEqual([]);
    expect((await runsOf(deployment.id)).filter((r) => Date.parse(r.trigger.scheduled_at) >= pausedAt)).toEqual([]);

    const unpaused = (await expectOk(await ops.request('post', `${schedulesOf(deployment.id)}/${schedule.id}/unpause`, { note: 'done' }), 200, 'unpause')).data;
    expect(unpaused.paused).toBe(false);
    const unpausedAt = Date.parse(unpaused.pause.at);
    expect(unpausedAt).toBeLessThan(dueWhilePaused + MINUTE);
    expect(unpaused.next_runs[0].at).toBe(new Date(dueWhilePaused + MINUTE).toISOString());
    const again = await eventually(
      async () => (await ticksOf(deployment.id, schedule.id)).find((t) => Date.parse(t.scheduled_at) > unpausedAt),
      (tick) => tick !== undefined,
      3 * MINUTE,
    );
    await expectScheduledSuccess(deployment.id, schedule.id, again);

    // Once its catch-up window and the ledger's grace have passed, the paused tick is accounted for.
    const skipped = await eventually(async () => (await ticksOf(deployment.id, schedule.id)).filter((t) => t.skipped), (s) => s.length > 0, 4 * MINUTE);
    expect(skipped).toEqual([expect.objectContaining({ scheduled_at: new Date(dueWhilePaused).toISOString(), outcome: 'paused', run_id: null })]);
    expect(skipped[0].message).toContain('maintenance');

    expect(await eventually(() => ticksCounted('paused'), (n) => n === 1)).toBe(1);
    expect(await ticksCounted('fired')).toBeGreaterThanOrEqual(3);

    // Its work is done: no more ticks (nor missed ones while Bosun is down below).
    await expectOk(await ops.request('delete', minutely), 204, 'delete the schedule');
    minutely = null;
  }, 15 * MINUTE);

  test('killed -9 for three minutes across a tick: a 5-minute catch-up window runs it once after the restart, a 1-minute one records it as missed', async () => {
    // The every-minute schedule, had the test before stopped short of deleting it: only this test's ticks fall in the outage.
    if (minutely) await expectOk(await ops.request('delete', minutely), 204, 'delete the every-minute schedule');
    const within5m = await ops.defineDeployment(serverId, [{ name: 'backup', command: 'echo backup' }], 'catch-up-5m');
    const within1m = await ops.defineDeployment(serverId, [{ name: 'rotate', command: 'echo rotate' }], 'catch-up-1m');
    // One tick of each, daily, at a minute well inside the outage that starts now.
    const due = nextMinute(Date.now() + 25_000);
    const cron = `${new Date(due).getUTCMinutes()} ${new Date(due).getUTCHours()} * * *`;
    const lenient = await createSchedule(within5m.id, { name: 'backup', cron, catch_up_window: '5m' });
    const strict = await createSchedule(within1m.id, { name: 'rotate', cron, catch_up_window: '1m' });
    for (const s of [lenient, strict]) expect(s.next_runs[0].at).toBe(new Date(due).toISOString());

    const crashedAt = Date.now();
    expect(due - crashedAt).toBeGreaterThan(10_000);
    await crash();
    // The one deliberate wait: the machine is down.
    await wait(crashedAt + OUTAGE_MS - Date.now());
    await start();
    // Up again more than a minute after the tick (so the strict window has passed), less than five.
    expect(Date.now() - due).toBeGreaterThan(MINUTE);

    const fired = await eventually(() => ticksOf(within5m.id, lenient.id), (ticks) => ticks.length > 0, 3 * MINUTE);
    expect(fired).toEqual([expect.objectContaining({ scheduled_at: new Date(due).toISOString(), outcome: 'fired' })]);
    await expectScheduledSuccess(within5m.id, lenient.id, fired[0]);

    // Accounted for once due + 1 minute + the ledger's minute of grace have passed, at its next sweep.
    const missed = await eventually(() => ticksOf(within1m.id, strict.id), (ticks) => ticks.length > 0, 4 * MINUTE);
    expect(missed).toEqual([expect.objectContaining({ scheduled_at: new Date(due).toISOString(), outcome: 'missed', skipped: true, run_id: null })]);
    expect(missed[0].message).toContain('catch-up window (1m)');
    expect(await runsOf(within1m.id)).toEqual([]);

    // The missed tick ran exactly once.
    expect(await ticksOf(within5m.id, lenient.id)).toHaveLength(1);
    expect(await runsOf(within5m.id)).toHaveLength(1);

    // The restarted Bosun counted what it saw: the caught-up tick fired, the other missed.
    expect(await eventually(() => ticksCounted('missed'), (n) => n === 1)).toBe(1);
    expect(await ticksCounted('fired')).toBe(1);
  }, 20 * MINUTE);
});
