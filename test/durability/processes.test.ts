import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { deploymentRunWorkflowId } from '../../src/domain/contracts/workflow-ids';
import { eventually, runEnded } from '../support/bosun';
import type { User } from '../support/client';
import { longStep, tickingOutput, tickingStep } from '../support/fixtures';
import { BosunProcesses, externalServicesEnv } from '../support/processes';
import { sharedServices, TEST_HEARTBEAT_TIMEOUT_SECONDS } from '../support/shared';

const { EventType, TimeoutType } = temporal.api.enums.v1;

describe('runs survive the death of Bosun’s own processes', () => {
  const bosun = new BosunProcesses(externalServicesEnv('durable'));
  let ops: User;

  beforeAll(async () => {
    await bosun.createToken('durable');
  });
  // Each test kills a process and starts its successor: the next one starts from one API and one worker, whatever happened before.
  beforeEach(async () => {
    const [api, worker] = [bosun.alive('api')[0] ?? (await bosun.launch('api')), bosun.alive('worker')[0] ?? (await bosun.launch('worker'))];
    ops = bosun.userAt(await api.ready());
    await worker.ready();
  }, 150_000);
  afterAll(() => bosun.stop());

  test('SIGKILL the worker in the middle of a long step; a new worker finishes the run', async () => {
    const serverId = await ops.addServer({ host: '127.0.0.5', title: 'durable' });
    const { id } = await ops.defineDeployment(serverId, [longStep(4), { name: 'tail', command: 'echo tail' }], 'long-haul');
    const { run_id: runId } = await ops.trigger(id);

    await ops.waitForRun(id, runId, (r) => r.steps[0].output.includes('begin'), 30_000);
    await bosun.alive('worker')[0]!.stop('SIGKILL');
    await (await bosun.launch('worker')).ready();

    const run = await ops.waitForRun(id, runId, runEnded, 90_000);
    expect(run.status).toBe('success');
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['success', 'success']);
    expect(run.steps[0].output).toMatch(/^begin\n[\s\S]*--- attempt 2: the previous attempt was interrupted; running the command again ---\nbegin\nend\n$/);
    expect(run.steps[0].attempts).toBe(2);
    expect(run.steps[1].output).toBe('tail\n');
  }, 150_000);

  test('SIGKILL the worker long after a step began (its command followed by a heartbeating activity): the step runs again', async () => {
    const serverId = await ops.addServer({ host: '127.0.0.6', title: 'handed-off' });
    const { id } = await ops.defineDeployment(serverId, [{ name: 'long', command: 'echo begin; sleep 3; echo middle; sleep 3; echo end' }], 'handed-off');
    const { run_id: runId } = await ops.trigger(id);

    // Past the first seconds, the command is followed by a heartbeating activity on this worker's own task queue.
    await ops.waitForRun(id, runId, (r) => r.steps[0].output.includes('middle'), 20_000);
    await bosun.alive('worker')[0]!.stop('SIGKILL');
    await (await bosun.launch('worker')).ready();

    const run = await ops.waitForRun(id, runId, runEnded, 90_000);
    expect(run.status).toBe('success');
    expect(run.steps[0].output).toMatch(/^begin\nmiddle\n[\s\S]*--- attempt 2: the previous attempt was interrupted; running the command again ---\nbegin\nmiddle\nend\n$/);
    expect(run.steps[0].attempts).toBe(2);

    // Taken over when the killed worker's heartbeats stopped for the Bosun's WORKER_HEARTBEAT_TIMEOUT_SECONDS (6 s here, 15 by default).
    const connection = await Connection.connect({ address: sharedServices().temporalAddress });
    try {
      const { events } = await new Client({ connection }).workflow.getHandle(deploymentRunWorkflowId(runId)).fetchHistory();
      const scheduled = (events ?? []).filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
      expect(scheduled.length).toBeGreaterThan(0);
      for (const e of scheduled) expect(Number(e.activityTaskScheduledEventAttributes!.heartbeatTimeout!.seconds)).toBe(TEST_HEARTBEAT_TIMEOUT_SECONDS);
      const timedOut = (events ?? []).filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT);
      expect(timedOut.map((e) => e.activityTaskTimedOutEventAttributes!.failure!.timeoutFailureInfo!.timeoutType)).toEqual([TimeoutType.TIMEOUT_TYPE_HEARTBEAT]);
    } finally {
      await connection.close();
    }
  }, 150_000);

  test('restart the API during a run: the run goes on, polling and live events resume', async () => {
    const serverId = await ops.addServer({ host: '127.0.0.8', title: 'ticking' });
    const { id } = await ops.defineDeployment(serverId, [tickingStep(8)], 'ticks');
    const { run_id: runId } = await ops.trigger(id);
    const before = await ops.subscribe(runId);
    await eventually(async () => before.events.length, (n) => n >= 3, 20_000);

    expect(await bosun.alive('api')[0]!.stop('SIGTERM')).toBe(0);
    const ops2 = bosun.userAt(await (await bosun.launch('api')).ready());
    const polled = await ops2.getRun(id, runId);
    expect(['running', 'success']).toContain(polled.status);

    const after = await ops2.subscribe(runId);
    const finished = await eventually(
      async () => after.events.at(-1)?.status ?? (after.snapshot as unknown as { status: string }).status,
      (s) => s === 'success',
      30_000,
    );
    expect(finished).toBe('success');
    const run = await ops2.getRun(id, runId);
    expect(run.steps[0].output).toBe(tickingOutput(8));
    expect(after.events.every((e, i) => e.seq === after.snapshotSeq + 1 + i)).toBe(true);
  }, 90_000);
});
