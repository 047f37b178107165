import { isDuplicateKey } from '../../domain/database';
import { DeploymentRunModel } from '../../domain/deployments/model';
import type { Freeze } from '../../domain/freezes/model';
import * as freezes from '../../domain/freezes/store';
import type { FreezeFields } from '../../domain/freezes/store';
import type { RunWorkflows } from '../../domain/temporal/run-workflows';
import { cronProblem, isTimeZone, normalCron } from '../../domain/time/cron';
import { parseDuration } from '../../domain/time/durations';
import { actorOf, type Principal } from '../../domain/tokens/service';
import { MAX_FREEZE_DURATION_SECONDS } from '../../domain/freezes/coverage';
import type { Logger } from '../../logger';
import { ApiError, notFound } from '../http/errors';
import { parseId } from '../http/ids';
import type { CreateFreezeInput, UpdateFreezeInput } from './schemas';
import { toFreezeView } from './views';
import { checkOwnership } from '../ownership/guard';

const invalid = (path: string, message: string) => new ApiError('validation_failed', `${path}: ${message}`, [{ path, message }]);

/**
 * A freeze's fields, from what was sent over what it was (null: a new one), checked as a whole: one
 * kind of window, complete; an end after its start; a valid cron (the error names its field); a
 * known zone (required with a cron). One kind's fields switch a freeze to that kind.
 */
export function freezeFields(input: CreateFreezeInput | UpdateFreezeInput, current: Freeze | null): FreezeFields {
  const once = input.starts_at !== undefined || input.ends_at !== undefined;
  const recurring = input.cron !== undefined || input.duration !== undefined;
  if (once && recurring) throw invalid('cron', 'give starts_at and ends_at (a one-off window) or cron and duration (a recurring one), not both');
  const kind = once ? 'once' : recurring ? 'recurring' : current ? (current.cron ? 'recurring' : 'once') : null;
  if (!kind) throw invalid('starts_at', 'give starts_at and ends_at (a one-off window), or cron and duration (a recurring one)');
  const sameKind = current && (current.cron ? 'recurring' : 'once') === kind;
  const time_zone = input.time_zone ?? current?.time_zone ?? (kind === 'recurring' ? null : 'UTC');
  if (time_zone === null) throw invalid('time_zone', 'a recurring freeze needs time_zone, an IANA name such as "Europe/Berlin"');
  if (!isTimeZone(time_zone)) throw invalid('time_zone', `"${time_zone}" is not an IANA time zone (such as "Europe/Berlin" or "UTC")`);
  const common = {
    name: input.name ?? current!.name,
    time_zone,
    tags: input.tags !== undefined ? (input.tags ? [...new Set(input.tags)] : null) : (current?.tags ?? null),
    note: input.note !== undefined ? input.note : (current?.note ?? null),
  };
  if (kind === 'once') {
    const starts = input.starts_at ?? (sameKind ? current!.starts_at?.toISOString() : undefined);
    const ends = input.ends_at ?? (sameKind ? current!.ends_at?.toISOString() : undefined);
    if (!starts) throw invalid('starts_at', 'a one-off freeze needs starts_at and ends_at');
    if (!ends) throw invalid('ends_at', 'a one-off freeze needs starts_at and ends_at');
    const [starts_at, ends_at] = [new Date(starts), new Date(ends)];
    if (ends_at <= starts_at) throw invalid('ends_at', `ends_at (${ends_at.toISOString()}) must be after starts_at (${starts_at.toISOString()})`);
    return { ...common, starts_at, ends_at, cron: null, duration: null };
  }
  const cron = input.cron ?? (sameKind ? current!.cron : undefined);
  const duration = input.duration ?? (sameKind ? current!.duration : undefined);
  if (!cron) throw invalid('cron', 'a recurring freeze needs cron and duration');
  if (!duration) throw invalid('duration', 'a recurring freeze needs cron and duration');
  if (parseDuration(duration) > MAX_FREEZE_DURATION_SECONDS) throw invalid('duration', `a freeze's window lasts at most 31d; "${duration}" is longer`);
  const problem = cronProblem(cron);
  if (problem) throw invalid('cron', problem);
  return { ...common, cron: normalCron(cron), duration, starts_at: null, ends_at: null };
}

/** What telling frozen runs needs: the workflows' signal, and a log for a signal that could not be sent. */
export interface FrozenRunsDeps {
  workflows: Pick<RunWorkflows, 'freezesChanged'>;
  log: Logger;
}

/**
 * The organization's frozen runs check their freezes again at once (a freeze edited or deleted may
 * have lifted). Their timers re-check within minutes anyway: a signal lost changes only how soon.
 */
export async function wakeFrozenRuns({ workflows, log }: FrozenRunsDeps, organizationId: string) {
  const frozen = await DeploymentRunModel.find({ organization_id: organizationId, status: 'frozen', parent_run_id: null }, { _id: 1 }).lean();
  await Promise.all(
    frozen.map((run) => workflows.freezesChanged(run._id.toString()).catch((err: unknown) => log.warn({ err, runId: run._id.toString() }, 'could not tell a frozen run its freezes changed; its timer will'))),
  );
}

const taken = (name: string) => new ApiError('conflict', `A freeze named "${name}" already exists in the organization`);

/** The freezes routes' work: each write checked whole, by an admin (the route's gate); frozen runs told when freezes change. */
export function createFreezeService(deps: FrozenRunsDeps) {
  async function find(principal: Principal, id: string) {
    const found = await freezes.findFreeze(principal.organizationId, parseId(id, 'Freeze'));
    if (!found) throw notFound('Freeze');
    return found;
  }

  return {
    /** Every freeze; with a range, each with its windows in it (a calendar's week). */
    async list(principal: Principal, range?: { from: Date; to: Date }) {
      const now = new Date();
      return (await freezes.listFreezes(principal.organizationId)).map((f) => toFreezeView(f, now, range));
    },

    async get(principal: Principal, id: string) {
      return toFreezeView(await find(principal, id));
    },

    async create(principal: Principal, input: CreateFreezeInput) {
      const fields = freezeFields(input, null);
      try {
        return toFreezeView(await freezes.createFreeze(principal.organizationId, fields, actorOf(principal)));
      } catch (error) {
        if (isDuplicateKey(error)) throw taken(fields.name);
        throw error;
      }
    },

    async update(principal: Principal, id: string, { force = false, ...input }: UpdateFreezeInput) {
      const current = await find(principal, id);
      const forced = checkOwnership(principal, { kind: 'Freeze', name: current.name, managedBy: current.managed_by }, { force });
      const fields = freezeFields(input, current);
      let updated: Freeze | null;
      try {
        updated = await freezes.updateFreeze(principal.organizationId, current._id, fields, actorOf(principal), forced);
      } catch (error) {
        if (isDuplicateKey(error)) throw taken(fields.name);
        throw error;
      }
      if (!updated) throw notFound('Freeze');
      await wakeFrozenRuns(deps, principal.organizationId);
      return toFreezeView(updated);
    },

    async remove(principal: Principal, id: string, force = false) {
      const current = await find(principal, id);
      checkOwnership(principal, { kind: 'Freeze', name: current.name, managedBy: current.managed_by }, { force, deleting: true });
      if (!(await freezes.deleteFreeze(principal.organizationId, current._id))) throw notFound('Freeze');
      await wakeFrozenRuns(deps, principal.organizationId);
    },
  };
}

export type FreezeService = ReturnType<typeof createFreezeService>;
