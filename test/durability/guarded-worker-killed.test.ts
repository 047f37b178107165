import { runEnded } from '../support/bosun';
import { personToken, userAt, type User } from '../support/client';
import { addFleet, executionRecord, type FleetServer } from '../support/fixtures';
import { BosunProcesses, externalServicesEnv } from '../support/processes';

/*
 * A guarded fleet run whose worker is killed (SIGKILL) between batches — waiting at an approval
 * gate, paused, soaking before its health check, checking, rolling back: a new worker carries it on
 * (a gate's expiry unchanged: a durable timer, not restarted) and no step that finished runs again.
 */

type Target = { server_id: string; batch: number; steps: Array<{ status: string; attempts: number }> };

describe('a guarded fleet run survives the death of its worker', () => {
  const bosun = new BosunProcesses(externalServicesEnv('gate-durable'));
  const executions = executionRecord('gate-kill');
  let ops: User;
  let base: string;
  let servers: FleetServer[];
  beforeAll(async () => {
    await bosun.createToken('gate-durable');
    const launched = await bosun.launchApiAndWorker();
    ops = launched.ops;
    base = await launched.api.ready();
    servers = await addFleet(ops, 3, 'guarded');
  }, 120_000);
  /** Every worker killed (SIGKILL), and a new one started. */
  const killWorkers = async () => {
    for (const worker of bosun.alive('worker')) await worker.stop('SIGKILL');
    await (await bosun.launch('worker')).ready();
  };
  afterAll(async () => {
    await bosun.stop();
    executions.remove();
  });

  test('killed while it waits for approval: still waiting after the restart, with the same expiry; an approval then finishes it; the canary ran once', async () => {
    const approver = userAt(base, (await personToken(ops, 'Alice', 'approver')).token);
    const deployment = await ops.define({
      name: 'gated',
      targets: { server_ids: servers.map((s) => s.id) },
      strategy: { batch_size: 1, gates: [{ before_batch: 2, approvals: 1, expires_in: '2h' }] },
      steps: [{ name: 'mark', command: `${executions.note('mark')}; echo marked` }],
    });
    const { run_id: runId } = await ops.trigger(deployment.id);
    const waiting = await ops.waitForRun(deployment.id, runId, (r) => r.status === 'awaiting_approval');

    await killWorkers();
    const after = await ops.getRun(deployment.id, runId);
    expect([after.status, after.gate.expires_at, after.gate.opened_at]).toEqual(['awaiting_approval', waiting.gate.expires_at, waiting.gate.opened_at]);

    const approved = await approver.decide(deployment.id, runId, 'approve', { comment: 'after the restart' });
    expect([approved.status, approved.body.error?.message]).toEqual([200, undefined]);
    const run = await ops.waitForRun(deployment.id, runId, runEnded, 120_000);
    expect(run).toMatchObject({ status: 'success', error: null, summary: { total: 3, success: 3 }, gate: { outcome: 'approved' } });
    for (const target of run.targets as Target[]) {
      const address = servers.find((s) => s.id === target.server_id)!.host;
      expect([address, executions.count('mark', address)]).toEqual([address, 1]);
    }
    approver.close();
  }, 240_000);

  test('killed while paused: still paused after the restart; a resume finishes it', async () => {
    const deployment = await ops.define({
      name: 'paused',
      targets: { server_ids: servers.slice(0, 2).map((s) => s.id) },
      strategy: { batch_size: 1 },
      steps: [{ name: 'mark', command: `${executions.note('paused')}; sleep 1` }],
    });
    const { run_id: runId } = await ops.trigger(deployment.id);
    await ops.waitForRun(deployment.id, runId, (r) => r.targets[0].steps[0].status === 'running');
    expect((await ops.decide(deployment.id, runId, 'pause', { reason: 'hold' })).status).toBe(200);
    await ops.waitForRun(deployment.id, runId, (r) => r.status === 'paused');

    await killWorkers();
    expect((await ops.getRun(deployment.id, runId)).status).toBe('paused');

    expect((await ops.decide(deployment.id, runId, 'resume')).status).toBe(200);
    const run = await ops.waitForRun(deployment.id, runId, runEnded, 120_000);
    expect(run).toMatchObject({ status: 'success', summary: { total: 2, success: 2 } });
    for (const server of servers.slice(0, 2)) expect([server.host, executions.count('paused', server.host)]).toEqual([server.host, 1]);
  }, 240_000);

  test('killed during a soak, then during a health check: the run carries on to its end; its steps ran once', async () => {
    const deployment = await ops.define({
      name: 'soaked',
      targets: { server_ids: servers.slice(0, 2).map((s) => s.id) },
      strategy: { batch_size: 1, health_check: { command: `${executions.note('check')}; sleep 3; true`, soak_seconds: 6, timeout_seconds: 30 } },
      steps: [{ name: 'release', command: `${executions.note('soak-release')}; echo released` }],
    });
    const { run_id: runId } = await ops.trigger(deployment.id);
    // Batch 1's steps done, its check not yet begun: soaking.
    await ops.waitForRun(deployment.id, runId, (r) => r.targets[0].status === 'success' && r.targets[0].health === null);
    await killWorkers();
    // Batch 2's check under way (its command noted, not yet ended).
    // Batch 2's server: of the two, the one added last (targets run in the order of their ids).
    const second = [...servers.slice(0, 2)].sort((a, b) => a.id.localeCompare(b.id))[1]!.host;
    await ops.waitForRun(deployment.id, runId, () => executions.count('check', second) > 0, 120_000);
    await killWorkers();

    const run = await ops.waitForRun(deployment.id, runId, runEnded, 120_000);
    expect(run).toMatchObject({ status: 'success', summary: { total: 2, success: 2 } });
    expect(run.targets.map((t: { health: { status: string } }) => t.health.status)).toEqual(['success', 'success']);
    for (const server of servers.slice(0, 2)) expect([server.host, executions.count('soak-release', server.host)]).toEqual([server.host, 1]);
    // The interrupted check ran again; its target records one attempt per attempt number.
    expect(run.targets[1].health.attempts).toHaveLength(1);
  }, 240_000);

  test('killed during a rollback: it carries on; every touched server is rolled back; no release step ran twice', async () => {
    // Targets run in the order their servers were added (their ids): batch 1 is the first two, one of which fails.
    const [first, failing, untouched] = [...servers].sort((a, b) => a.id.localeCompare(b.id)) as [FleetServer, FleetServer, FleetServer];
    const deployment = await ops.define({
      name: 'rolled',
      targets: { server_ids: servers.map((s) => s.id) },
      strategy: { batch_size: 2 },
      steps: [{ name: 'release', command: `${executions.note('rb-release')}; here=$(echo "$SSH_CONNECTION" | cut -d" " -f3); [ "$here" != ${failing.host} ]` }],
      rollback: { steps: [{ name: 'restore', command: `${executions.note('restore')}; sleep 3; echo restored` }] },
    });
    const { run_id: runId } = await ops.trigger(deployment.id);
    await ops.waitForRun(deployment.id, runId, () => [first, failing].some((s) => executions.count('restore', s.host) > 0), 120_000);
    await killWorkers();

    const run = await ops.waitForRun(deployment.id, runId, (r) => runEnded(r) && r.rollback?.status !== 'running', 180_000);
    expect(run).toMatchObject({ status: 'failed', rollback: { status: 'success', touched: 2, succeeded: 2 } });
    expect(run.error).toMatch(/; rolled back on 2 of 2 touched servers$/);
    expect(run.targets.map((t: { status: string }) => t.status)).toEqual(['success', 'failed', 'skipped']);
    for (const server of [first, failing]) {
      expect([server.host, executions.count('rb-release', server.host)]).toEqual([server.host, 1]);
      expect(executions.count('restore', server.host)).toBeGreaterThanOrEqual(1);
    }
    expect([executions.count('rb-release', untouched.host), executions.count('restore', untouched.host)]).toEqual([0, 0]);
  }, 240_000);
});
