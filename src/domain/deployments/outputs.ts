import { Types } from 'mongoose';
import { DeploymentRunModel, type DeploymentRun } from './model';

/*
 * A run's outputs, as its steps recorded them from $BOSUN_OUTPUT (values redacted already): a
 * one-server run's are its steps', a later step's value winning; a fleet run's are the values every
 * target gave the same, and the names they disagree on are conflicts.
 */

type StepsWithOutputs = { steps: ReadonlyArray<{ outputs?: ReadonlyArray<{ name: string; value: string }> | null }> };

/** The outputs of a run (or a fleet run's target) by name, in the order first recorded; a later step's value wins. */
export function outputsOf(run: StepsWithOutputs): Map<string, string> {
  const values = new Map<string, string>();
  for (const step of run.steps) for (const { name, value } of step.outputs ?? []) values.set(name, value);
  return values;
}

/** A fleet run's target as its outputs are compared. */
export interface TargetOutputs {
  serverId: string;
  title: string;
  outputs: Map<string, string>;
}

/** A name a fleet run's targets disagree on: what each gave (null: none). */
export interface OutputConflict {
  name: string;
  targets: Array<{ serverId: string; title: string; value: string | null }>;
}

/** The names every target gave the same value (agreed), and the others with what each target gave. */
export function fleetOutputs(targets: TargetOutputs[]): { agreed: Map<string, string>; conflicts: OutputConflict[] } {
  const names = new Set(targets.flatMap((target) => [...target.outputs.keys()]));
  const agreed = new Map<string, string>();
  const conflicts: OutputConflict[] = [];
  for (const name of names) {
    const given = targets.map((target) => ({ serverId: target.serverId, title: target.title, value: target.outputs.get(name) ?? null }));
    const first = given[0]!.value;
    if (first !== null && given.every((target) => target.value === first)) agreed.set(name, first);
    else conflicts.push({ name, targets: given });
  }
  return { agreed, conflicts };
}

const SHOWN_TARGETS = 10;
const SHOWN_VALUE_CHARACTERS = 60;

/** `web-1 gave "a", web-2 gave "b", web-3 gave none` (values cut short, at most SHOWN_TARGETS targets named). */
export function conflictMessage(conflict: OutputConflict): string {
  const shown = conflict.targets.slice(0, SHOWN_TARGETS).map(({ title, value }) => {
    if (value === null) return `${title} gave none`;
    const cut = value.length > SHOWN_VALUE_CHARACTERS ? `${value.slice(0, SHOWN_VALUE_CHARACTERS)}…` : value;
    return `${title} gave ${JSON.stringify(cut)}`;
  });
  const more = conflict.targets.length - SHOWN_TARGETS;
  return more > 0 ? `${shown.join(', ')} and ${more} more targets` : shown.join(', ');
}

/** A fleet run's targets (server, title, steps' outputs alone), in batch order. */
async function targetOutputs(runId: Types.ObjectId): Promise<TargetOutputs[]> {
  const targets = await DeploymentRunModel.find({ parent_run_id: runId }, { server_id: 1, server_title: 1, 'steps.outputs': 1 })
    .sort({ batch: 1, _id: 1 })
    .lean<Array<Pick<DeploymentRun, '_id' | 'server_id' | 'server_title' | 'steps'>>>();
  return targets.map(targetOutputsOf);
}

export const targetOutputsOf = (target: Pick<DeploymentRun, 'server_id' | 'server_title' | 'steps'>): TargetOutputs => ({
  serverId: String(target.server_id),
  title: target.server_title ?? String(target.server_id),
  outputs: outputsOf(target),
});

/**
 * A run's outputs, for a pipeline's next stages: a one-server run's, or the values a fleet run's
 * targets agree on; `conflicts` says, by name, which targets disagree and what each gave.
 */
export async function runOutputs(runId: string): Promise<{ values: Record<string, string>; conflicts: Record<string, string> }> {
  const run = await DeploymentRunModel.findById(runId, { fleet: 1, 'steps.outputs': 1 }).lean<Pick<DeploymentRun, '_id' | 'fleet' | 'steps'>>();
  if (!run) return { values: {}, conflicts: {} };
  if (!run.fleet) return { values: Object.fromEntries(outputsOf(run)), conflicts: {} };
  const { agreed, conflicts } = fleetOutputs(await targetOutputs(run._id));
  return { values: Object.fromEntries(agreed), conflicts: Object.fromEntries(conflicts.map((conflict) => [conflict.name, conflictMessage(conflict)])) };
}
