import type { KindAdapter, ManagedBy, NameIndex } from '../../../domain/config/types';
import { ScheduleModel, type Schedule } from '../../../domain/schedules/model';
import { deleteSchedule } from '../../../domain/schedules/store';
import { secretReferenceName } from '../../../domain/secrets/references';
import type { ScheduleWorkflows } from '../../../domain/temporal/schedules';
import { normalCron } from '../../../domain/time/cron';
import { parseDuration } from '../../../domain/time/durations';
import { actAsServiceAccount } from '../../../domain/tokens/service';
import { checked, issueProblems, nameOr, referenceResolver, refused } from './references-a';
import { writeSchedule } from './schedule-write';
import { ownerProblem, scheduleFileSchema, scheduleName } from './schedule-spec';
import { Types } from 'mongoose';
import { inLanes } from '../../../domain/lanes';

/*
 * Schedules in config files: the create body, with what it runs named (`deployment` or `pipeline`,
 * by name) and `run_as` a service account by name — required here: who runs a plan must not decide
 * as which account ticks run. A secret parameter's value is `${secret:NAME}`, resolved at each tick.
 */

interface Shape {
  deployment?: string | null;
  pipeline?: string | null;
  cron?: string | null;
  every?: string | null;
  time_zone: string;
  parameters: Record<string, string>;
  overlap: string;
  catch_up_window: string;
  jitter: string | null;
  paused: boolean;
  note: string | null;
  run_as: string;
}

/** Parameters by name, sorted: the API keeps them in its deployment's order, a file in its own. */
const sorted = (parameters: Record<string, string>) => Object.fromEntries(Object.entries(parameters).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

function canonical(s: Shape): Record<string, unknown> {
  return {
    ...(s.deployment ? { deployment: s.deployment } : { pipeline: s.pipeline }),
    ...(s.cron ? { cron: normalCron(s.cron) } : { every: s.every }),
    time_zone: s.time_zone,
    parameters: sorted(s.parameters),
    overlap: s.overlap,
    catch_up_window: s.catch_up_window,
    jitter: s.jitter,
    paused: s.paused,
    note: s.note,
    run_as: s.run_as,
  };
}

/** A secret parameter made through the API is sealed: files cannot show it, so its value stands masked. */
const asShape = (s: Schedule, names: NameIndex): Shape => ({
  ...(s.pipeline_id ? { pipeline: nameOr(names, 'Pipeline', s.pipeline_id) } : { deployment: nameOr(names, 'Deployment', s.deployment_id) }),
  cron: s.cron,
  every: s.every,
  time_zone: s.time_zone,
  parameters: Object.fromEntries(s.parameters.map((p) => [p.name, p.secret && !secretReferenceName(p.value) ? '********' : (p.value ?? '')])),
  overlap: s.overlap,
  catch_up_window: s.catch_up_window,
  jitter: s.jitter ?? null,
  paused: s.paused,
  note: s.note ?? null,
  run_as: nameOr(names, 'ServiceAccount', s.run_as.id),
});

const spoken = (seconds: number) => (seconds % 60 === 0 ? `${seconds / 60} minute${seconds === 60 ? '' : 's'} ("${seconds / 60}m")` : `${seconds} second${seconds === 1 ? '' : 's'} ("${seconds}s")`);

/** Temporal pushes at once after an apply: hundreds of schedules neither flood Temporal nor wait one by one. */
const SYNCS_AT_ONCE = 8;

export function scheduleKind({ schedules, minIntervalSeconds }: { schedules: Pick<ScheduleWorkflows, 'sync'>; minIntervalSeconds: number }): KindAdapter {
  return {
    kind: 'Schedule',
    nameSchema: scheduleName,
    fileSchema: scheduleFileSchema,

    async current(organizationId, names) {
      const found = await ScheduleModel.find({ organization_id: organizationId }).sort({ name: 1, _id: 1 }).lean<Schedule[]>();
      return found.map((s) => ({ id: s._id.toString(), name: s.name, spec: canonical(asShape(s, names)), managed_by: (s as { managed_by?: ManagedBy | null }).managed_by ?? null }));
    },

    async check(spec, context) {
      const parsed = scheduleFileSchema.safeParse(spec);
      const problems = [...(parsed.success ? [] : issueProblems(parsed.error)), ...ownerProblem(spec)];
      const references = referenceResolver(context.names);
      const text = (key: string) => (typeof spec[key] === 'string' ? (spec[key] as string).trim() : null);
      if (text('deployment')) references.id('Deployment', text('deployment')!, ['deployment']);
      if (text('pipeline')) references.id('Pipeline', text('pipeline')!, ['pipeline']);
      const account = text('run_as') ? references.id('ServiceAccount', text('run_as')!, ['run_as']) : null;
      // An account of the organization now must be able to act; a planned one is new, and enabled.
      if (account && Types.ObjectId.isValid(account)) {
        const state = await actAsServiceAccount(account).catch(() => null);
        if (typeof state === 'string' && state !== 'unknown') problems.push({ path: ['run_as'], message: `the service account ${text('run_as')} is ${state}` });
      }
      if (parsed.success && parsed.data.every !== undefined && parseDuration(parsed.data.every) < minIntervalSeconds) {
        problems.push({ path: ['every'], message: `an interval is at least ${spoken(minIntervalSeconds)}` });
      }
      const given = spec.parameters && typeof spec.parameters === 'object' ? Object.entries(spec.parameters as Record<string, unknown>) : [];
      for (const [name, value] of given) {
        const secret = typeof value === 'string' ? secretReferenceName(value) : null;
        if (secret !== null && !context.secrets.has(secret)) problems.push({ path: ['parameters', name], message: `no organization secret named "${secret}" (PUT /api/v1/secrets/${secret})` });
      }
      problems.push(...references.problems);
      return problems.length || !parsed.success ? refused(problems) : checked(canonical(parsed.data as Shape));
    },

    write: (context, object) => writeSchedule(context, object, scheduleFileSchema.parse(object.spec)),

    async remove({ session }, id) {
      await deleteSchedule(new Types.ObjectId(id), session);
    },

    /** A schedule's ticks wait for no run: nothing holds its delete. */
    pruneBlocker: async () => null,

    /** Each Temporal Schedule brought to its document (deleted with it); the worker's reconcile repairs what a crash left. */
    async afterApply(_organizationId, { written, removed }) {
      const failures: unknown[] = [];
      await inLanes([...written, ...removed], SYNCS_AT_ONCE, async (id) => {
        await schedules.sync(id).catch((error: unknown) => failures.push(error));
      });
      if (failures.length) throw failures[0];
    },
  };
}
