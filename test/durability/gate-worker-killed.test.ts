import { runEnded } from '../support/bosun';
import { personToken, userAt, type User } from '../support/client';
import { addFleet, executionRecord, type FleetServer } from '../support/fixtures';
import { BosunProcesses, externalServicesEnv } from '../support/processes';

/*
 * A fleet run waiting between batches — at an approval gate, or paused — whose worker is killed
 * (SIGKILL): a new worker finds it still waiting (the gate's expiry unchanged: a durable timer, not
 * restarted), a person's decision then carries it to its end, and no step runs again.
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
    expect(run).toMatchObject({ status: 'success', summary: { total: 3, success: 3 }, gate: { outcome: 'approved' } });
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
});
