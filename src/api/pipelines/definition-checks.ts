import { z } from 'zod';
import { describeReference, referencesIn } from '../../domain/pipelines/expressions';
import type { ErrorDetail } from '../http/errors';

/*
 * The checks of a pipeline's definition that need its stages together: names, `needs` (known,
 * defined above, no cycle), `when`, and each expression against the pipeline's parameters and the
 * stages upstream. They read the definition leniently (what its schema refuses is reported by the
 * schema), so one answer names every problem at once.
 */

const loose = <T extends z.ZodType>(schema: T, fallback: z.infer<T>) => schema.catch(fallback as never);

const looseStage = z.object({
  name: loose(z.string(), ''),
  deployment: loose(z.string().trim(), ''),
  needs: loose(z.array(loose(z.string().nullable(), null)), []),
  when: loose(z.string(), 'success'),
  parameters: loose(z.record(z.string(), loose(z.string().nullable(), null)), {}),
});

/** A definition as far as it can be read: a stage or a field the schema refuses counts as absent. */
export const looseDefinitionSchema = loose(
  z.object({
    parameters: loose(z.array(loose(z.object({ name: z.string() }).nullable(), null)), []),
    stages: loose(z.array(loose(looseStage.nullable(), null)), []),
  }),
  { parameters: [], stages: [] },
);

export type LooseDefinition = z.infer<typeof looseDefinitionSchema>;
export type LooseStage = NonNullable<LooseDefinition['stages'][number]>;

/** An expression reading a stage's output, for the warnings (an output is known only when a run writes it). */
export interface OutputReference {
  path: string;
  /** The stage that reads it, and the stage (by index) whose output it reads. */
  reader: string;
  source: number;
  name: string;
}

const quoted = (names: Iterable<string>) => [...names].map((n) => `"${n}"`).join(', ');

/** The problems of a definition's stages together, and the outputs its expressions read. */
export function checkStages(definition: LooseDefinition): { problems: ErrorDetail[]; outputs: OutputReference[] } {
  const problems: ErrorDetail[] = [];
  const stages = definition.stages;
  const indexOf = new Map<string, number>();
  stages.forEach((stage, i) => {
    if (!stage || !stage.name) return;
    const first = indexOf.get(stage.name);
    if (first === undefined) indexOf.set(stage.name, i);
    else problems.push({ path: `stages.${i}.name`, message: `stage "${stage.name}": stages.${first} has this name too: stage names are unique` });
  });
  const needsOf = (i: number) => (stages[i]?.needs ?? []).flatMap((name) => (name !== null && indexOf.has(name) ? [indexOf.get(name)!] : []));

  stages.forEach((stage, i) => {
    if (!stage) return;
    stage.needs.forEach((need, j) => {
      if (need === null) return;
      const at = { path: `stages.${i}.needs.${j}` };
      const k = indexOf.get(need);
      if (k === undefined) problems.push({ ...at, message: `stage "${stage.name}": needs "${need}", which is no stage of this pipeline` });
      else if (k === i) problems.push({ ...at, message: `stage "${stage.name}": needs itself (a cycle ${stage.name} → ${stage.name})` });
      else if (k > i) {
        const loop = pathBetween(k, i, needsOf);
        problems.push({
          ...at,
          message: loop
            ? `stage "${stage.name}": needs "${need}", which needs it back: a cycle ${[i, ...loop].map((s) => stages[s]!.name).join(' → ')}`
            : `stage "${stage.name}": needs "${need}", which is defined later: a stage needs only stages above it`,
        });
      }
    });
    if (stage.when === 'failure' && stage.needs.length === 0) {
      problems.push({ path: `stages.${i}.when`, message: `stage "${stage.name}": when "failure" runs after a stage it needs failed, and it needs none` });
    }
  });

  const declared = new Set(definition.parameters.flatMap((p) => (p ? [p.name] : [])));
  const outputs: OutputReference[] = [];
  stages.forEach((stage, i) => {
    if (!stage) return;
    const upstream = reachable(i, needsOf);
    for (const [parameter, value] of Object.entries(stage.parameters)) {
      if (value === null) continue;
      const path = `stages.${i}.parameters.${parameter}`;
      const { references, problems: unknown } = referencesIn(value);
      for (const problem of unknown) problems.push({ path, message: `stage "${stage.name}": ${problem.message}` });
      for (const reference of references) {
        const expression = `\${{ ${describeReference(reference)} }}`;
        if (reference.kind === 'parameter') {
          if (!declared.has(reference.name)) problems.push({ path, message: `stage "${stage.name}": ${expression} names no parameter of the pipeline (it declares ${declared.size ? quoted(declared) : 'none'})` });
          continue;
        }
        const source = indexOf.get(reference.stage);
        if (source === undefined) problems.push({ path, message: `stage "${stage.name}": ${expression} names no stage of this pipeline` });
        else if (source === i) problems.push({ path, message: `stage "${stage.name}": ${expression} reads this stage’s own output: a stage reads the outputs of the stages it needs` });
        else if (!upstream.has(source)) problems.push({ path, message: `stage "${stage.name}": ${expression} reads stage "${reference.stage}", which this stage does not need (directly or through its needs): add it to needs` });
        else outputs.push({ path, reader: stage.name, source, name: reference.name });
      }
    }
  });
  return { problems, outputs };
}

/** The stages `from` needs, directly or through its needs. */
function reachable(from: number, needsOf: (i: number) => number[]): Set<number> {
  const seen = new Set<number>();
  const walk = (i: number) => {
    for (const next of needsOf(i)) {
      if (seen.has(next)) continue;
      seen.add(next);
      walk(next);
    }
  };
  walk(from);
  return seen;
}

/** The stages from `from` to `to` following needs (both ends included), or null when `to` is not reached. */
function pathBetween(from: number, to: number, needsOf: (i: number) => number[]): number[] | null {
  const cameFrom = new Map<number, number>([[from, from]]);
  const queue = [from];
  while (queue.length) {
    const at = queue.shift()!;
    if (at === to) {
      const path = [to];
      while (path[0] !== from) path.unshift(cameFrom.get(path[0]!)!);
      return path;
    }
    for (const next of needsOf(at)) {
      if (!cameFrom.has(next)) {
        cameFrom.set(next, at);
        queue.push(next);
      }
    }
  }
  return null;
}
