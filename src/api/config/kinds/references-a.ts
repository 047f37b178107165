import type { z } from 'zod';
import { Types, type Model } from 'mongoose';
import type { ApplyContext, CheckedSpec, ManagedBy, NameIndex, ObjectWrite, ReferenceKind, SpecPath, SpecProblem } from '../../../domain/config/types';
import type { ScheduleWorkflows } from '../../../domain/temporal/schedules';

/*
 * What the Deployment, Pipeline and Schedule adapters share: a spec's zod issues as problems at the
 * file's paths, references by name resolved (or named as missing or ambiguous), and canonical specs
 * (absent and empty optional parts left out, so a spec read back compares equal to the one written).
 */

/** A spec's zod issues as problems: `Unknown field: x` at the object holding it, else zod's own message. */
export const issueProblems = (error: z.ZodError): SpecProblem[] =>
  error.issues.map((issue) => ({
    path: issue.path as SpecPath,
    message: issue.code === 'unrecognized_keys' ? `Unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}` : issue.message,
  }));

/** `kind` as the messages name it. */
const SPOKEN: Partial<Record<ReferenceKind, string>> = { Deployment: 'deployment', Pipeline: 'pipeline', ServiceAccount: 'service account' };

/**
 * The id `name` refers to, or the problem: a server by its title (two servers titled alike are named
 * as such), anything else by its name in the files or the organization.
 */
export function resolveName(names: NameIndex, kind: ReferenceKind, name: string, path: SpecPath): { id: string } | SpecProblem {
  const id = names.idOf(kind, name);
  if (id) return { id };
  const ambiguous = 'ambiguous' in names && typeof names.ambiguous === 'function' && (names.ambiguous as (k: ReferenceKind, n: string) => boolean)(kind, name);
  if (kind === 'Server') return { path, message: ambiguous ? `more than one server is titled "${name}": retitle one, or target them by tags` : `no server titled "${name}"` };
  return { path, message: `no ${SPOKEN[kind] ?? kind} named "${name}" (in the files or the organization)` };
}

/** Resolves references one by one, keeping every problem: `ids` holds those found, by path. */
export function referenceResolver(names: NameIndex) {
  const problems: SpecProblem[] = [];
  return {
    problems,
    /** The id, or null with the problem recorded. */
    id(kind: ReferenceKind, name: string, path: SpecPath): string | null {
      const found = resolveName(names, kind, name, path);
      if ('id' in found) return found.id;
      problems.push(found);
      return null;
    },
  };
}

/** The name an id of the organization has now (an object deleted under a reference: its id, so the spec says so). */
export const nameOr = (names: NameIndex, kind: ReferenceKind, id: unknown) => names.nameOf(kind, String(id)) ?? String(id);

/** `value` unless it is null, undefined or an empty list: a canonical spec leaves those out. */
export const present = <T>(key: string, value: T | null | undefined): Record<string, T> =>
  value === null || value === undefined || (Array.isArray(value) && value.length === 0) ? {} : { [key]: value };

export const checked = (spec: Record<string, unknown>): CheckedSpec => ({ spec, problems: [] });
export const refused = (problems: SpecProblem[]): CheckedSpec => ({ spec: null, problems });

/** A document's fields from its spec; `before` is the document replaced (null: created). */
type FieldsOf = Record<string, unknown> | ((before: Record<string, unknown> | null) => Record<string, unknown>);

/**
 * Creates the document with its planned id (with `created`: what only a creation sets), or replaces
 * its definition, through the session only; mongoose's defaults, casts and timestamps as the API's writes get them.
 */
export async function writeDocument(model: Model<any>, context: ApplyContext, object: ObjectWrite, fields: FieldsOf, created: Record<string, unknown> = {}): Promise<void> {
  const { session, organizationId } = context;
  const managed_by: ManagedBy = object.managed_by;
  const of = (before: Record<string, unknown> | null) => (typeof fields === 'function' ? fields(before) : fields);
  if (!object.existing) {
    await model.create([{ _id: new Types.ObjectId(object.id), organization_id: organizationId, name: object.name, ...created, ...of(null), managed_by }], { session });
    return;
  }
  const doc = await model.findOne({ _id: object.id, organization_id: organizationId }).session(session);
  if (!doc) throw new Error(`${object.name}: no such object to replace (deleted since the plan)`);
  doc.set({ name: object.name, ...of(doc.toObject()), managed_by });
  await doc.save({ session });
}

/** The Temporal Schedules afterApply removes: a deployment's or a pipeline's schedules, deleted with it in the transaction. */
export type RemovedSchedules = Map<string, string[]>;

export async function dropRemovedSchedules(removed: readonly string[], pending: RemovedSchedules, schedules: Pick<ScheduleWorkflows, 'remove'>) {
  const ids = removed.flatMap((id) => pending.get(id) ?? []);
  for (const id of removed) pending.delete(id);
  await Promise.all(ids.map((id) => schedules.remove(id)));
}

