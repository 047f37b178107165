import { randomBytes } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { pipelineRunWorkflowId, STAGE_GATE_UPDATE, type PipelineRunInput, type StageGateDecision, type StageGateDecisionResult, type StageOfRun } from '../../src/domain/contracts/pipelines';
import { eventually } from '../support/bosun';
import { useTimeSkippingTemporal, type Mocks } from '../support/time-skipping';

/**
 * A pipeline run's stage gates on Temporal's time-skipping test server, with mocked activities: a
 * gate nobody decides expires after its days of test time, failing its stage and skipping what needs
 * it; a gate approved after most of a month lets its stage start, and nothing expires after. Real
 * runs through gates are covered end to end (test/pipelines/runs.test.ts).
 */

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const temporal = useTimeSkippingTemporal();

const person = { type: 'person' as const, id: 'a'.repeat(24), name: 'Alice', token_id: null };
const pipelineRun = (): PipelineRunInput => ({ runId: randomBytes(12).toString('hex'), organizationId: 'org', pipelineId: 'pipe', pipelineName: 'release', triggeredBy: 'Carol (person)' });
/** A gated stage, and one that needs it. */
const stages = (expiresIn: string, expiresMs: number): StageOfRun[] => [
  { name: 'prod', needs: [], when: 'success', gate: { approvals: 1, expires_in: expiresIn, expires_ms: expiresMs }, status: 'pending' },
  { name: 'announce', needs: ['prod'], when: 'success', gate: null, status: 'pending' },
];

/** The pipeline activities, each call recorded with the server time; a stage that starts fails at once (no child runs here). */
function pipelineMocks(planned: StageOfRun[]) {
  const calls: Array<{ name: string; input: any; at: number }> = [];
  const base: Mocks = {
    beginPipelineRun: async () => planned,
    openPipelineStageGate: async (input: { gate: { expires_in: string } }) => (await temporal().now()) + planned.find((s) => s.gate?.expires_in === input.gate.expires_in)!.gate!.expires_ms,
    expirePipelineStageGate: async () => undefined,
    decidePipelineStage: async (input: { required: number }): Promise<StageGateDecisionResult> => ({ outcome: 'approved', approvals: 1, required: input.required }),
    startPipelineStage: async () => ({ failed: 'no child here' }),
    skipPipelineStage: async () => undefined,
    endPipelineStage: async () => ({ status: 'failed', error: null }),
    finishPipelineRun: async () => ({ status: 'failed', error: 'Stage "prod" failed' }),
  };
  const mocks = Object.fromEntries(
    Object.entries(base).map(([name, mock]) => [
      name,
      async (input: unknown) => {
        calls.push({ name, input, at: await temporal().now() });
        return mock(input);
      },
    ]),
  );
  const named = (name: string) => calls.filter((c) => c.name === name);
  return { mocks, named };
}

const start = (taskQueue: string, input: PipelineRunInput) =>
  temporal().env.client.workflow.start('pipelineRunWorkflow', { taskQueue, workflowId: pipelineRunWorkflowId(input.runId), args: [input] });

describe('a pipeline stage’s gate, in test time', () => {
  test('a 3-day gate nobody decides expires after 3 days: its stage fails, the stage that needs it is skipped, the run fails', async () => {
    const { mocks, named } = pipelineMocks(stages('3d', 3 * DAY));
    await temporal().withWorker(mocks, async (taskQueue) => {
      const input = pipelineRun();
      const handle = await start(taskQueue, input);
      const failure = await handle.result().then(() => null, (error: unknown) => error);
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      expect(((failure as WorkflowFailedError).cause as Error).message).toBe('Stage "prod" failed');
      const [opened] = named('openPipelineStageGate');
      const [expired] = named('expirePipelineStageGate');
      expect((expired!.at - opened!.at) / DAY).toBeCloseTo(3, 3);
      expect(named('startPipelineStage')).toEqual([]);
      expect(named('skipPipelineStage').map((c) => c.input)).toEqual([{ runId: input.runId, stage: 'announce', reason: 'needs prod, which failed' }]);
      expect(named('finishPipelineRun').map((c) => c.input)).toEqual([{ runId: input.runId, cancelled: false }]);
    });
  });

  test('a 30-day gate approved on day 29: its stage starts then, and nothing expires after', async () => {
    const { mocks, named } = pipelineMocks(stages('30d', 30 * DAY));
    await temporal().withWorker(mocks, async (taskQueue) => {
      const input = pipelineRun();
      const handle = await start(taskQueue, input);
      await eventually(async () => named('openPipelineStageGate').length, (n) => n === 1);
      await temporal().env.sleep(29 * DAY);
      // A decision on a stage that has no gate is refused by the workflow itself.
      const stray: StageGateDecision = { stage: 'announce', decision: 'approve', id: 'd0', by: person, comment: null };
      await expect(handle.executeUpdate(STAGE_GATE_UPDATE, { args: [stray] })).rejects.toThrow();
      const decision: StageGateDecision = { stage: 'prod', decision: 'approve', id: 'd1', by: person, comment: 'finally' };
      const answer = await handle.executeUpdate<StageGateDecisionResult, [StageGateDecision]>(STAGE_GATE_UPDATE, { args: [decision] });
      expect(answer).toEqual({ outcome: 'approved', approvals: 1, required: 1 });
      await handle.result().catch(() => undefined);
      const [opened] = named('openPipelineStageGate');
      const [started] = named('startPipelineStage');
      expect((started!.at - opened!.at) / DAY).toBeGreaterThanOrEqual(29);
      expect(named('expirePipelineStageGate')).toEqual([]);
      expect(named('decidePipelineStage').map((c) => c.input)).toEqual([{ runId: input.runId, decision, required: 1 }]);
    });
  });
});
