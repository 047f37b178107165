import { condition, executeChild, ParentClosePolicy, setCurrentDetails } from '@temporalio/workflow';
import { serverSearchAttributes } from '../src/domain/contracts/search-attributes';
import type { ImportVerificationInput, ImportVerificationResult } from '../src/domain/contracts/servers';
import { serverVerifyWorkflowId } from '../src/domain/contracts/workflow-ids';
import { serverVerificationWorkflow } from './server-verification';

/**
 * Verifies the servers an inventory import added, at most `concurrency` at once (each its own
 * verification, as if added by hand: host key pinned on first contact, then watched); a server
 * behind a jump host the same import added is verified after it.
 */
export async function inventoryVerificationWorkflow({ organizationId, source, servers, concurrency }: ImportVerificationInput): Promise<ImportVerificationResult> {
  const pending = [...servers];
  // Servers whose verification has ended (either way): a server behind a jump host of the same import waits for its hop's.
  const ended = new Set<string>();
  const result: ImportVerificationResult = { verified: 0, failed: 0 };
  const progress = () => setCurrentDetails(`${source}: ${result.verified} verified, ${result.failed} failed, ${servers.length - result.verified - result.failed} to go`);
  progress();
  const readyAt = () => pending.findIndex((server) => (server.after ?? []).every((hop) => ended.has(hop)));
  const lane = async () => {
    for (;;) {
      await condition(() => !pending.length || readyAt() >= 0);
      if (!pending.length) return;
      // Another lane woken in the same activation may have taken the one that was ready.
      const at = readyAt();
      if (at < 0) continue;
      const { after: _after, ...input } = pending.splice(at, 1)[0]!;
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
        // The verification recorded why on the server (`last_error`); the others carry on (those behind it fail saying which hop).
        result.failed++;
      }
      ended.add(input.serverId);
      progress();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, servers.length)) }, lane));
  return result;
}
