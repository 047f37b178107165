import { Client } from '@temporalio/client';
import { Types } from 'mongoose';
import { startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
import { eventually } from '../support/eventually';

/*
 * Schedules on the real stack: the API, the Temporal Schedule behind each (the dev server's own
 * scheduler computes next runs, DST included), a tick run now through the same path as the
 * clock's, and the reconcile that keeps Temporal and Bosun's documents the same.
 */

let bosun: Bosun;
let ops: User;
let deploymentId: string;
let temporal: Client;

beforeAll(async () => {
  bosun = await startBosun({ scheduleSweepMs: 500 });
  ops = await asUser(bosun, 'schedules');
  const serverId = await ops.addServer({ host: '127.0.0.2', title: 'sched-1' });
  deploymentId = (await ops.define({ name: 'nightly-backup', server_id: serverId, steps: [{ name: 'backup', command: 'echo "backup $BOSUN_PARAM_LABEL"' }], parameters: [{ name: 'label', default: 'none' }] })).id;
  temporal = new Client({ connection: bosun.temporal.connection });
}, 120_000);
afterAll(async () => {
  ops.close();
  await bosun.stop();
});

const path = (suffix = '') => `/deployments/${deploymentId}/schedules${suffix}`;
const create = async (body: Record<string, unknown>) => {
  const res = await ops.request('post', path(), body);
  if (res.status !== 201) throw new Error(`create schedule: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
};

test('bad input is refused with 422, naming what is wrong, and creates nothing', async () => {
  const base = { name: 'bad', time_zone: 'Europe/Berlin' };
  const cases: Array<[Record<string, unknown>, string, RegExp]> = [
    [{ ...base, cron: '0 2 * * * *' }, 'cron', /5 fields.*6/],
    [{ ...base, cron: '61 * * * *' }, 'cron', /field 1 \(minute\) "61"/],
    [{ ...base, cron: '0 25 * * *' }, 'cron', /field 2 \(hour\) "25"/],
    [{ ...base, every: '30s' }, 'every', /at least 1 minute/],
    [{ ...base, cron: '0 2 * * *', every: '1h' }, 'cron', /either cron or every/],
    [{ name: 'bad', cron: '0 2 * * *', time_zone: 'Mars/Olympus' }, 'time_zone', /IANA time zone/],
    [{ name: 'bad', cron: '0 2 * * *', time_zone: 'CEST' }, 'time_zone', /IANA time zone/],
    [{ name: 'bad', cron: '0 2 * * *' }, 'time_zone', /./],
    [{ ...base, cron: '0 2 * * *', overlap: 'sometimes' }, 'overlap', /./],
    [{ ...base, cron: '0 2 * * *', catch_up_window: '1s' }, 'catch_up_window', /between 10s and 7d/],
    [{ ...base, cron: '0 2 * * *', catch_up_window: 'soon' }, 'catch_up_window', /a duration/],
    [{ ...base, every: '' }, 'every', /a duration/],
    [{ ...base, cron: '0 2 * * *', jitter: '2 minutes' }, 'jitter', /a duration/],
  ];
  for (const [body, field, message] of cases) {
    const res = await ops.request('post', path(), body);
    expect([res.status, res.body.error.code]).toEqual([422, 'validation_failed']);
    const said = res.body.error.details.filter((d: { path: string }) => d.path === field).map((d: { message: string }) => d.message);
    expect(said.join(' | ') || JSON.stringify(res.body)).toMatch(message);
  }
  const unknownParameter = await ops.request('post', path(), { ...base, cron: '0 2 * * *', parameters: { nope: 'x' } });
  expect(unknownParameter.status).toBe(422);
  expect((await ops.request('get', path())).body.data).toEqual([]);
  // A person must say which service account ticks run as.
  expect((await ops.request('get', '/deployments/000000000000000000000000/schedules')).status).toBe(404);
});

test('a schedule is created with its Temporal Schedule; its view shows the next 10 runs in its zone and UTC', async () => {
  const schedule = await create({ name: 'nightly', cron: '30 2 * * 1-5', time_zone: 'Europe/Berlin', parameters: { label: 'weekday' }, note: 'backups' });
  expect(schedule).toMatchObject({ name: 'nightly', cron: '30 2 * * 1-5', every: null, time_zone: 'Europe/Berlin', overlap: 'skip', catch_up_window: '5m', jitter: null, paused: false, parameters: { label: 'weekday' } });
  expect(schedule.run_as.type).toBe('service_account');
  expect(schedule.next_runs).toHaveLength(10);
  for (const next of schedule.next_runs) {
    // 02:30 local on a weekday, at +01:00 or +02:00, the same moment as `at`.
    expect(next.local).toMatch(/T02:30:00\+0[12]:00$/);
    expect(Date.parse(next.local)).toBe(Date.parse(next.at));
    expect([1, 2, 3, 4, 5]).toContain(new Date(Date.parse(next.local) + 2 * 3600_000).getUTCDay());
  }
  const described = await temporal.schedule.getHandle(`bosun-schedule-${schedule.id}`).describe();
  expect(described.spec.timezone ?? (described.spec as { timezoneName?: string }).timezoneName).toBe('Europe/Berlin');
  expect(described.policies.overlap).toBe('SKIP');
  // A name is unique per deployment.
  expect((await ops.request('post', path(), { name: 'nightly', every: '1h', time_zone: 'UTC' })).status).toBe(409);
});

describe('a 02:30 daily job runs once on each day of a DST change week', () => {
  const weeks: Array<[string, string, string]> = [
    ['Europe/Berlin', '2027-03-25T00:00:00Z', '2027-03-28'],
    ['Europe/Berlin', '2027-10-28T00:00:00Z', '2027-10-31'],
    ['America/New_York', '2027-03-11T12:00:00Z', '2027-03-14'],
    ['America/New_York', '2027-11-04T12:00:00Z', '2027-11-07'],
  ];
  test.each(weeks)('%s from %s (the change on %s)', async (zone, from, changeDay) => {
    const schedule = await create({ name: `daily-${zone.replace('/', '-')}-${from.slice(0, 7)}`, cron: '30 2 * * *', time_zone: zone });
    const res = await ops.request('get', `${path(`/${schedule.id}`)}?from=${from}`);
    expect(res.status).toBe(200);
    const runs: Array<{ at: string; local: string }> = res.body.data.next_runs;
    const days = runs.slice(0, 7).map((r) => r.local.slice(0, 10));
    // Seven consecutive local days, each once: none skipped, none doubled.
    const first = new Date(`${days[0]}T00:00:00Z`).getTime();
    expect(days).toEqual(Array.from({ length: 7 }, (_, i) => new Date(first + i * 86_400_000).toISOString().slice(0, 10)));
    expect(days).toContain(changeDay);
    const onChange = runs.find((r) => r.local.startsWith(changeDay))!;
    // Spring forward: 02:30 does not exist that day, so it runs right after the jump (03:00); fall back: at the first 02:30.
    expect(onChange.local).toMatch(changeDay.slice(5, 7) === '03' ? /T03:00:00/ : /T02:30:00/);
    for (const r of runs) if (!r.local.startsWith(changeDay)) expect(r.local).toMatch(/T02:30:00/);
  });
});

test('run now: the same path as a tick — a run as the schedule’s service account, recorded as a fired tick', async () => {
  const schedule = await create({ name: 'on-demand', every: '24h', time_zone: 'UTC', parameters: { label: 'now' } });
  const res = await ops.request('post', path(`/${schedule.id}/trigger`));
  expect(res.status).toBe(202);
  const ticks = await eventually(
    async () => (await ops.request('get', path(`/${schedule.id}/ticks`))).body.data,
    (data: Json[]) => data.length > 0,
    60_000,
  );
  expect(ticks[0]).toMatchObject({ outcome: 'fired', skipped: false, scheduled_at: res.body.scheduled_at });
  expect(ticks[0].requested_by.type).toBe('service_account');
  const run = await eventually(() => ops.getRun(deploymentId, ticks[0].run_id), (r) => r.status === 'success', 60_000);
  expect(run.trigger).toEqual({ type: 'schedule', schedule_id: schedule.id, name: 'on-demand', scheduled_at: res.body.scheduled_at });
  expect(run.triggered_by).toMatch(/^schedule on-demand as .* \(service account\)$/);
  expect(run.steps[0].output).toBe('backup now\n');
  // Filters: fired, skipped.
  expect((await ops.request('get', path(`/${schedule.id}/ticks?outcome=skipped`))).body.data).toEqual([]);
  expect((await ops.request('get', path(`/${schedule.id}/ticks?outcome=fired`))).body.data).toHaveLength(1);
});

test('a tick whose service account may no longer run the deployment is skipped as forbidden', async () => {
  const account = (await ops.request('post', '/service-accounts', { name: 'nightly-bot' })).body.data;
  const binding = (await ops.request('post', '/role-bindings', { role: 'operator', subject: { type: 'service_account', id: account.id } })).body.data;
  const schedule = await create({ name: 'as-bot', every: '24h', time_zone: 'UTC', run_as: account.id });
  expect(schedule.run_as).toMatchObject({ type: 'service_account', id: account.id, name: 'nightly-bot' });
  expect((await ops.request('delete', `/role-bindings/${binding.id}`)).status).toBe(204);
  await ops.request('post', path(`/${schedule.id}/trigger`));
  const ticks = await eventually(
    async () => (await ops.request('get', path(`/${schedule.id}/ticks`))).body.data,
    (data: Json[]) => data.length > 0,
    60_000,
  );
  expect(ticks[0]).toMatchObject({ outcome: 'forbidden', skipped: true, run_id: null });
  expect(ticks[0].message).toMatch(/nightly-bot/);
  // A service account that cannot run the deployment at all is refused when the schedule is made.
  const refused = await ops.request('post', path(), { name: 'as-bot-2', every: '24h', time_zone: 'UTC', run_as: account.id });
  expect([refused.status, refused.body.error.details?.[0]?.path]).toEqual([422, 'run_as']);
});

test('pause and unpause: recorded with who and why, and carried to the Temporal Schedule', async () => {
  const schedule = await create({ name: 'pausable', every: '1h', time_zone: 'UTC' });
  const paused = (await ops.request('post', path(`/${schedule.id}/pause`), { note: 'migration weekend' })).body.data;
  expect(paused).toMatchObject({ paused: true, pause: { note: 'migration weekend' }, next_runs: [] });
  const handle = temporal.schedule.getHandle(`bosun-schedule-${schedule.id}`);
  expect((await handle.describe()).state).toMatchObject({ paused: true, note: 'migration weekend' });
  const unpaused = (await ops.request('post', path(`/${schedule.id}/unpause`), { note: 'done' })).body.data;
  expect(unpaused.paused).toBe(false);
  expect(unpaused.next_runs).toHaveLength(10);
  expect((await handle.describe()).state.paused).toBe(false);
});

test('PATCH changes the schedule and its Temporal Schedule; DELETE removes both; deleting the deployment removes its schedules', async () => {
  const schedule = await create({ name: 'changing', cron: '0 4 * * *', time_zone: 'UTC' });
  const handle = temporal.schedule.getHandle(`bosun-schedule-${schedule.id}`);
  const changed = (await ops.request('patch', path(`/${schedule.id}`), { every: '6h', overlap: 'allow_all', jitter: '2m' })).body.data;
  expect(changed).toMatchObject({ cron: null, every: '6h', overlap: 'allow_all', jitter: '2m' });
  const described = await handle.describe();
  expect(described.policies.overlap).toBe('ALLOW_ALL');
  expect(described.spec.intervals?.[0]?.every).toBe(6 * 3600 * 1000);
  expect((await ops.request('patch', path(`/${schedule.id}`), { cron: '61 * * * *' })).status).toBe(422);
  expect((await ops.request('delete', path(`/${schedule.id}`))).status).toBe(204);
  await expect(handle.describe()).rejects.toThrow();
  expect((await ops.request('get', path(`/${schedule.id}`))).status).toBe(404);

  const otherServer = await ops.addServer({ host: '127.0.0.3', title: 'sched-2' });
  const other = (await ops.define({ name: 'short-lived', server_id: otherServer, steps: [{ name: 'x', command: 'true' }] })).id;
  const doomed = (await ops.request('post', `/deployments/${other}/schedules`, { name: 'doomed', every: '1h', time_zone: 'UTC' })).body.data;
  expect((await ops.request('delete', `/deployments/${other}`)).status).toBe(204);
  await expect(temporal.schedule.getHandle(`bosun-schedule-${doomed.id}`).describe()).rejects.toThrow();
});

test('concurrent changes of one schedule: the last write wins on both the document and its Temporal Schedule', async () => {
  const schedule = await create({ name: 'contended', every: '1h', time_zone: 'UTC' });
  const hours = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
  const answers = await Promise.all(hours.map((h) => ops.request('patch', path(`/${schedule.id}`), { every: `${h}h`, note: `edit ${h}` })));
  expect(answers.map((a) => a.status)).toEqual(hours.map(() => 200));
  const final = (await ops.request('get', path(`/${schedule.id}`))).body.data;
  const described = await temporal.schedule.getHandle(`bosun-schedule-${schedule.id}`).describe();
  // Whichever write came last, Temporal carries the same: its interval, and the document's revision.
  expect(described.spec.intervals?.[0]?.every).toBe(Number.parseInt(final.every, 10) * 3600 * 1000);
  expect((described.action as { memo?: { revision?: number } }).memo?.revision).toBe(1 + hours.length);
});

test('drift is repaired both ways: a Temporal Schedule deleted behind Bosun’s back comes back; one without a document goes', async () => {
  const schedule = await create({ name: 'drifting', every: '12h', time_zone: 'UTC' });
  await temporal.schedule.getHandle(`bosun-schedule-${schedule.id}`).delete();
  // A stray one of this Bosun (its task queue), with no document.
  const stray = `bosun-schedule-${new Types.ObjectId().toString()}`;
  const ours = await temporal.schedule.getHandle(`bosun-schedule-${schedule.id}`).describe().catch(() => null);
  expect(ours).toBeNull();
  const taskQueue = (await temporal.schedule.getHandle(`bosun-schedule-${(await create({ name: 'reference', every: '12h', time_zone: 'UTC' })).id}`).describe()).action.taskQueue;
  await temporal.schedule.create({ scheduleId: stray, spec: { intervals: [{ every: '1h' }] }, action: { type: 'startWorkflow', workflowType: 'scheduledRunWorkflow', taskQueue, args: [] }, state: { paused: true } });
  await eventually(
    async () => (await temporal.schedule.getHandle(`bosun-schedule-${schedule.id}`).describe().then(() => true).catch(() => false)),
    (exists) => exists,
    60_000,
  );
  await eventually(async () => temporal.schedule.getHandle(stray).describe().then(() => true).catch(() => false), (exists) => !exists, 60_000);
});

test('another organization’s schedules are 404', async () => {
  const schedule = await create({ name: 'private', every: '12h', time_zone: 'UTC' });
  const stranger = await asUser(bosun, 'strangers');
  try {
    for (const [method, suffix] of [['get', ''], ['patch', ''], ['delete', ''], ['post', '/pause'], ['post', '/unpause'], ['post', '/trigger'], ['get', '/ticks']] as const) {
      const res = await stranger.request(method, path(`/${schedule.id}${suffix}`), method === 'patch' ? { note: 'x' } : undefined);
      expect([method, suffix, res.status]).toEqual([method, suffix, 404]);
    }
    expect((await stranger.request('get', path())).status).toBe(404);
  } finally {
    stranger.close();
  }
});

test('a tick during a change freeze is skipped as frozen, naming the freeze; after it, ticks run again', async () => {
  const schedule = await create({ name: 'during-freeze', every: '24h', time_zone: 'UTC' });
  const now = Date.now();
  const freeze = (await ops.request('post', '/freezes', { name: 'black-friday', starts_at: new Date(now - 60_000).toISOString(), ends_at: new Date(now + 3600_000).toISOString(), tags: null })).body.data;
  try {
    await ops.request('post', path(`/${schedule.id}/trigger`));
    const [tick] = await eventually(
      async () => (await ops.request('get', path(`/${schedule.id}/ticks`))).body.data,
      (data: Json[]) => data.length > 0,
      60_000,
    );
    expect(tick).toMatchObject({ outcome: 'frozen', skipped: true, run_id: null });
    expect(tick.message).toMatch(/black-friday/);
  } finally {
    expect((await ops.request('delete', `/freezes/${freeze.id}`)).status).toBe(204);
  }
  await ops.request('post', path(`/${schedule.id}/trigger`));
  const ticks = await eventually(
    async () => (await ops.request('get', path(`/${schedule.id}/ticks?outcome=fired`))).body.data,
    (data: Json[]) => data.length > 0,
    60_000,
  );
  expect(ticks[0].run_id).toBeTruthy();
});
