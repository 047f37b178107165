import { rmSync, writeFileSync } from 'node:fs';
import { startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';
import { eventually } from '../support/eventually';
import { sharedFolder } from '../support/trees';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/*
 * The clock's ticks on the real stack: a schedule every 15 s whose run outlasts the interval.
 * Temporal's overlap policy (skip) starts no workflow for the next tick; the worker finds the tick
 * Temporal matched but never started, and records it as skipped for `overlap`. Seconds, not minutes:
 * this Bosun allows intervals from 5 s and accounts for a tick 5 s after it could no longer run
 * (production: a minute each).
 */

const INTERVAL_MS = 15_000;

let bosun: Bosun;
let ops: User;
let work: string;

beforeAll(async () => {
  bosun = await startBosun({ scheduleSweepMs: 1000, env: { SCHEDULE_MIN_INTERVAL_SECONDS: '5', SCHEDULE_ACCOUNTING_GRACE_SECONDS: '5' } });
  ops = await asUser(bosun, 'overlap');
  work = sharedFolder('bosun-overlap-');
}, 120_000);
afterAll(async () => {
  ops.close();
  await bosun.stop();
  rmSync(work, { recursive: true, force: true });
});

test('a tick due while the last tick’s run still goes is skipped (overlap), recorded with why; the run was not disturbed', async () => {
  const serverId = await ops.addServer({ host: '127.0.0.4', title: 'slow' });
  // The run holds until the test lets it go (at most 5 minutes).
  const deployment = await ops.define({ name: 'slow-job', server_id: serverId, steps: [{ name: 'hold', command: `i=0; while [ ! -e ${work}/go ] && [ $i -lt 1500 ]; do i=$((i+1)); sleep 0.2; done; echo done` }] });
  const path = `/deployments/${deployment.id}/schedules`;
  const schedule = (await ops.request('post', path, { name: 'every-15s', every: '15s', time_zone: 'UTC', catch_up_window: '10s' })).body.data;
  const ticks = () => ops.request('get', `${path}/${schedule.id}/ticks`).then((r) => r.body.data as Json[]);

  const [fired] = await eventually(ticks, (list) => list.some((t) => t.outcome === 'fired'), 90_000);
  expect(fired).toMatchObject({ outcome: 'fired', requested_by: null });
  // Due on a multiple of the interval (an interval counts from the epoch).
  expect(Date.parse(fired.scheduled_at) % INTERVAL_MS).toBe(0);
  const skipped = await eventually(ticks, (list) => list.some((t) => t.outcome === 'overlap'), 120_000);
  // Paused before the run is let go: no later tick starts another run.
  expect((await ops.request('post', `${path}/${schedule.id}/pause`, { note: 'test over' })).status).toBe(200);
  writeFileSync(`${work}/go`, '');
  const overlap = skipped.find((t) => t.outcome === 'overlap');
  expect(overlap).toMatchObject({ skipped: true, run_id: null, message: expect.stringContaining('still going') });
  expect(Date.parse(overlap.scheduled_at) - Date.parse(fired.scheduled_at)).toBe(INTERVAL_MS);
  const run = await eventually(() => ops.getRun(deployment.id, fired.run_id), (r) => r.status === 'success', 60_000);
  expect(run.trigger).toMatchObject({ type: 'schedule', name: 'every-15s', scheduled_at: fired.scheduled_at });
  // Only one run: the skipped tick started none.
  expect((await ops.request('get', `/deployments/${deployment.id}/runs`)).body.data).toHaveLength(1);
  // The skip is Bosun's decision: in the audit trail with actor system, in the same write as the tick.
  const [entry] = await eventually(
    () => ops.request('get', '/audit?action=schedule.tick&actor_type=system').then((r) => r.body.data as Json[]),
    (list) => list.some((e) => e.details.scheduled_at === overlap.scheduled_at),
  );
  expect(entry).toMatchObject({ actor: { type: 'system', name: 'schedule clock' }, outcome: 'overlap', details: { schedule_id: schedule.id, message: overlap.message } });
  expect(entry.details.requested_by).toBeUndefined();
}, 360_000);

test('run now applies the overlap policy to the runs still going: skip refuses (409, a tick skipped for overlap), buffer_one waits for them, cancel_other cancels them first', async () => {
  const serverId = await ops.addServer({ host: '127.0.0.5', title: 'now' });
  // Each run holds until a file appears, the one `gate-name` named when the run started.
  const deployment = await ops.define({
    name: 'held-job',
    server_id: serverId,
    steps: [{ name: 'hold', command: `g=$(cat ${work}/gate-name); i=0; while [ ! -e ${work}/$g ] && [ $i -lt 1500 ]; do i=$((i+1)); sleep 0.2; done; echo released` }],
  });
  writeFileSync(`${work}/gate-name`, 'first');
  const path = `/deployments/${deployment.id}/schedules`;
  // Its clock ticks once a year: every tick here is a run-now.
  const schedule = (await ops.request('post', path, { name: 'by-hand', cron: '0 0 1 1 *', time_zone: 'UTC' })).body.data;
  const runNow = (body?: Json) => ops.request('post', `${path}/${schedule.id}/trigger`, body);
  const ticks = () => ops.request('get', `${path}/${schedule.id}/ticks`).then((r) => r.body.data as Json[]);
  const firedRuns = async (n: number) => (await eventually(ticks, (list) => list.filter((t) => t.outcome === 'fired').length >= n, 60_000)).filter((t) => t.outcome === 'fired').map((t) => t.run_id as string).reverse();

  expect((await runNow()).status).toBe(202);
  const [first] = await firedRuns(1);
  await eventually(() => ops.getRun(deployment.id, first!), (r) => r.status === 'running', 60_000);

  // skip (the schedule's policy): refused, naming the run, and recorded as a skipped tick.
  const skipped = await runNow();
  expect([skipped.status, skipped.body.error.code, skipped.body.error.run_ids]).toEqual([409, 'overlap', [first]]);
  const overlapTick = (await ticks()).find((t) => t.outcome === 'overlap');
  expect(overlapTick).toMatchObject({ skipped: true, run_id: null, requested_by: { type: 'service_account' }, message: expect.stringContaining(first!) });
  // Skipped by Bosun (its overlap policy), not by the person who asked: in the audit trail as the system's.
  const [skippedEntry] = await eventually(
    () => ops.request('get', '/audit?action=schedule.tick&actor_type=system').then((r) => r.body.data as Json[]),
    (list) => list.some((e) => e.details.schedule_id === schedule.id),
  );
  expect(skippedEntry).toMatchObject({
    actor: { type: 'system', name: 'schedule clock' },
    outcome: 'overlap',
    target: { kind: 'deployment', id: deployment.id },
    details: { schedule_id: schedule.id, scheduled_at: overlapTick.scheduled_at, message: overlapTick.message, requested_by: { type: 'service_account' } },
  });

  // buffer_one for this run-now: accepted, waits for the first run; a second buffered one is refused.
  const buffered = await runNow({ overlap: 'buffer_one' });
  expect([buffered.status, buffered.body.message]).toEqual([202, expect.stringContaining(`starts when ${first} ends`)]);
  expect((await runNow({ overlap: 'buffer_one' })).body.error).toMatchObject({ code: 'overlap', message: expect.stringContaining('already waits') });
  expect((await runNow({ overlap: 'sometimes' })).status).toBe(422);
  // Nothing of it started while the first run holds.
  expect((await ops.request('get', `/deployments/${deployment.id}/runs`)).body.meta.total).toBe(1);
  writeFileSync(`${work}/gate-name`, 'second');
  writeFileSync(`${work}/first`, '');
  const firstDone = await eventually(() => ops.getRun(deployment.id, first!), (r) => r.status === 'success', 60_000);
  const [, second] = await firedRuns(2);
  const secondRun = await eventually(() => ops.getRun(deployment.id, second!), (r) => r.status === 'running', 60_000);
  // Triggered only once the first had ended.
  expect(Date.parse(secondRun.created_at)).toBeGreaterThanOrEqual(Date.parse(firstDone.completed_at));

  // cancel_other: the second run is cancelled, then the new one starts.
  writeFileSync(`${work}/gate-name`, 'third');
  const takeover = await runNow({ overlap: 'cancel_other' });
  expect([takeover.status, takeover.body.message]).toEqual([202, expect.stringContaining(`cancelling ${second}`)]);
  expect((await eventually(() => ops.getRun(deployment.id, second!), (r) => ['success', 'failed', 'cancelled'].includes(r.status), 60_000)).status).toBe('cancelled');
  const [, , third] = await firedRuns(3);
  writeFileSync(`${work}/third`, '');
  expect((await eventually(() => ops.getRun(deployment.id, third!), (r) => ['success', 'failed', 'cancelled'].includes(r.status), 60_000)).status).toBe('success');
}, 300_000);
