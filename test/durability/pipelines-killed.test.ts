import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { eventually } from '../support/eventually';
import { personToken, userAt, type User } from '../support/client';
import { addFleet, executionRecord, type FleetServer } from '../support/fixtures';
import { BosunProcesses, externalServicesEnv } from '../support/processes';

/*
 * Every Bosun process killed (SIGKILL: the API and the worker) while a pipeline run is under way —
 * a stage running, a stage's gate waiting, between two stages — and started again: the pipeline run
 * finishes, each stage with one deployment run, and no step that had finished run again.
 */

const ended = (run: { status: string }) => ['success', 'failed', 'cancelled'].includes(run.status);

describe('a pipeline run survives the death of every Bosun process', () => {
  const bosun = new BosunProcesses(externalServicesEnv('pipeline-durable'));
  const executions = executionRecord('pipeline-kill');
  let ops: User;
  let base: string;
  let servers: FleetServer[];
  const launch = async () => {
    const launched = await bosun.launchApiAndWorker();
    ops = launched.ops;
    base = await launched.api.ready();
  };
  beforeAll(async () => {
    await bosun.createToken('pipeline-durable');
    await launch();
    servers = await addFleet(ops, 3, 'stage');
  }, 120_000);
  afterAll(async () => {
    await bosun.stop();
    executions.remove();
  });

  /** Every process killed, then an API and a worker started again; the client of the new API. */
  async function killEverything(): Promise<void> {
    for (const p of [...bosun.alive('api'), ...bosun.alive('worker')]) await p.stop('SIGKILL');
    ops.close();
    await launch();
  }

  async function define(name: string, stages: Array<Record<string, unknown>>) {
    const res = await ops.request('post', '/pipelines', { name, stages });
    if (res.status !== 201) throw new Error(`define a pipeline: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data.id as string;
  }
  const deployment = async (name: string, server: FleetServer, command: string) => (await ops.define({ name, server_id: server.id, steps: [{ name: 'do', command }] })).id as string;
  const getRun = async (pipelineId: string, runId: string) => (await ops.request('get', `/pipelines/${pipelineId}/runs/${runId}`)).body.data;
  const waitForRun = (pipelineId: string, runId: string, done: (run: any) => boolean, timeoutMs = 120_000) => eventually(() => getRun(pipelineId, runId), (run) => !!run && done(run), timeoutMs);
  const runsOf = async (deploymentId: string) => (await ops.request('get', `/deployments/${deploymentId}/runs`)).body.meta.total as number;

  test('killed while a stage runs: the run finishes, each stage run once, the stage before not again', async () => {
    const go = `/tmp/bosun-pipeline-go-${process.pid}-${Date.now()}`;
    const first = await deployment('first', servers[0]!, `${executions.note('first')}`);
    const held = await deployment('held', servers[1]!, `${executions.note('held')}; while [ ! -e ${go} ]; do sleep 0.1; done`);
    const last = await deployment('last', servers[2]!, `${executions.note('last')}`);
    const pipelineId = await define('while-running', [
      { name: 'first', deployment: first },
      { name: 'held', deployment: held, needs: ['first'] },
      { name: 'last', deployment: last, needs: ['held'] },
    ]);
    const runId = (await ops.request('post', `/pipelines/${pipelineId}/run`, {})).body.run_id as string;
    await eventually(async () => executions.count('held', servers[1]!.host), (n) => n >= 1);
    await killEverything();
    writeFileSync(go, '');
    const run = await waitForRun(pipelineId, runId, ended);
    expect(run.status).toBe('success');
    expect([await runsOf(first), await runsOf(held), await runsOf(last)]).toEqual([1, 1, 1]);
    expect([executions.count('first', servers[0]!.host), executions.count('last', servers[2]!.host)]).toEqual([1, 1]);
    expect(existsSync(go)).toBe(true);
  }, 300_000);

  test('killed while a stage’s gate waits: still waiting with the same expiry; an approval then finishes it', async () => {
    const before = await deployment('before-gate', servers[0]!, executions.note('before-gate'));
    const gated = await deployment('gated', servers[1]!, executions.note('gated'));
    const pipelineId = await define('while-gated', [
      { name: 'before', deployment: before },
      { name: 'gated', deployment: gated, needs: ['before'], gate: { approvals: 1, expires_in: '2h' } },
    ]);
    const runId = (await ops.request('post', `/pipelines/${pipelineId}/run`, {})).body.run_id as string;
    const waiting = await waitForRun(pipelineId, runId, (run) => run.status === 'awaiting_approval');
    await killEverything();
    const after = await getRun(pipelineId, runId);
    expect([after.status, after.stages[1].approval.expires_at]).toEqual(['awaiting_approval', waiting.stages[1].approval.expires_at]);
    const person = userAt(base, (await personToken(ops, 'Alice', 'approver')).token);
    expect((await person.request('post', `/pipelines/${pipelineId}/runs/${runId}/stages/gated/approve`, {})).status).toBe(200);
    const run = await waitForRun(pipelineId, runId, ended);
    expect(run.status).toBe('success');
    expect([executions.count('before-gate', servers[0]!.host), executions.count('gated', servers[1]!.host)]).toEqual([1, 1]);
    expect([await runsOf(before), await runsOf(gated)]).toEqual([1, 1]);
    person.close();
  }, 300_000);

  test('killed between two stages: the next stage runs once, the one before not again', async () => {
    // The second stage's command notes its execution only once the test says go: a kill that lands
    // while it runs (the next stage begun already) interrupts a command that has done nothing yet, which
    // runs again — as an interrupted command does — without the count telling it from a kill before.
    const go = `/tmp/bosun-pipeline-between-${process.pid}-${Date.now()}`;
    const one = await deployment('one', servers[0]!, executions.note('one'));
    const two = await deployment('two', servers[1]!, `while [ ! -e ${go} ]; do sleep 0.1; done; ${executions.note('two')}`);
    const pipelineId = await define('between', [{ name: 'one', deployment: one }, { name: 'two', deployment: two, needs: ['one'] }]);
    const runId = (await ops.request('post', `/pipelines/${pipelineId}/run`, {})).body.run_id as string;
    // The first stage's run is over and recorded as such: what the kill may not undo.
    await eventually(async () => (await ops.request('get', `/deployments/${one}/runs`)).body.data[0]?.status, (status) => status === 'success');
    await killEverything();
    writeFileSync(go, '');
    const run = await waitForRun(pipelineId, runId, ended);
    expect(run.status).toBe('success');
    expect([executions.count('one', servers[0]!.host), executions.count('two', servers[1]!.host)]).toEqual([1, 1]);
    expect([await runsOf(one), await runsOf(two)]).toEqual([1, 1]);
    rmSync(go, { force: true });
  }, 300_000);

  test('two API nodes given the same trigger with the same Idempotency-Key at once: one pipeline run', async () => {
    const only = await deployment('idempotent', servers[0]!, 'true');
    const pipelineId = await define('idempotent', [{ name: 'only', deployment: only }]);
    const second = await bosun.launch('api');
    const other = bosun.userAt(await second.ready());
    const key = `release-${Date.now()}`;
    const trigger = (user: User) => user.request('post', `/pipelines/${pipelineId}/run`, {}).set('Idempotency-Key', key);
    const answers = await Promise.all([trigger(ops), trigger(other), trigger(ops), trigger(other)]);
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);
    expect(new Set(answers.map((a) => a.body.run_id)).size).toBe(1);
    expect((await ops.request('get', `/pipelines/${pipelineId}/runs`)).body.meta.total).toBe(1);
    expect((await waitForRun(pipelineId, answers[0]!.body.run_id, ended)).status).toBe('success');
    await second.stop();
  }, 300_000);
});
