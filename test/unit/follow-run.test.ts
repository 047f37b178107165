import { followRun, type FollowedRun } from '../../src/domain/follow-run';
import type { DeploymentRunUpdatedEvent, RunTargetState } from '../../src/domain/events';
import { timeSplit } from '../../src/domain/run-time';

/*
 * The live-run protocol the console and `bosun deploy --wait` share, on the orders of events a real
 * socket can deliver but a test of the whole stack cannot provoke at will: events before the
 * snapshot's answer, gaps, a re-read crossing events on the way.
 */

const target = (title: string, batch: number, status = 'queued', seq = 0): RunTargetState => ({
  server_id: `${title}-id`,
  title,
  host: null,
  health: null,
  batch,
  status,
  started_at: null,
  completed_at: null,
  error: null,
  seq,
  steps: [{ name: 'release', status: status === 'queued' ? 'pending' : status, exit_code: null, attempts: 0, started_at: null, completed_at: null }],
});

const fleetRun = (seq: number, targets: RunTargetState[]): FollowedRun => ({
  seq,
  status: 'running',
  strategy: { batch_size: 2, max_failures: 0, batches: 2 },
  started_at: '2026-01-01T00:00:00.000Z',
  completed_at: null,
  duration_seconds: 0,
  error: null,
  steps: [],
  targets,
  summary: { total: targets.length, success: 0, failed: 0, running: 0, queued: targets.length, skipped: 0, cancelled: 0 },
});

const own = (seq: number, status: string, extra: Partial<DeploymentRunUpdatedEvent> = {}): DeploymentRunUpdatedEvent => ({
  run_id: 'run-1',
  deployment_id: 'd',
  seq,
  status,
  started_at: '2026-01-01T00:00:00.000Z',
  completed_at: null,
  error: null,
  steps: [],
  target: null,
  output: null,
  gate: null,
  pause: null,
  ...extra,
});
const ofTarget = (changed: RunTargetState): DeploymentRunUpdatedEvent => ({ ...own(0, ''), seq: null, status: null, started_at: null, completed_at: null, target: changed });

describe('following a run', () => {
  test('a fleet target’s events update it and the summary, each by its own seq; an old one is ignored, a skipped one asks for a re-read', () => {
    const follower = followRun('run-1');
    follower.take(fleetRun(3, [target('a', 1), target('b', 1), target('c', 2)]));
    expect(follower.apply(ofTarget(target('a', 1, 'running', 1)))).toBe('applied');
    expect(follower.apply(ofTarget(target('a', 1, 'running', 1)))).toBe('ignored');
    expect(follower.apply(ofTarget(target('b', 1, 'success', 2)))).toBe('gap');
    expect(follower.run!.targets.map((t) => t.status)).toEqual(['running', 'success', 'queued']);
    expect(follower.run!.summary).toEqual({ total: 3, success: 1, failed: 0, running: 1, queued: 1, skipped: 0, cancelled: 0 });
    // A target the snapshot did not list: read the run again.
    expect(follower.apply(ofTarget(target('z', 2, 'running', 1)))).toBe('gap');
    expect(follower.run!.targets).toHaveLength(3);
  });

  test('events that come before the snapshot are held, then applied on it; those it covers are not applied twice', () => {
    const follower = followRun('run-1');
    expect(follower.apply(ofTarget(target('a', 1, 'running', 1)))).toBe('held');
    expect(follower.apply(ofTarget(target('a', 1, 'success', 2)))).toBe('held');
    expect(follower.apply(own(5, 'success', { completed_at: '2026-01-01T00:00:07.400Z' }))).toBe('held');
    expect(follower.apply({ ...own(9, 'failed'), run_id: 'another-run' })).toBe('ignored');
    // The snapshot was read after the first of them.
    const held = follower.take(fleetRun(4, [target('a', 1, 'running', 1), target('b', 1)]));
    expect(held.map((h) => h.outcome)).toEqual(['ignored', 'applied', 'applied']);
    expect(follower.run).toMatchObject({ seq: 5, status: 'success', duration_seconds: 7, summary: { total: 2, success: 1, queued: 1 } });
  });

  test('a run’s own events apply in seq order; a gap is applied and asks for a re-read; a re-read older than what is shown does not take it back', () => {
    const follower = followRun('run-1');
    follower.take(fleetRun(2, [target('a', 1)]));
    expect(follower.apply(own(2, 'running'))).toBe('ignored');
    expect(follower.apply(own(4, 'failed', { error: 'boom' }))).toBe('gap');
    expect(follower.run).toMatchObject({ seq: 4, status: 'failed', error: 'boom' });
    expect(follower.apply(ofTarget(target('a', 1, 'failed', 3)))).toBe('gap');
    // A re-read that was on its way before those events.
    follower.take(fleetRun(3, [target('a', 1, 'running', 2)]));
    expect(follower.run).toMatchObject({ seq: 4, status: 'failed', targets: [{ status: 'failed', seq: 3 }], summary: { failed: 1, running: 0 } });
  });

  test('a one-server run is its own one target: its events keep that target and the summary as GET would show them', () => {
    const follower = followRun('run-1');
    const single = { ...fleetRun(1, [target('web-1', 1, 'queued', 1)]), strategy: null, steps: [{ name: 'release', status: 'pending', exit_code: null, attempts: 0, started_at: null, completed_at: null }], summary: { total: 1, success: 0, failed: 0, running: 0, queued: 1, skipped: 0, cancelled: 0 } };
    follower.take(single);
    const steps = [{ name: 'release', status: 'success', exit_code: 0, attempts: 1, started_at: '2026-01-01T00:00:00.000Z', completed_at: '2026-01-01T00:00:02.000Z' }];
    expect(follower.apply(own(2, 'success', { steps, completed_at: '2026-01-01T00:00:02.000Z' }))).toBe('applied');
    expect(follower.run).toMatchObject({ status: 'success', steps, targets: [{ title: 'web-1', status: 'success', seq: 2, steps }], summary: { total: 1, success: 1, queued: 0 } });
  });
});

