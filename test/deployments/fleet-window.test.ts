import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { sharedFolder } from '../support/trees';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { LOOPBACK_ADDRESSES } from '../support/sshd';
import { addPerson, asUser, type User } from '../support/client';

/*
 * A rolling window (`max_concurrency`) on the real stack: twelve "servers" are the test sshd on
 * twelve loopback addresses, in the order they were added (the targets' order). A step knows where it
 * runs from SSH_CONNECTION; marker files say what ran where, and a step (or a check) told to hold
 * waits for the test's go file, so a target runs as long as the test needs.
 */

const ADDRESSES = LOOPBACK_ADDRESSES.slice(0, 12);
const HERE = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3)';

let bosun: SharedBosun;
let ops: User;
let alice: User & { id: string };
let servers: string[];
let work: string;

type Target = { title: string; status: string; batch: number; health: { status: string } | null };

beforeAll(async () => {
  bosun = await sharedBosun();
  ops = await asUser(bosun, 'fleet-window');
  servers = [];
  for (const [i, host] of ADDRESSES.entries()) servers.push(await ops.addServer({ host, title: `node-${i + 1}` }));
  alice = await addPerson(bosun, ops, 'Alice', 'approver');
  work = sharedFolder('bosun-window-');
}, 120_000);
afterAll(async () => {
  ops?.close();
  alice?.close();
  await bosun.stop();
  rmSync(work, { recursive: true, force: true });
});

/** Waits (in the shell) until the test writes `<tag>-go`. */
const holdUntilGo = (tag: string) => `while [ ! -e ${work}/${tag}-go ]; do sleep 0.1; done`;
const letGo = (tag: string) => writeFileSync(`${work}/${tag}-go`, '');
/** A step that marks `<tag>-<address>`; on `held` it first waits for the go, on `failing` it then exits 1. */
const marking = (tag: string, { held = [], failing = [] }: { held?: string[]; failing?: string[] } = {}) => [
  {
    name: 'mark',
    command: [
      HERE,
      ...held.map((address) => `if [ "$here" = ${address} ]; then ${holdUntilGo(tag)}; fi`),
      `touch ${work}/${tag}-$here`,
      ...failing.map((address) => `if [ "$here" = ${address} ]; then echo "broken on $here"; exit 1; fi`),
    ].join('; '),
  },
];
const ranOn = (tag: string) => ADDRESSES.filter((address) => existsSync(`${work}/${tag}-${address}`));
const statuses = (run: { targets: Target[] }) => run.targets.map((t) => `${t.title}:${t.status}`);
const titles = (from: number, to: number, status: string) => Array.from({ length: to - from + 1 }, (_, i) => `node-${from + i}:${status}`);

test('max_concurrency 3 over 12 targets: while target 1 holds, the others flow through the other two slots — no batch waits for its slowest — never more than 3 at once', async () => {
  // Each step notes where it runs and how many steps run as it starts (a file per running step, removed before its slot frees).
  const concurrency = {
    name: 'mark',
    command: `${HERE}; touch ${work}/flow-running-$here; echo "$here $(ls ${work} | grep -c '^flow-running-')" >> ${work}/flow-seen; if [ "$here" = ${ADDRESSES[0]} ]; then ${holdUntilGo('flow')}; else sleep 0.2; fi; touch ${work}/flow-$here; rm ${work}/flow-running-$here`,
  };
  const deployment = await ops.define({ targets: { server_ids: servers }, strategy: { max_concurrency: 3 }, steps: [concurrency] });
  expect(deployment.strategy).toEqual({ batch_size: null, max_concurrency: 3, max_failures: null, gates: [], health_check: null });
  // The plan shows the window: no batches to wait for; the targets' groups of three.
  const plan = await ops.plan(deployment.id);
  expect(plan.strategy).toEqual({ batch_size: null, max_concurrency: 3, max_failures: 0, batches: 4, gates: [], health_check: null });
  expect(plan.targets.map((t: { batch: number }) => t.batch)).toEqual([1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]);

  const { run_id: runId } = await ops.trigger(deployment.id);
  // Targets 2 to 12 all end while target 1 still runs: targets 4.. took the slots of those that ended.
  const flowing = await ops.waitForRun(deployment.id, runId, (r) => r.targets.slice(1).every((t: Target) => t.status === 'success'), 120_000);
  expect(flowing.status).toBe('running');
  expect(statuses(flowing)).toEqual(['node-1:running', ...titles(2, 12, 'success')]);
  expect(ranOn('flow')).toEqual(ADDRESSES.slice(1));
  letGo('flow');
  const run = await ops.waitForRun(deployment.id, runId, undefined, 120_000);
  expect(run).toMatchObject({ status: 'success', error: null, strategy: { batch_size: null, max_concurrency: 3, max_failures: 0, batches: 4 } });
  expect(run.summary).toEqual({ total: 12, success: 12, failed: 0, running: 0, queued: 0, skipped: 0, cancelled: 0 });
  // Never more than the window; and target 1 ran throughout: every step that began after target 1's
  // saw itself and target 1 at least. (Target 1's own may begin after others of the first three, and
  // after some of them ended, on a loaded machine: its workflow is one of three started together.)
  const seen = readFileSync(`${work}/flow-seen`, 'utf8').trim().split('\n').map((line) => ({ address: line.split(' ')[0], running: Number(line.split(' ')[1]) }));
  expect(seen).toHaveLength(12);
  expect(Math.max(...seen.map((s) => s.running))).toBeLessThanOrEqual(3);
  const first = seen.findIndex((s) => s.address === ADDRESSES[0]);
  expect(first).toBeGreaterThanOrEqual(0);
  expect(seen.slice(first + 1).filter((s) => s.running < 2)).toEqual([]);
}, 240_000);

