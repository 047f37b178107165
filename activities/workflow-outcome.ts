import { Context } from '@temporalio/activity';

/**
 * What a workflow cannot do for itself. Temporal shows a workflow as Cancelled only when a cancel was
 * requested and the workflow then ended by that cancellation; a workflow cannot request its own
 * cancellation (the server refuses an external cancel of the caller), so this activity asks for it.
 */
export function createWorkflowOutcomeActivities() {
  return {
    /**
     * Requests cancellation of the calling workflow, which then ends Cancelled: a conversation whose
     * step a person rejected, a run cancelled before its workflow began.
     */
    async cancelOwnWorkflow(): Promise<void> {
      const { client, info } = Context.current();
      const { workflowId, runId } = info.workflowExecution ?? {};
      if (!workflowId) throw new Error('cancelOwnWorkflow was not called by a workflow');
      await client.workflow.getHandle(workflowId, runId).cancel();
    },
  };
}

export type WorkflowOutcomeActivities = ReturnType<typeof createWorkflowOutcomeActivities>;
