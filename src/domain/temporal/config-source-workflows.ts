import { ScheduleNotFoundError, type Client, type ScheduleOptions } from '@temporalio/client';
import type { WorkflowSignatures } from '../contracts/signatures';
import { configSourceScheduleId, configSyncTickWorkflowId, configSyncWorkflowId } from '../contracts/workflow-ids';
import { ConfigSourceModel, type ConfigSource } from '../config-sources/model';

const isNotFound = (error: unknown) => error instanceof ScheduleNotFoundError || (error as { name?: string } | null)?.name === 'ScheduleNotFoundError';
const PREFIX = 'bosun-config-source-';

/**
 * Config sources in Temporal: a sync now (one per source: a request while one runs answers with that
 * one), and a Temporal Schedule per source with an `every`, brought to the document whenever it
 * changes and by the worker's sweep (one missing is made, one of a deleted source removed).
 */
export class ConfigSourceWorkflows {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  /** Starts the source's sync, or finds the one running: its workflow id and run id. */
  async syncNow(source: Pick<ConfigSource, '_id' | 'organization_id' | 'name'>, requestedBy: string): Promise<{ workflowId: string; runId: string }> {
    const sourceId = source._id.toString();
    const handle = await this.client.workflow.start<WorkflowSignatures['configSyncWorkflow']>('configSyncWorkflow', {
      taskQueue: this.taskQueue,
      workflowId: configSyncWorkflowId(sourceId),
      workflowIdConflictPolicy: 'USE_EXISTING',
      args: [{ sourceId, organizationId: source.organization_id.toString(), requestedBy }],
      staticSummary: `config source "${source.name}": sync, asked by ${requestedBy}`,
    });
    return { workflowId: handle.workflowId, runId: handle.firstExecutionRunId };
  }

  private options(source: ConfigSource & { every_seconds: number }): ScheduleOptions {
    const sourceId = source._id.toString();
    return {
      scheduleId: configSourceScheduleId(sourceId),
      spec: { intervals: [{ every: `${source.every_seconds}s` as const }] },
      action: {
        type: 'startWorkflow',
        workflowType: 'configSyncWorkflow' satisfies keyof WorkflowSignatures,
        workflowId: configSyncTickWorkflowId(sourceId),
        taskQueue: this.taskQueue,
        args: [{ sourceId, organizationId: source.organization_id.toString(), tick: true }],
        staticSummary: `config source "${source.name}": a scheduled sync`,
      },
      policies: { overlap: 'SKIP', catchupWindow: '1m', pauseOnFailure: false },
    };
  }

  /** Brings the source's Temporal Schedule to its document: made or updated with an `every`, removed without one (or without the document). */
  async follow(sourceId: string): Promise<void> {
    const source = await ConfigSourceModel.findById(sourceId).lean<ConfigSource>();
    if (!source?.every_seconds) return this.remove(sourceId);
    const options = this.options({ ...source, every_seconds: source.every_seconds });
    const handle = this.client.schedule.getHandle(options.scheduleId);
    try {
      await handle.update((previous) => ({ ...previous, spec: options.spec, action: options.action, policies: options.policies }) as never);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await this.client.schedule.create(options).catch(async (created: Error) => {
        // Made meanwhile by another node: that one is brought to the document instead.
        if (created.name !== 'ScheduleAlreadyRunning') throw created;
        await handle.update(() => ({ spec: options.spec, action: options.action, policies: options.policies }) as never);
      });
    }
  }

  async remove(sourceId: string): Promise<void> {
    await this.client.schedule
      .getHandle(configSourceScheduleId(sourceId))
      .delete()
      .catch((error) => {
        if (!isNotFound(error)) throw error;
      });
  }

  /** Repairs drift both ways: every source with an `every` has its Temporal Schedule; one of this Bosun's without such a source is deleted. */
  async reconcile(): Promise<{ created: number; deleted: number }> {
    const counts = { created: 0, deleted: 0 };
    const existing = new Set<string>();
    for await (const summary of this.client.schedule.list()) if (summary.scheduleId.startsWith(PREFIX)) existing.add(summary.scheduleId);
    const wanted = new Set<string>();
    for await (const source of ConfigSourceModel.find({ every_seconds: { $ne: null } }, { _id: 1 }).lean().cursor()) {
      const id = configSourceScheduleId(source._id.toString());
      wanted.add(id);
      if (existing.has(id)) continue;
      await this.follow(source._id.toString());
      counts.created += 1;
    }
    for (const scheduleId of existing) {
      if (wanted.has(scheduleId)) continue;
      const sourceId = scheduleId.slice(PREFIX.length);
      // Made since the listing began: not drift.
      if (await ConfigSourceModel.exists({ _id: sourceId, every_seconds: { $ne: null } }).catch(() => null)) continue;
      // Another Bosun's (another task queue on the same namespace): not ours to delete.
      const handle = this.client.schedule.getHandle(scheduleId);
      const description = await handle.describe().catch(() => null);
      if (!description || description.action.taskQueue !== this.taskQueue) continue;
      await handle.delete().catch(() => undefined);
      counts.deleted += 1;
    }
    return counts;
  }
}