test('max_failures "10%" (1 of 12) in a window of 2: the second failure starts nothing new, the running target finishes, the rest are skipped, the run fails', async () => {
  const [first, second, third] = ADDRESSES;
  const deployment = await ops.define({ targets: { server_ids: servers }, strategy: { max_concurrency: 2, max_failures: '10%' }, steps: marking('limit', { held: [first!], failing: [second!, third!] }) });
  const { run_id: runId } = await ops.trigger(deployment.id);
  // Targets 2 and 3 failed in the second slot while target 1 holds the first; nothing else started.
  const stopped = await ops.waitForRun(deployment.id, runId, (r) => r.targets[2].status === 'failed', 120_000);
  expect(stopped.status).toBe('running');
  expect(statuses(stopped).slice(0, 3)).toEqual(['node-1:running', 'node-2:failed', 'node-3:failed']);
  letGo('limit');
  const run = await ops.waitForRun(deployment.id, runId, undefined, 120_000);
  expect(run.status).toBe('failed');
  expect(statuses(run)).toEqual(['node-1:success', 'node-2:failed', 'node-3:failed', ...titles(4, 12, 'skipped')]);
  expect(run.summary).toMatchObject({ total: 12, success: 1, failed: 2, skipped: 9 });
  expect(run.error).toMatch(/^2 of 12 targets failed \(more than the 1 allowed: later targets skipped\); first: Step "mark" \(1\/1\) failed on node-2: exit code 1/);
  // Skipped targets never ran anything.
  expect(ranOn('limit')).toEqual(ADDRESSES.slice(0, 3));
}, 240_000);

test('a gate before_target 4 in a window of 2: the three canaries end, people approve, the rest run; a rejection skips the rest and fails the run', async () => {
  const six = servers.slice(0, 6);
  const deployment = await ops.define({ targets: { server_ids: six }, strategy: { max_concurrency: 2, gates: [{ before_target: 4, approvals: 1, expires_in: '1h' }] }, steps: marking('canary') });
  expect(deployment.strategy.gates).toEqual([{ before_target: 4, approvals: 1, expires_in: '1h' }]);
  // Groups of two, and a new one at the gate's target.
  expect((await ops.plan(deployment.id)).targets.map((t: { batch: number }) => t.batch)).toEqual([1, 1, 2, 3, 3, 4]);

  const approved = (await ops.trigger(deployment.id)).run_id;
  const waiting = await ops.waitForRun(deployment.id, approved, (r) => r.status === 'awaiting_approval', 120_000);
  expect(waiting.gate).toMatchObject({ before_target: 4, approvals_required: 1, outcome: null });
  expect(statuses(waiting)).toEqual([...titles(1, 3, 'success'), ...titles(4, 6, 'queued')]);
  expect(ranOn('canary')).toEqual(ADDRESSES.slice(0, 3));
  expect((await alice.decide(deployment.id, approved, 'approve', {})).status).toBe(200);
  const run = await ops.waitForRun(deployment.id, approved, undefined, 120_000);
  expect(run.status).toBe('success');
  expect(run.gate).toMatchObject({ before_target: 4, outcome: 'approved' });
  expect(ranOn('canary')).toEqual(ADDRESSES.slice(0, 6));

  const rejected = (await ops.trigger(deployment.id)).run_id;
  await ops.waitForRun(deployment.id, rejected, (r) => r.status === 'awaiting_approval', 120_000);
  expect((await alice.decide(deployment.id, rejected, 'reject', { reason: 'canaries look slow' })).status).toBe(200);
  const refused = await ops.waitForRun(deployment.id, rejected, undefined, 120_000);
  expect(refused.status).toBe('failed');
  expect(refused.error).toBe('approval rejected by Alice: canaries look slow');
  expect(statuses(refused)).toEqual([...titles(1, 3, 'success'), ...titles(4, 6, 'skipped')]);
}, 240_000);

