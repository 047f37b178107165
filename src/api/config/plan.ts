import '../../domain/zod-messages';
import { Types } from 'mongoose';
import { canonicalJson, sha256 } from '../../domain/audit/chain';
import { parseConfigFiles, formatProblem, specPathText, secretReferences } from '../../domain/config/files';
import type { ConfigDocument, ConfigKind, ConfigProblem, CurrentObject, KindAdapter, NameIndex } from '../../domain/config/types';
import { OrganizationSecretModel } from '../../domain/secrets/model';
import type { Principal } from '../../domain/tokens/service';
import { assertMayChangeKind } from '../access/gate';
import { diffFields, driftOf } from './diff';
import { loadNames, type PlannedName } from './names';
import type { Plan, PlanProblem, PlanRequest } from './schemas';

/*
 * A plan: the files read, every document checked by its kind's adapter against the organization as
 * it is now, and what an apply would create, update, delete (prune) and leave. Its hash covers all
 * of that and the current state of what it touches, so an apply bound to it (plan_hash) refuses if
 * anything moved in between.
 */

/** One object an apply writes, with everything the write needs. */
export interface PlannedWrite {
  adapter: KindAdapter;
  kind: ConfigKind;
  name: string;
  id: string;
  path: string;
  spec: Record<string, unknown>;
  existing: CurrentObject | null;
}

export interface PlannedRemoval {
  adapter: KindAdapter;
  kind: ConfigKind;
  name: string;
  id: string;
}

export interface ConfigPlan {
  view: Plan;
  writes: PlannedWrite[];
  removals: PlannedRemoval[];
  names: NameIndex;
  /** The revision this source applied last (its newest object's), or null. */
  previousRevision: string | null;
}

/** A problem as a plan shows it; one about an object no file holds any more names the file it came from, with no line. */
const view = (p: ConfigProblem): PlanProblem => ({ file: p.file, line: p.line, column: p.column, kind: p.kind, name: p.name, message: p.message, text: p.line ? formatProblem(p) : `${p.file}: ${p.message}` });

/** A message that reads on from its field (`must be at most 86400`) follows it; another after a colon (`server: no server titled "web-9"`). */
const READS_ON = /^(must|is|are|names|may|needs|cannot|has|holds|refers|was|should)\b/;

/** A problem of a document: at the field it is about, or at the document itself (its `kind:`). */
const problemAt = (document: ConfigDocument, path: ReadonlyArray<string | number>, message: string): ConfigProblem => ({
  ...(path.length ? document.positionOf(path) : document.at),
  kind: document.kind,
  name: document.name,
  message: path.length ? `${specPathText(path)}${READS_ON.test(message) ? ' ' : ': '}${message}` : message,
});

/** About an object only the organization has now: the file it was applied from, no line. */
const inFileOf = (object: CurrentObject, kind: ConfigKind, message: string): ConfigProblem => ({ file: object.managed_by?.path ?? '', line: 0, column: 0, kind, name: object.name, message });


/** Every object of every kind now, by kind then name; and the names two objects of a kind share (schedules of two deployments may). */
async function currentObjects(organizationId: string, adapters: readonly KindAdapter[], names: NameIndex) {
  const listed = await Promise.all(adapters.map(async (adapter) => [adapter.kind, await adapter.current(organizationId, names)] as const));
  const seen = new Set<string>();
  const shared = new Set<string>();
  for (const [kind, objects] of listed) for (const { name } of objects) (seen.has(`${kind}\u0000${name}`) ? shared : seen).add(`${kind}\u0000${name}`);
  return { byKind: new Map(listed.map(([kind, objects]) => [kind, new Map(objects.map((object) => [object.name, object]))])), shared };
}

