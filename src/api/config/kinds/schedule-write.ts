import { Types } from 'mongoose';
import type { Actor } from '../../../domain/access/actor';
import type { ApplyContext, ObjectWrite } from '../../../domain/config/types';
import { DeploymentModel } from '../../../domain/deployments/model';
import { resolveParameters, type ParameterDefinition, type StoredParameter } from '../../../domain/deployments/parameters';
import { PipelineModel } from '../../../domain/pipelines/model';
import { ScheduleModel } from '../../../domain/schedules/model';
import { secretReferenceName } from '../../../domain/secrets/references';
import { normalCron } from '../../../domain/time/cron';
import { parseDuration } from '../../../domain/time/durations';
import { actorOf } from '../../../domain/tokens/service';
import { writeDocument } from './references-a';
import type { ScheduleSpec } from './schedule-spec';

/*
 * A schedule's document from its spec: the fields the API's create writes (durations' seconds beside
 * them, a normal cron, run_as as an actor, pause intervals), a revision bumped on every replace so
 * the Temporal Schedule is brought to it. Its parameters are judged against what it runs as written
 * in the same transaction (a deployment or pipeline of the same files is written before it).
 */

async function storedParameters(context: ApplyContext, owner: { pipeline_id: Types.ObjectId } | { deployment_id: Types.ObjectId }, given: Record<string, string>, name: string): Promise<StoredParameter[]> {
  const found = 'pipeline_id' in owner
    ? await PipelineModel.findOne({ _id: owner.pipeline_id, organization_id: context.organizationId }, { parameters: 1 }).session(context.session).lean()
    : await DeploymentModel.findOne({ _id: owner.deployment_id, organization_id: context.organizationId }, { parameters: 1 }).session(context.session).lean();
  const definitions: ParameterDefinition[] = found?.parameters ?? [];
  // A reference stands for a value its pattern is checked against only at the tick (the trigger's own check).
  const { values, problems } = resolveParameters(definitions.map((d) => (secretReferenceName(given[d.name]) ? { ...d, pattern: null } : d)), given);
  for (const value of values) {
    if (value.secret && Object.hasOwn(given, value.name) && !secretReferenceName(value.value)) problems.push({ path: `parameters.${value.name}`, message: 'a secret parameter is given as ${secret:NAME} in files, never in clear' });
  }
  if (problems.length) throw new Error(`schedule "${name}": ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  return values.filter((v) => Object.hasOwn(given, v.name)).map(({ name: parameter, value, secret }) => ({ name: parameter, secret, value, sealed: null }));
}

export async function writeSchedule(context: ApplyContext, object: ObjectWrite, spec: ScheduleSpec): Promise<void> {
  const id = (kind: 'Deployment' | 'Pipeline' | 'ServiceAccount', name: string) => {
    const found = context.names.idOf(kind, name);
    if (!found) throw new Error(`no ${kind} named "${name}"`);
    return new Types.ObjectId(found);
  };
  const owner = spec.pipeline !== undefined ? { pipeline_id: id('Pipeline', spec.pipeline) } : { deployment_id: id('Deployment', spec.deployment!) };
  const account = id('ServiceAccount', spec.run_as);
  const by = actorOf(context.principal) as Actor;
  const now = context.now;
  const fields = {
    deployment_id: null,
    pipeline_id: null,
    ...owner,
    cron: spec.cron !== undefined ? normalCron(spec.cron) : null,
    every: spec.every ?? null,
    every_seconds: spec.every !== undefined ? parseDuration(spec.every) : null,
    time_zone: spec.time_zone,
    parameters: await storedParameters(context, owner, spec.parameters, object.name),
    overlap: spec.overlap,
    catch_up_window: spec.catch_up_window,
    catch_up_window_seconds: parseDuration(spec.catch_up_window),
    jitter: spec.jitter,
    jitter_seconds: spec.jitter ? parseDuration(spec.jitter) : 0,
    note: spec.note,
    paused: spec.paused,
    run_as: { type: 'service_account', id: account.toString(), name: spec.run_as, token_id: null },
    updated_by: by,
  };
  const pausing = { paused_by: by, paused_at: now, pause_note: spec.note };
  await writeDocument(
    ScheduleModel,
    context,
    object,
    (before) => {
      if (!before) return { ...fields, ...(spec.paused ? { ...pausing, pauses: [{ from: now, to: null, note: spec.note }] } : {}) };
      const pauses = (before.pauses ?? []) as Array<{ from: Date; to: Date | null; note: string | null }>;
      const retimed = before.cron !== fields.cron || before.every !== fields.every || before.time_zone !== fields.time_zone;
      const ledger = before.ledger_until as Date;
      return {
        ...fields,
        revision: (before.revision as number) + 1,
        // As the API's change: ticks due before a new timing were the old one's.
        ...(retimed && ledger < now ? { ledger_until: now } : {}),
        // A pause opens an interval, an unpause closes it, as the API's pause and resume do.
        ...(spec.paused === before.paused ? {} : { ...pausing, pauses: spec.paused ? [...pauses, { from: now, to: null, note: spec.note }] : pauses.map((p) => (p.to === null ? { ...p, to: now } : p)) }),
      };
    },
    { created_by: by, revision: 1, ledger_until: now },
  );
}