describe('a run’s time, running apart from waiting', () => {
  const waitingSince = (since: string) => ({ approval_seconds: 0, paused_seconds: 0, frozen_seconds: 0, current: { for: 'approval' as const, since } });

  test('its events carry how long it waited and what holds it: the followed run takes them', () => {
    const follower = followRun('run-1');
    follower.take(fleetRun(3, [target('a', 1, 'success', 2), target('b', 2)]));
    const freeze = { names: ['black-friday'], until: '2026-01-01T06:00:00.000Z', since: '2026-01-01T00:01:00.000Z' };
    expect(follower.apply(own(4, 'frozen', { freeze, waits: { approval_seconds: 0, paused_seconds: 0, frozen_seconds: 0, current: { for: 'freeze', since: freeze.since } } }))).toBe('applied');
    expect(follower.run).toMatchObject({ status: 'frozen', freeze, waits: { current: { for: 'freeze' } } });
    expect(follower.apply(own(5, 'running', { freeze: null, waits: { approval_seconds: 0, paused_seconds: 0, frozen_seconds: 300, current: null } }))).toBe('applied');
    expect(follower.run).toMatchObject({ status: 'running', freeze: null, waits: { frozen_seconds: 300, current: null } });
  });

  test('while it waits, the wait counts on and the time it ran stands still, whatever the second; once ended, the two make its duration', () => {
    const run = { started_at: '2026-01-01T00:00:00.400Z', completed_at: null, waits: waitingSince('2026-01-01T00:00:01.000Z') };
    const at = (ms: number) => timeSplit(run, Date.parse('2026-01-01T00:00:00.000Z') + ms)!;
    expect([at(2_000), at(2_200), at(2_500), at(9_900)].map((s) => [s.running, s.approval])).toEqual([
      [1, 1],
      [1, 1],
      [1, 2],
      [1, 9],
    ]);
    const ended = timeSplit({ started_at: run.started_at, completed_at: '2026-01-01T00:01:00.400Z', waits: { ...waitingSince(''), approval_seconds: 45, paused_seconds: 5, current: null } })!;
    expect(ended).toEqual({ running: 10, approval: 45, paused: 5, frozen: 0 });
    expect(timeSplit({ started_at: null, completed_at: null })).toBeNull();
  });
});
