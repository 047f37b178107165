import { Types } from 'mongoose';
import { z } from 'zod';
import { DeploymentModel, DeploymentRunModel, RUN_STATUSES, type DeploymentRun } from '../../domain/deployments/model';
import { gateRefusal } from '../../domain/deployments/gates';
import { targetCounts } from '../../domain/deployments/targets';
import type { UiLinks } from '../../domain/temporal/client';
import type { Principal } from '../../domain/tokens/service';
import { mayApproveRun, readableDeploymentFilter } from '../access/gate';
import { findPage, pageQuerySchema } from '../http/pagination';
import { timestampSchema } from '../http/timestamps';
import { runListItemSchema, toRunListView } from './views/runs';

/*
 * The organization's runs across its deployments, for a person's first look (the console's
 * dashboard, `bosun runs`): what is in progress, what failed lately, and what waits for the caller's
 * approval. Each list holds only runs of deployments the caller may read, as the gate answers.
 */

const one = `(?:${RUN_STATUSES.join('|')})`;
const STATUS_LIST = new RegExp(`^${one}(?:,${one})*$`);

export const runFeedQuerySchema = pageQuerySchema.extend({
  status: z
    .string()
    .regex(STATUS_LIST, `a comma-separated list of ${RUN_STATUSES.join(', ')}`)
    .optional()
    .describe('Only runs with one of these statuses, comma-separated (`queued,running,awaiting_approval`)'),
  since: z.iso.datetime({ offset: true }).optional().describe('Only runs created at or after this time (ISO 8601)'),
});

export type RunFeedQuery = z.infer<typeof runFeedQuerySchema>;

export const feedRunSchema = runListItemSchema
  .extend({ deployment_name: z.string().describe('The name of its deployment') })
  .meta({ id: 'FeedRun', description: 'A run as in a deployment’s run list, with its deployment’s name' });

export const approvalWaitSchema = feedRunSchema
  .extend({ waiting_since: timestampSchema.describe('When its gate opened') })
  .meta({ id: 'ApprovalWait', description: 'A run waiting at an approval gate that the caller may approve now' });

/** What a list of runs reads of each: not its steps' output nor commands. */
const WITHOUT_OUTPUT = { 'steps.output': 0, 'steps.command': 0 } as const;

/** How many runs at most are judged for one person's approvals (the oldest gates first). */
const APPROVALS_SCANNED = 500;

export function runFeed({ links }: { links: Pick<UiLinks, 'run'> }) {
  /** The views of `runs`, with their deployments' names and their targets counted. */
  async function feedViews(runs: DeploymentRun[]) {
    const [counts, deployments] = await Promise.all([
      targetCounts(runs.filter((run) => run.fleet).map((run) => run._id)),
      DeploymentModel.find({ _id: { $in: [...new Set(runs.map((run) => run.deployment_id.toString()))] } }, { name: 1 }).lean(),
    ]);
    const names = new Map(deployments.map((d) => [d._id.toString(), d.name]));
    return runs.map((run) => ({
      ...toRunListView(run, counts.get(run._id.toString())),
      temporal_ui_url: links.run(run._id.toString()),
      deployment_name: names.get(run.deployment_id.toString()) ?? '(deleted)',
    }));
  }

  /** The deployments' runs (not fleet runs' targets, nor rollbacks) the caller may read. */
  async function readableRuns(principal: Principal): Promise<Record<string, unknown>> {
    const deployments = await readableDeploymentFilter(principal);
    const organization_id = new Types.ObjectId(principal.organizationId);
    const ids = deployments._id ? { deployment_id: deployments._id } : {};
    return { organization_id, parent_run_id: null, rolls_back: null, ...ids };
  }

  return {
    /** One page of the organization's runs, newest first. */
    async listOrganizationRuns(principal: Principal, query: RunFeedQuery) {
      const filter: Record<string, unknown> = {
        ...(await readableRuns(principal)),
        ...(query.status ? { status: { $in: query.status.split(',') } } : {}),
        ...(query.since ? { createdAt: { $gte: new Date(query.since) } } : {}),
      };
      const listed = await findPage(DeploymentRunModel, filter, query, (run: DeploymentRun) => run, undefined, WITHOUT_OUTPUT);
      return { ...listed, data: await feedViews(listed.data) };
    },

    /**
     * The runs waiting at a gate the caller may approve now: a person with `approve` on every server
     * the run touches, who neither triggered it nor approved it already (the refusals an approval
     * would meet). The longest waiting first.
     */
    async approvalsFor(principal: Principal) {
      if (principal.identity.type !== 'person') return [];
      const now = new Date();
      const waiting = await DeploymentRunModel.find({ ...(await readableRuns(principal)), status: 'awaiting_approval' }, WITHOUT_OUTPUT)
        .sort({ 'gate.opened_at': 1, _id: 1 })
        .limit(APPROVALS_SCANNED)
        .lean<DeploymentRun[]>();
      const open = waiting.filter((run) => gateRefusal(run, 'approve', principal.identity, now) === null);
      const targets = await DeploymentRunModel.aggregate<{ _id: Types.ObjectId; servers: Types.ObjectId[] }>([
        { $match: { parent_run_id: { $in: open.filter((run) => run.fleet).map((run) => run._id) } } },
        { $group: { _id: '$parent_run_id', servers: { $addToSet: '$server_id' } } },
      ]);
      const serversOf = new Map(targets.map((t) => [t._id.toString(), t.servers]));
      const allowed: DeploymentRun[] = [];
      for (const run of open) {
        const servers = run.fleet ? (serversOf.get(run._id.toString()) ?? []) : [run.server_id];
        if (await mayApproveRun(principal, run.deployment_id.toString(), servers)) allowed.push(run);
      }
      const views = await feedViews(allowed);
      return views.map((view, i) => ({ ...view, waiting_since: (allowed[i]!.gate?.opened_at ?? allowed[i]!.createdAt).toISOString() }));
    },
  };
}
