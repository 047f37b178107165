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
 * and Temporal dev server), on the wall clock: a schedule every PERIOD runs, is paused, is unpaused;
 * then the whole machine "crashes" (Bosun, mongod and Temporal SIGKILLed at once) across one tick of
 * two daily schedules, and after the restart the one with a 5-minute catch-up window runs that tick
 * once while the one with a 10-second window records it as missed. Time passing is what is under
 * test, so this file waits on the clock: its settings make it seconds, not minutes (a schedule may
 * tick every few seconds, the worker accounts for skipped ticks every 2 s, 5 s after they could no
 * longer run), which production runs with a minute's interval, 30 s sweeps and a minute's grace.
 */

// The API's JSON, as the tests read it.
type Json = any;

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
/** The every-PERIOD schedule's interval (Temporal aligns an interval's ticks to multiples of it). */
const PERIOD = 12 * SECOND;
/**
 * How late after a paused due time the schedule is unpaused: the scheduler has long passed that tick
 * by then, and the next one is still PERIOD - PAUSE_MARGIN away (time to look, and to unpause).
 */
const PAUSE_MARGIN = 6 * SECOND;
/** The strict schedule's catch-up window, and how long past it the stack stays down. */
const STRICT_WINDOW = 10 * SECOND;
const DOWN_PAST_STRICT_WINDOW = 5 * SECOND;
const CLOCKS = { SCHEDULE_MIN_INTERVAL_SECONDS: '5', SCHEDULE_SWEEP_SECONDS: '2', SCHEDULE_ACCOUNTING_GRACE_SECONDS: '5' };
const next = (at: number, period: number) => Math.ceil(at / period) * period;
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
  /** The every-PERIOD schedule while it exists: it must not tick across the outage of the second test. */
  let periodic: string | null = null;

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
    env = { ...(await embeddedStackEnv(home)), METRICS_TOKEN: metricsToken, ...CLOCKS };
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

  test(`a schedule every ${PERIOD / SECOND} s runs twice, is paused (no run; the tick is recorded as paused), and runs again once unpaused`, async () => {
    const deployment = await ops.defineDeployment(serverId, [{ name: 'tick', command: 'echo tick' }], 'periodic');
    const schedule = await createSchedule(deployment.id, { name: 'periodic', every: `${PERIOD / SECOND}s`, catch_up_window: '10s', note: `every ${PERIOD / SECOND} seconds` });
    expect(schedule).toMatchObject({ every: `${PERIOD / SECOND}s`, time_zone: 'UTC', paused: false, catch_up_window: '10s' });
    periodic = `${schedulesOf(deployment.id)}/${schedule.id}`;
    // Temporal carries it: every PERIOD on multiples of it, the first within a PERIOD from now.
    const [first0, second0] = schedule.next_runs.map((r: Json) => Date.parse(r.at));
    expect([first0 % PERIOD, second0 - first0]).toEqual([0, PERIOD]);
    expect(first0 - Date.now()).toBeLessThanOrEqual(PERIOD);

    const twoFired = await eventually(
      async () => (await ticksOf(deployment.id, schedule.id)).filter((t) => t.outcome === 'fired'),
      (fired) => fired.length >= 2,
      4 * PERIOD + MINUTE,
    );
    // Newest first: the schedule's first two ticks are the last two.
    const [first, second] = [twoFired.at(-1), twoFired.at(-2)];
    expect(Date.parse(second.scheduled_at) - Date.parse(first.scheduled_at)).toBe(PERIOD);
    for (const tick of [first, second]) await expectScheduledSuccess(deployment.id, schedule.id, tick);

    // Paused (not in the last seconds before a due time, so Temporal has the pause before it): the next due time passes without a run.
    if (next(Date.now(), PERIOD) - Date.now() < 5 * SECOND) await wait(next(Date.now(), PERIOD) - Date.now() + SECOND);
    const paused = (await expectOk(await ops.request('post', `${schedulesOf(deployment.id)}/${schedule.id}/pause`, { note: 'maintenance' }), 200, 'pause')).data;
    expect(paused).toMatchObject({ paused: true, next_runs: [], pause: { note: 'maintenance' } });
    const pausedAt = Date.parse(paused.pause.at);
    const dueWhilePaused = next(pausedAt + 1, PERIOD);
    await wait(dueWhilePaused + PAUSE_MARGIN - Date.now());
    const sincePause = (ticks: Json[]) => ticks.filter((t) => Date.parse(t.scheduled_at) >= pausedAt);
    expect(sincePause(await ticksOf(deployment.id, schedule.id)).filter((t) => t.outcome === 'fired')).toEqual([]);
    expect((await runsOf(deployment.id)).filter((r) => Date.parse(r.trigger.scheduled_at) >= pausedAt)).toEqual([]);

    const unpaused = (await expectOk(await ops.request('post', `${schedulesOf(deployment.id)}/${schedule.id}/unpause`, { note: 'done' }), 200, 'unpause')).data;
    expect(unpaused.paused).toBe(false);
    const unpausedAt = Date.parse(unpaused.pause.at);
    expect(unpausedAt).toBeLessThan(dueWhilePaused + PERIOD);
    expect(unpaused.next_runs[0].at).toBe(new Date(dueWhilePaused + PERIOD).toISOString());
    const again = await eventually(
      async () => (await ticksOf(deployment.id, schedule.id)).find((t) => Date.parse(t.scheduled_at) > unpausedAt),
      (tick) => tick !== undefined,
      2 * PERIOD + MINUTE,
    );
    await expectScheduledSuccess(deployment.id, schedule.id, again);

    // Once its catch-up window and the ledger's grace have passed, the paused tick is accounted for.
    const skipped = await eventually(async () => (await ticksOf(deployment.id, schedule.id)).filter((t) => t.skipped), (s) => s.length > 0, 2 * MINUTE);
    expect(skipped).toEqual([expect.objectContaining({ scheduled_at: new Date(dueWhilePaused).toISOString(), outcome: 'paused', run_id: null })]);
    expect(skipped[0].message).toContain('maintenance');

    expect(await eventually(() => ticksCounted('paused'), (n) => n === 1)).toBe(1);
    expect(await ticksCounted('fired')).toBeGreaterThanOrEqual(3);

    // Its work is done: no more ticks (nor missed ones while Bosun is down below).
    await expectOk(await ops.request('delete', periodic), 204, 'delete the schedule');
    periodic = null;
  }, 10 * MINUTE);

  test('killed -9 across a tick: a 5-minute catch-up window runs it once after the restart, a 10-second one records it as missed', async () => {
    // The periodic schedule, had the test before stopped short of deleting it: only this test's ticks fall in the outage.
    if (periodic) await expectOk(await ops.request('delete', periodic), 204, 'delete the periodic schedule');
    const within5m = await ops.defineDeployment(serverId, [{ name: 'backup', command: 'echo backup' }], 'catch-up-5m');
    const within10s = await ops.defineDeployment(serverId, [{ name: 'rotate', command: 'echo rotate' }], 'catch-up-10s');
    // One tick of each, daily (no other tick comes near), at the next minute far enough ahead for the
    // crash to come first (two schedules to create, then the kill: seconds, even on a loaded machine).
    const due = next(Date.now() + 12 * SECOND, MINUTE);
    const cron = `${new Date(due).getUTCMinutes()} ${new Date(due).getUTCHours()} * * *`;
    const lenient = await createSchedule(within5m.id, { name: 'backup', cron, catch_up_window: '5m' });
    const strict = await createSchedule(within10s.id, { name: 'rotate', cron, catch_up_window: '10s' });
    for (const s of [lenient, strict]) expect(s.next_runs[0].at).toBe(new Date(due).toISOString());

    expect(due - Date.now()).toBeGreaterThan(5 * SECOND);
    await crash();
    // The one deliberate wait: the machine is down across the tick, and past the strict window.
    await wait(due + STRICT_WINDOW + DOWN_PAST_STRICT_WINDOW - Date.now());
    await start();
    // Up again after the strict window has passed, well within the lenient one.
    expect(Date.now() - due).toBeGreaterThan(STRICT_WINDOW);

    const fired = await eventually(() => ticksOf(within5m.id, lenient.id), (ticks) => ticks.length > 0, 2 * MINUTE);
    expect(fired).toEqual([expect.objectContaining({ scheduled_at: new Date(due).toISOString(), outcome: 'fired' })]);
    await expectScheduledSuccess(within5m.id, lenient.id, fired[0]);

    // Accounted for once due + its window + the ledger's grace have passed, at its next sweep.
    const missed = await eventually(() => ticksOf(within10s.id, strict.id), (ticks) => ticks.length > 0, 2 * MINUTE);
    expect(missed).toEqual([expect.objectContaining({ scheduled_at: new Date(due).toISOString(), outcome: 'missed', skipped: true, run_id: null })]);
    expect(missed[0].message).toContain('catch-up window (10s)');
    expect(await runsOf(within10s.id)).toEqual([]);

    // The missed tick ran exactly once.
    expect(await ticksOf(within5m.id, lenient.id)).toHaveLength(1);
    expect(await runsOf(within5m.id)).toHaveLength(1);

    // The restarted Bosun counted what it saw: the caught-up tick fired, the other missed.
    expect(await eventually(() => ticksCounted('missed'), (n) => n === 1)).toBe(1);
    expect(await ticksCounted('fired')).toBe(1);
  }, 10 * MINUTE);
});
