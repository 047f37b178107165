import { runEnded } from '../support/bosun';
import { addFleet, executionRecord } from '../support/fixtures';
import { BosunProcesses, externalServicesEnv } from '../support/processes';

/*
 * A fleet run whose worker is killed (SIGKILL) in the middle of a batch: a new worker carries the
 * run to its end, and no step runs again after it succeeded (a step interrupted before its result
 * runs again, and says so).
 */

type Target = { server_id: string; title: string; batch: number; steps: Array<{ status: string; attempts: number }> };

describe('a fleet run survives the death of its worker', () => {
  const bosun = new BosunProcesses(externalServicesEnv('fleet-durable'));
  const executions = executionRecord('fleet-kill');
  afterAll(async () => {
    await bosun.stop();
    executions.remove();
  });

  test('SIGKILL the worker mid-batch; a new worker completes the run; no step runs twice after it succeeded', async () => {
    await bosun.createToken('fleet-durable');
    const { worker, ops } = await bosun.launchApiAndWorker();
    const servers = await addFleet(ops, 6);
    const deployment = await ops.define({
      name: 'rolling',
      targets: { server_ids: servers.map((s) => s.id) },
      strategy: { batch_size: 2 },
      steps: [
        { name: 'slow', command: `${executions.note('slow')}; echo begin; sleep 3; echo end` },
        { name: 'quick', command: `${executions.note('quick')}; echo done` },
      ],
    });
    const { run_id: runId } = await ops.trigger(deployment.id);

    // The second batch's commands are running, and have begun on their servers (noted themselves): a
    // step is marked running once its wrapper reports its process group, a moment before the command
    // itself starts, and a kill in between (a loaded machine) would interrupt a command that never ran.
    const hostOf = (serverId: string) => servers.find((s) => s.id === serverId)!.host;
    await ops.waitForRun(deployment.id, runId, (r) =>
      r.targets.filter((t: Target) => t.batch === 2 && t.steps[0]!.status === 'running' && executions.count('slow', hostOf(t.server_id)) === 1).length === 2,
    );
    await worker.stop('SIGKILL');
    await (await bosun.launch('worker')).ready();

    const run = await ops.waitForRun(deployment.id, runId, runEnded, 120_000);
    expect(run.status).toBe('success');
    expect(run.summary).toMatchObject({ total: 6, success: 6 });
    expect(run.targets).toHaveLength(6);
    for (const target of run.targets as Target[]) {
      const address = hostOf(target.server_id);
      // Each command ran as many times as the step says it was attempted: once, or twice when the kill interrupted it.
      expect([target.title, executions.count('slow', address)]).toEqual([target.title, target.steps[0]!.attempts]);
      expect([target.title, executions.count('quick', address)]).toEqual([target.title, 1]);
      // The first batch had finished: nothing of it ran again.
      if (target.batch === 1) expect(target.steps[0]!.attempts).toBe(1);
    }
    // The kill interrupted the second batch's commands: they ran again, and their output says so.
    for (const target of (run.targets as Target[]).filter((t) => t.batch === 2)) {
      const detail = await ops.getTarget(deployment.id, runId, target.server_id);
      expect(detail.steps[0].output).toMatch(/--- attempt 2: the previous attempt was interrupted; running the command again ---\nbegin\nend\n$/);
    }
  }, 240_000);
});
