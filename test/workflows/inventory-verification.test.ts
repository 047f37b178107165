import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/client';
import type { ImportVerificationInput } from '../../src/domain/contracts/servers';
import { eventually } from '../support/bosun';
import { workflowEnv, type WorkflowEnv } from '../support/workflow-env';

/*
 * The import's verification workflow on mocked activities (the end-to-end import test verifies real
 * servers): never more than `concurrency` verifications at once, one failure not stopping the rest.
 */

let w: WorkflowEnv;
beforeAll(async () => {
  w = await workflowEnv();
});
afterAll(() => w?.teardown());

test('verifies the imported servers `concurrency` at a time; a failed one is counted and the others go on', async () => {
  const ids = Array.from({ length: 5 }, () => randomBytes(12).toString('hex'));
  let inFlight = 0;
  let started = 0;
  let most = 0;
  const waiting: Array<() => void> = [];
  const mocks = {
    verifyServer: async ({ serverId }: { serverId: string }) => {
      started++;
      most = Math.max(most, ++inFlight);
      await new Promise<void>((release) => waiting.push(release));
      inFlight--;
      if (serverId === ids[2]) throw ApplicationFailure.nonRetryable('Authentication failed', 'AuthenticationFailed');
      return {};
    },
    recordVerificationFailure: async () => undefined,
    watchServerHealth: async () => undefined,
  };
  const result = await w.withWorker(mocks, async (taskQueue) => {
    const input: ImportVerificationInput = {
      organizationId: 'org', source: 'prod', concurrency: 2,
      servers: ids.map((serverId) => ({ serverId, organizationId: 'org', maxAttempts: 1, healthIntervalSeconds: 1, trustNewHostKey: false, serverLabel: serverId })),
    };
    const handle = await w.env.client.workflow.start('inventoryVerificationWorkflow', { taskQueue, workflowId: `inventory-verify-test-${ids[0]}`, args: [input] });
    for (let done = 0; done < ids.length; done++) {
      // Two verify at once until fewer than two are left; the next starts only when one ends.
      await eventually(async () => [started, inFlight], ([s, f]) => s === Math.min(done + 2, ids.length) && f === Math.min(2, ids.length - done));
      waiting.shift()!();
    }
    return handle.result();
  });
  expect(result).toEqual({ verified: 4, failed: 1 });
  expect(most).toBe(2);
});

test('a server behind a jump host of the same import is verified after it, even with lanes to spare', async () => {
  const [hop, behind, other] = Array.from({ length: 3 }, () => randomBytes(12).toString('hex')) as [string, string, string];
  const order: string[] = [];
  const release = new Map<string, () => void>();
  const mocks = {
    verifyServer: async ({ serverId }: { serverId: string }) => {
      order.push(serverId);
      await new Promise<void>((done) => release.set(serverId, done));
      return {};
    },
    recordVerificationFailure: async () => undefined,
    watchServerHealth: async () => undefined,
  };
  const result = await w.withWorker(mocks, async (taskQueue) => {
    const server = (serverId: string, after?: string[]) => ({ serverId, organizationId: 'org', maxAttempts: 1, healthIntervalSeconds: 1, trustNewHostKey: false, ...(after ? { after } : {}) });
    // Listed first, and three lanes: only the hop's order can hold it back.
    const input: ImportVerificationInput = { organizationId: 'org', source: 'prod', concurrency: 3, servers: [server(behind, [hop]), server(hop), server(other)] };
    const handle = await w.env.client.workflow.start('inventoryVerificationWorkflow', { taskQueue, workflowId: `inventory-verify-test-${hop}`, args: [input] });
    await eventually(async () => [...order], (o) => o.length === 2, 10_000);
    expect([...order].sort()).toEqual([hop, other].sort());
    release.get(other)!();
    release.get(hop)!();
    await eventually(async () => [...order], (o) => o.length === 3);
    expect(order[2]).toBe(behind);
    release.get(behind)!();
    return handle.result();
  });
  expect(result).toEqual({ verified: 3, failed: 0 });
});
