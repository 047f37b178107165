import { executeChild, ParentClosePolicy, setCurrentDetails } from '@temporalio/workflow';
import { serverSearchAttributes } from '../src/domain/contracts/search-attributes';
import type { ImportVerificationInput, ImportVerificationResult } from '../src/domain/contracts/servers';
import { serverVerifyWorkflowId } from '../src/domain/contracts/workflow-ids';
import { serverVerificationWorkflow } from './server-verification';

/**
 * Verifies the servers an inventory import added, at most `concurrency` at once (each its own
 * verification, as if added by hand: host key pinned on first contact, then watched).
 */
export async function inventoryVerificationWorkflow({ organizationId, source, servers, concurrency }: ImportVerificationInput): Promise<ImportVerificationResult> {
  let next = 0;
  const result: ImportVerificationResult = { verified: 0, failed: 0 };
  const progress = () => setCurrentDetails(`${source}: ${result.verified} verified, ${result.failed} failed, ${servers.length - result.verified - result.failed} to go`);
  progress();
  const lane = async () => {
    while (next < servers.length) {
      const input = servers[next++]!;
      try {
        await executeChild(serverVerificationWorkflow, {
          workflowId: serverVerifyWorkflowId(input.serverId),
          args: [input],
          typedSearchAttributes: serverSearchAttributes(organizationId, input.serverId),
          parentClosePolicy: ParentClosePolicy.ABANDON,
          staticSummary: `Verify ${input.serverLabel ?? input.serverId}`,
        });
        result.verified++;
      } catch {
        // The verification recorded why on the server (`last_error`); the others carry on.
        result.failed++;
      }
      progress();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, servers.length)) }, lane));
  return result;
}
