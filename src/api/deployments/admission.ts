import type { Types } from 'mongoose';
import { batcher } from '../../domain/batch';
import { DeploymentModel, DeploymentRunModel, UNFINISHED_RUN_STATUSES, type Deployment } from '../../domain/deployments/model';
import { triggerPlaces } from '../../domain/servers/trigger-places';

/*
 * What a trigger must pass before its run is queued: the organization's limit of active runs, its
 * deployment, and a place in its server's queue.
 */

export const DEFAULT_MAX_ACTIVE_RUNS = 200;
const ACTIVE_RUNS_RECOUNT_MS = 1000;

/**
 * An organization's runs queued or running, for its limit: counted in MongoDB at most once a second
 * per process (concurrent triggers share the count), plus the triggers this process accepted since:
 * an upper bound, so at the limit the runs are counted again rather than a trigger refused on a guess.
 */
function activeRunCounter(limit: number) {
  const counts = new Map<string, { at: number; count: Promise<number>; since: number }>();
  const recount = (organizationId: string) => {
    const entry = {
      at: Date.now(),
      since: 0,
      // Runs, not a fleet run's targets: a fleet run counts once.
      count: DeploymentRunModel.countDocuments({ organization_id: organizationId, status: { $in: UNFINISHED_RUN_STATUSES }, parent_run_id: null }).limit(limit).exec(),
    };
    entry.count.catch(() => counts.delete(organizationId));
    counts.set(organizationId, entry);
    return entry;
  };
  return {
    async before(organizationId: string): Promise<number> {
      let entry = counts.get(organizationId);
      const stale = !entry || Date.now() - entry.at > ACTIVE_RUNS_RECOUNT_MS;
      if (stale) entry = recount(organizationId);
      const estimate = (await entry!.count) + entry!.since;
      // A refusal rests on a count made for it, never on the estimate.
      return estimate >= limit && !stale ? recount(organizationId).count : estimate;
    },
    accepted(organizationId: string): void {
      const entry = counts.get(organizationId);
      if (entry) entry.since += 1;
    },
  };
}

/** Deployments looked up by id (the fields of `projection`, or all), null for those that do not exist. */
const deploymentLookup = (projection?: Record<string, 1>) =>
  batcher(async (ids: Types.ObjectId[]) => {
    const found = await DeploymentModel.find({ _id: { $in: ids } }, projection).lean<Deployment[]>();
    const byId = new Map(found.map((d) => [d._id.toString(), d]));
    return ids.map((id) => byId.get(id.toString()) ?? null);
  });


/**
 * A trigger's database work, each step shared by the triggers that reach it at the same moment (see
 * batcher): under a burst of triggers, one query or write serves many of them. One per API service.
 */
export function triggerAdmission(maxActiveRuns: number) {
  const deploymentIds = deploymentLookup({ _id: 1 });
  return {
    activeRuns: activeRunCounter(maxActiveRuns),
    deploymentsById: deploymentLookup(),
    deploymentExists: async (id: Types.ObjectId) => (await deploymentIds(id)) !== null,
    takePlace: triggerPlaces(),
  };
}