test('a health check per target as it ends: while target 1’s check holds, the others are checked and done; an unhealthy one fails alone (1 allowed: every target ran)', async () => {
  const four = servers.slice(0, 4);
  const check = `${HERE}; if [ "$here" = ${ADDRESSES[0]} ]; then ${holdUntilGo('health')}; fi; if [ "$here" = ${ADDRESSES[1]} ]; then echo "down on $here"; exit 1; fi; echo "up on $here"`;
  const deployment = await ops.define({ targets: { server_ids: four }, strategy: { max_concurrency: 2, max_failures: 1, health_check: { command: check, timeout_seconds: 600 } }, steps: marking('health') });
  const { run_id: runId } = await ops.trigger(deployment.id);
  // A check's first attempt is recorded as it ends: target 1's, held, has none yet while the others were checked.
  const checked = (t: Target) => t.health !== null && t.health.status !== 'running';
  const checking = await ops.waitForRun(deployment.id, runId, (r) => r.targets.slice(1).every(checked), 120_000);
  expect([checking.status, checking.targets[0].health]).toEqual(['running', null]);
  expect(statuses(checking).slice(1)).toEqual(['node-2:failed', 'node-3:success', 'node-4:success']);
  letGo('health');
  const run = await ops.waitForRun(deployment.id, runId, undefined, 120_000);
  expect(statuses(run)).toEqual(['node-1:success', 'node-2:failed', 'node-3:success', 'node-4:success']);
  expect(run.targets.map((t: Target) => t.health?.status)).toEqual(['success', 'failed', 'success', 'success']);
  expect(run.targets[1].error).toMatch(/^Health check ".*" failed on node-2 after 1 attempt: exit code 1: down on 127\.0\.0\.2$/);
  expect(run.error).toMatch(/^1 of 4 targets failed \(1 allowed: every target ran\); first: Health check/);
}, 240_000);

test('a pause in a window lets the running targets end and starts nothing until resumed; a cancel stops the running targets and the waiting ones', async () => {
  const four = servers.slice(0, 4);
  const held = ADDRESSES.slice(0, 4);
  const running = (r: { targets: Target[] }) => r.targets.slice(0, 2).every((t) => t.status === 'running');
  const deployment = await ops.define({ targets: { server_ids: four }, strategy: { max_concurrency: 2 }, steps: marking('pause', { held }) });
  const { run_id: runId } = await ops.trigger(deployment.id);
  await ops.waitForRun(deployment.id, runId, running, 120_000);
  expect((await ops.decide(deployment.id, runId, 'pause', { reason: 'watching the first two' })).status).toBe(200);
  letGo('pause');
  const paused = await ops.waitForRun(deployment.id, runId, (r) => r.status === 'paused', 120_000);
  expect(statuses(paused)).toEqual(['node-1:success', 'node-2:success', 'node-3:queued', 'node-4:queued']);
  expect(ranOn('pause')).toEqual(ADDRESSES.slice(0, 2));
  expect((await ops.decide(deployment.id, runId, 'resume')).status).toBe(200);
  expect((await ops.waitForRun(deployment.id, runId, undefined, 120_000)).status).toBe('success');
  expect(ranOn('pause')).toEqual(held);

  const stop = await ops.define({ targets: { server_ids: four }, strategy: { max_concurrency: 2 }, steps: marking('stop', { held }) });
  const { run_id: stopping } = await ops.trigger(stop.id);
  await ops.waitForRun(stop.id, stopping, running, 120_000);
  await ops.cancelRun(stop.id, stopping);
  const cancelled = await ops.waitForRun(stop.id, stopping, undefined, 120_000);
  expect(cancelled.status).toBe('cancelled');
  expect(statuses(cancelled)).toEqual(['node-1:cancelled', 'node-2:cancelled', 'node-3:cancelled', 'node-4:cancelled']);
  expect(ranOn('stop')).toEqual([]);
}, 300_000);

test('bad combinations are refused with 422 naming the field: batch_size with max_concurrency, a gate of the other kind, a window under 1', async () => {
  const refused = async (strategy: unknown, path: string) => {
    const res = await ops.request('post', '/deployments', { name: `bad-${path.replace(/\W/g, '-')}`, targets: { server_ids: servers.slice(0, 2) }, strategy, steps: [{ name: 'x', command: 'true' }] });
    expect([res.status, res.body.error?.code, res.body.error?.details?.map((d: { path: string }) => d.path)]).toEqual([422, 'validation_failed', [path]]);
  };
  await refused({ batch_size: 2, max_concurrency: 2 }, 'strategy.max_concurrency');
  await refused({ max_concurrency: 2, gates: [{ before_batch: 2, approvals: 1 }] }, 'strategy.gates.0.before_batch');
  await refused({ batch_size: 2, gates: [{ before_target: 2, approvals: 1 }] }, 'strategy.gates.0.before_target');
  await refused({ max_concurrency: 2, gates: [{ approvals: 1 }] }, 'strategy.gates.0.before_target');
  await refused({ max_concurrency: 0 }, 'strategy.max_concurrency');
  await refused({ max_concurrency: '0%' }, 'strategy.max_concurrency');
  await refused({ max_concurrency: 2, gates: [{ before_target: 3, approvals: 1 }, { before_target: 3, approvals: 2 }] }, 'strategy.gates');
  // A percentage is of the run's targets, rounded up.
  const half = await ops.define({ targets: { server_ids: servers.slice(0, 3) }, strategy: { max_concurrency: '50%' }, steps: [{ name: 'x', command: 'true' }] });
  expect((await ops.plan(half.id)).strategy).toMatchObject({ max_concurrency: 2, batches: 2 });
});
