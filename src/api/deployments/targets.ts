import { Types } from 'mongoose';
import { MAX_BATCH_SIZE } from '../../domain/contracts/runs';
import type { Deployment } from '../../domain/deployments/model';
import { ServerModel, type Server } from '../../domain/servers/model';
import { taggedForTargeting } from '../../domain/servers/quarantine';
import { windowGroups } from '../../domain/deployments/window';

/*
 * A deployment's targets, resolved when a run is triggered (or planned): the servers it lists and
 * the servers having all its tags (quarantined ones left out), in the order they were added; and its strategy, resolved
 * against how many they are.
 */

export type TargetServer = Pick<Server, '_id' | 'title' | 'host' | 'status' | 'tags'>;

/** The servers a deployment targets now: one for a one-server deployment (none if it was deleted). */
export async function resolveTargets(deployment: Pick<Deployment, 'organization_id' | 'server_id' | 'targets'>): Promise<TargetServer[]> {
  const projection = { title: 1, host: 1, status: 1, tags: 1 };
  const organization_id = deployment.organization_id;
  if (deployment.server_id) return ServerModel.find({ _id: deployment.server_id, organization_id }, projection).lean<TargetServer[]>();
  const ids = (deployment.targets?.server_ids ?? []).map((id) => new Types.ObjectId(String(id)));
  const tags = deployment.targets?.tags ?? [];
  const either = [...(ids.length ? [{ _id: { $in: ids } }] : []), ...(tags.length ? [taggedForTargeting(tags)] : [])];
  if (!either.length) return [];
  // A server listed but deleted since is no longer a target.
  return ServerModel.find({ organization_id, $or: either }, projection).sort({ _id: 1 }).lean<TargetServer[]>();
}

/** The servers of the organization a set of targets (a definition being written) would select now, with their tags. */
export const serversOfDefinition = (organizationId: string, input: { server_id?: string | null; targets?: { server_ids?: string[]; tags?: string[] } | null }) =>
  resolveTargets({ organization_id: organizationId as never, server_id: (input.server_id ?? null) as never, targets: (input.targets ?? null) as never });

/** "25%" of `total`, rounded the way each side means: up for a batch (at least one), down for failures allowed. */
const amount = (value: unknown, total: number, round: (n: number) => number): number | null => {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.endsWith('%')) return round((Number(value.slice(0, -1)) * total) / 100);
  return null;
};

export interface ResolvedStrategy {
  /** A batch's size; in a rolling window, its groups' (the window). */
  batchSize: number;
  maxFailures: number;
  /** How many batches; in a rolling window, how many groups (windowGroups). */
  batches: number;
  /** The rolling window: at most this many targets at once (null: fixed batches). */
  maxConcurrency: number | null;
  /** Each target's batch (or group), in order. */
  batchOfTargets: number[];
}

/**
 * `batch_size` (default: all targets, at most MAX_BATCH_SIZE at once) or `max_concurrency` (a
 * rolling window, at most MAX_BATCH_SIZE too), and `max_failures` (default 0), for `total` targets;
 * a window's gates (`before_target`) start new groups.
 */
export function resolveStrategy(
  strategy: { batch_size?: unknown; max_concurrency?: unknown; max_failures?: unknown; gates?: ReadonlyArray<{ before_target?: number | null }> | null } | null | undefined,
  total: number,
): ResolvedStrategy {
  const window = amount(strategy?.max_concurrency, total, Math.ceil);
  const requested = window ?? amount(strategy?.batch_size, total, Math.ceil) ?? total;
  const batchSize = Math.max(1, Math.min(requested, total || 1, MAX_BATCH_SIZE));
  const maxFailures = Math.max(0, amount(strategy?.max_failures, total, Math.floor) ?? 0);
  if (window === null) {
    const batchOfTargets = Array.from({ length: total }, (_, index) => Math.floor(index / batchSize) + 1);
    return { batchSize, maxFailures, batches: Math.ceil(total / batchSize), maxConcurrency: null, batchOfTargets };
  }
  const gateTargets = (strategy?.gates ?? []).flatMap((gate) => (typeof gate.before_target === 'number' ? [gate.before_target] : []));
  const batchOfTargets = windowGroups(total, batchSize, gateTargets);
  return { batchSize, maxFailures, batches: batchOfTargets.at(-1) ?? 0, maxConcurrency: batchSize, batchOfTargets };
}
