import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { createLogger } from '../../src/logger';
import { cachedWorkflowBundle, installTemporalRuntime } from '../../src/worker/temporal-worker';
import { sharedServices } from '../support/shared';

/**
 * Every history in test/histories (recorded from real runs by `npm run record:histories`) replays
 * against today's workflow code: a change that would break the workflows already running in
 * production (non-determinism) fails here, not there.
 */
const HISTORIES = path.join(__dirname, '..', 'histories');
// Histories of today's code at the top; in a folder named after a commit, histories that commit
// recorded: workflows started by an older Bosun must go on after an upgrade.
const files = (readdirSync(HISTORIES, { recursive: true }) as string[]).filter((f) => f.endsWith('.json')).sort();

describe('recorded workflow histories replay against the current code', () => {
  let workflowBundle: { codePath: string };
  beforeAll(async () => {
    const log = createLogger('silent');
    installTemporalRuntime(log);
    workflowBundle = await cachedWorkflowBundle(sharedServices().cacheDir, log);
  });

  test('there are histories of every workflow type', () => {
    const types = new Set(files.map((f) => (JSON.parse(readFileSync(path.join(HISTORIES, f), 'utf8')) as { events: Array<{ workflowExecutionStartedEventAttributes?: { workflowType: { name: string } } }> }).events[0]!.workflowExecutionStartedEventAttributes!.workflowType.name));
    expect([...types].sort()).toEqual(['auditChainWorkflow', 'auditCheckpointWorkflow', 'configSyncWorkflow', 'conversationWorkflow', 'deploymentFleetWorkflow', 'deploymentRollbackWorkflow', 'deploymentRunWorkflow', 'deploymentTargetWorkflow', 'fleetTargetGroupWorkflow', 'notificationDeliveryWorkflow', 'notificationDispatchWorkflow', 'pipelineRunWorkflow', 'scheduledRunWorkflow', 'serverHealthSweepWorkflow', 'serverHealthWorkflow', 'serverRunQueueWorkflow', 'serverVerificationWorkflow']);
  });

  test.each(files)('%s', async (file) => {
    const history = JSON.parse(readFileSync(path.join(HISTORIES, file), 'utf8'));
    await Worker.runReplayHistory({ workflowBundle, replayName: file }, history, path.basename(file, '.json'));
  });
});