export async function planConfig(principal: Principal, request: PlanRequest, adapters: readonly KindAdapter[]): Promise<ConfigPlan> {
  const organizationId = principal.organizationId;
  const byKind = new Map(adapters.map((adapter) => [adapter.kind, adapter]));
  const parsed = parseConfigFiles(request.files);
  const errors: ConfigProblem[] = [...parsed.problems];
  const warnings: ConfigProblem[] = [];
  for (const document of parsed.documents.filter((d) => !byKind.has(d.kind))) errors.push(problemAt(document, [], `kind ${document.kind} cannot be applied by this Bosun`));
  const documents = parsed.documents.filter((document) => byKind.has(document.kind));
  for (const document of documents) assertMayChangeKind(principal, document.kind, `${document.at.file}:${document.at.line}:${document.at.column}: ${document.kind} "${document.name}"`);

  const known = await loadNames(organizationId);
  const { byKind: current, shared } = await currentObjects(organizationId, adapters, known);
  const planned: PlannedName[] = documents
    .filter((document) => !current.get(document.kind)!.has(document.name))
    .map((document) => ({ kind: document.kind, name: document.name, id: new Types.ObjectId().toHexString() }));
  const plannedIds = new Map(planned.map((p) => [`${p.kind}\u0000${p.name}`, p.id]));
  const names = known.withPlanned(planned);
  const secrets = new Set((await OrganizationSecretModel.find({ organization_id: organizationId }, { name: 1 }).lean()).map((secret) => secret.name));

  const plan: Plan = { plan_hash: '', source: request.source, revision: request.revision, create: [], update: [], delete: [], unchanged: [], drift: [], errors: [], warnings: [] };
  const writes: PlannedWrite[] = [];
  for (const document of documents) {
    const adapter = byKind.get(document.kind)!;
    const existing = current.get(document.kind)!.get(document.name) ?? null;
    const named = adapter.nameSchema.safeParse(document.name);
    if (!named.success) {
      errors.push(problemAt(document, [], `name "${document.name}": ${named.error.issues[0]?.message ?? 'not a name of this kind'}`));
      continue;
    }
    if (shared.has(`${document.kind}\u0000${document.name}`)) {
      errors.push(problemAt(document, [], `the organization has more than one ${document.kind} named "${document.name}": rename all but one before it can be kept in Git`));
      continue;
    }
    const checked = await adapter.check(document.spec, { organizationId, names, secrets, current: existing });
    // Secrets are checked wherever a document names one; where its kind's own check said more about that field, its word stands.
    const said = new Set(checked.problems.map((problem) => specPathText(problem.path)));
    const secretProblems = secretReferences(document.spec)
      .filter((reference) => (reference.malformed || !secrets.has(reference.name)) && !said.has(specPathText(reference.path)))
      .map((reference) =>
        reference.malformed
          ? problemAt(document, reference.path, 'is not a secret reference: write ${secret:NAME} (letters, digits, underscore)')
          : problemAt(document, reference.path, `names the secret "${reference.name}", which the organization does not have (PUT /api/v1/secrets/${reference.name})`),
      );
    errors.push(...checked.problems.map((problem) => problemAt(document, problem.path, problem.message)), ...secretProblems);
    if (checked.spec === null || secretProblems.length) continue;
    const owner = existing?.managed_by?.source ?? null;
    if (owner && owner !== request.source) {
      errors.push(problemAt(document, [], `${document.kind} "${document.name}" is managed by another source, "${owner}" (${existing!.managed_by!.path}): remove it there first`));
      continue;
    }
    const entry = { kind: document.kind, name: document.name };
    const id = existing?.id ?? plannedIds.get(`${document.kind}\u0000${document.name}`)!;
    const write = { adapter, ...entry, id, path: document.file, spec: checked.spec, existing };
    if (!existing) {
      plan.create.push({ ...entry, path: document.file });
      writes.push(write);
      continue;
    }
    const changed = canonicalJson(existing.spec) !== canonicalJson(checked.spec);
    const reason = !existing.managed_by ? 'adopted' : driftOf(existing) ? 'drifted' : changed ? 'changed' : existing.managed_by.path !== document.file ? 'moved' : null;
    if (!reason) {
      plan.unchanged.push(entry);
      continue;
    }
    if (reason === 'adopted') warnings.push(problemAt(document, [], `${document.kind} "${document.name}" was made by hand: this apply takes it over (managed by "${request.source}" from then on)`));
    plan.update.push({ ...entry, path: document.file, reason, fields: diffFields(existing.spec, checked.spec) });
    writes.push(write);
  }

  const inFiles = new Set(documents.map((document) => `${document.kind}\u0000${document.name}`));
  const removals: PlannedRemoval[] = [];
  let previous: { at: number; revision: string | null } | null = null;
  for (const adapter of adapters) {
    for (const object of current.get(adapter.kind)!.values()) {
      if (object.managed_by?.source !== request.source) continue;
      const at = object.managed_by.applied_at.getTime();
      if (!previous || at > previous.at) previous = { at, revision: object.managed_by.revision };
      if (driftOf(object)) {
        const forced = object.managed_by.forced_at;
        plan.drift.push({ kind: adapter.kind, name: object.name, path: object.managed_by.path, forced_at: forced ? forced.toISOString() : null, forced_by: object.managed_by.forced_by });
      }
      if (inFiles.has(`${adapter.kind}\u0000${object.name}`)) continue;
      if (!request.prune) {
        warnings.push(inFileOf(object, adapter.kind, `${adapter.kind} "${object.name}" is no longer in the files: apply with prune to delete it`));
        continue;
      }
      const blocker = await adapter.pruneBlocker(organizationId, object.id, names);
      if (blocker) {
        warnings.push(inFileOf(object, adapter.kind, `${adapter.kind} "${object.name}" is not deleted: ${blocker}`));
        continue;
      }
      assertMayChangeKind(principal, adapter.kind, `${adapter.kind} "${object.name}" (prune)`);
      plan.delete.push({ kind: adapter.kind, name: object.name });
      removals.push({ adapter, kind: adapter.kind, name: object.name, id: object.id });
    }
  }
  plan.errors = errors.map(view);
  plan.warnings = warnings.map(view);
  plan.plan_hash = planHash(plan, writes, removals);
  return { view: plan, writes, removals, names, previousRevision: previous?.revision ?? null };
}

/** What an apply bound to this plan must find again: the same changes to the same objects as they are now. */
function planHash(plan: Plan, writes: readonly PlannedWrite[], removals: readonly PlannedRemoval[]): string {
  return sha256(
    canonicalJson({
      source: plan.source,
      revision: plan.revision,
      writes: writes.map((w) => ({ kind: w.kind, name: w.name, path: w.path, spec: w.spec, now: w.existing ? { id: w.id, spec: w.existing.spec, managed_by: w.existing.managed_by } : null })),
      removals: removals.map((r) => ({ kind: r.kind, id: r.id })),
      unchanged: plan.unchanged,
      errors: plan.errors.map((e) => e.text),
    }),
  );
}
