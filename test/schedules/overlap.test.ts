import { rmSync, writeFileSync } from 'node:fs';
import { startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';
import { eventually } from '../support/eventually';
import { sharedFolder } from '../support/trees';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/*
 * The clock's ticks on the real stack (minutes): an every-minute schedule whose run outlasts the
 * minute. Temporal's overlap policy (skip) starts no workflow for the next tick; the worker finds
 * the tick Temporal matched but never started, and records it as skipped for `overlap`.
 */

let bosun: Bosun;
let ops: User;
let work: string;

beforeAll(async () => {
  bosun = await startBosun({ scheduleSweepMs: 1000 });
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
  const schedule = (await ops.request('post', path, { name: 'every-minute', every: '1m', time_zone: 'UTC', catch_up_window: '10s' })).body.data;
  const ticks = () => ops.request('get', `${path}/${schedule.id}/ticks`).then((r) => r.body.data as Json[]);

  const [fired] = await eventually(ticks, (list) => list.some((t) => t.outcome === 'fired'), 90_000);
  expect(fired).toMatchObject({ outcome: 'fired', requested_by: null });
  // Due on the minute (an interval of 1m counts from the epoch).
  expect(Date.parse(fired.scheduled_at) % 60_000).toBe(0);
  const skipped = await eventually(ticks, (list) => list.some((t) => t.outcome === 'overlap'), 180_000);
  // Paused before the run is let go: no later tick starts another run.
  expect((await ops.request('post', `${path}/${schedule.id}/pause`, { note: 'test over' })).status).toBe(200);
  writeFileSync(`${work}/go`, '');
  const overlap = skipped.find((t) => t.outcome === 'overlap');
  expect(overlap).toMatchObject({ skipped: true, run_id: null, message: expect.stringContaining('still going') });
  expect(Date.parse(overlap.scheduled_at) - Date.parse(fired.scheduled_at)).toBe(60_000);
  const run = await eventually(() => ops.getRun(deployment.id, fired.run_id), (r) => r.status === 'success', 60_000);
  expect(run.trigger).toMatchObject({ type: 'schedule', name: 'every-minute', scheduled_at: fired.scheduled_at });
  // Only one run: the skipped tick started none.
  expect((await ops.request('get', `/deployments/${deployment.id}/runs`)).body.data).toHaveLength(1);
}, 360_000);
