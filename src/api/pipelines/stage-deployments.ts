import { Types } from 'mongoose';
import { DeploymentModel, type Deployment } from '../../domain/deployments/model';
import { wholeValuePattern } from '../../domain/deployments/parameters';
import { referencesIn, substitute } from '../../domain/pipelines/expressions';
import type { Principal } from '../../domain/tokens/service';
import { readableDeploymentFilter } from '../access/gate';
import type { ErrorDetail } from '../http/errors';
import type { LooseStage, OutputReference } from './definition-checks';

/*
 * The checks of a pipeline's stages against their deployments: each names a deployment of the
 * organization the caller may read, gives only parameters it declares, every required one, and
 * no secret in clear; and the warnings about outputs no step of a deployment seems to write.
 */

export type StageDeploymentDoc = Pick<Deployment, '_id' | 'name' | 'organization_id' | 'server_id' | 'targets' | 'parameters' | 'steps'>;

/** The deployments the stages name (by id or by name) that the caller may read, by the reference as given. */
export async function deploymentsNamed(principal: Principal, references: readonly string[]): Promise<Map<string, StageDeploymentDoc>> {
  const given = [...new Set(references.filter(Boolean))];
  if (!given.length) return new Map();
  const ids = given.filter((r) => /^[0-9a-f]{24}$/i.test(r)).map((r) => new Types.ObjectId(r));
  const found = await DeploymentModel.find(
    { $and: [await readableDeploymentFilter(principal), { $or: [{ _id: { $in: ids } }, { name: { $in: given } }] }] },
    { name: 1, organization_id: 1, server_id: 1, targets: 1, parameters: 1, steps: 1 },
  ).lean<StageDeploymentDoc[]>();
  const byId = new Map(found.map((d) => [d._id.toString(), d]));
  const byName = new Map(found.map((d) => [d.name, d]));
  // An id names its deployment before a deployment named like an id.
  return new Map(given.flatMap((r) => {
    const deployment = byId.get(r.toLowerCase()) ?? byName.get(r);
    return deployment ? [[r, deployment] as const] : [];
  }));
}

/** Text in a value beyond its expressions (a secret parameter takes none: it would be stored in clear). */
const literalPart = (value: string) => (referencesIn(value).problems.length ? value : substitute(value, () => '')).trim();

/** The problems of one stage (at `index`) against its deployment. */
export function checkStageDeployment(stage: LooseStage, index: number, deployment: StageDeploymentDoc | undefined): ErrorDetail[] {
  const named = `stage "${stage.name}"`;
  if (!deployment) return stage.deployment ? [{ path: `stages.${index}.deployment`, message: `${named}: no deployment "${stage.deployment}" in this organization` }] : [];
  const problems: ErrorDetail[] = [];
  const declared = new Map((deployment.parameters ?? []).map((p) => [p.name, p]));
  for (const [name, value] of Object.entries(stage.parameters)) {
    const path = `stages.${index}.parameters.${name}`;
    const definition = declared.get(name);
    if (!definition) {
      const names = [...declared.keys()].map((n) => `"${n}"`).join(', ');
      problems.push({ path, message: `${named}: deployment "${deployment.name}" has no parameter "${name}" (it declares ${names || 'none'})` });
    } else if (value !== null && definition.secret && literalPart(value) !== '') {
      problems.push({ path, message: `${named}: "${name}" is a secret parameter of deployment "${deployment.name}": give it by an expression (\${{ pipeline.parameters.NAME }}), never stored in the definition` });
    } else if (value !== null && definition.pattern && !referencesIn(value).references.length && !(wholeValuePattern(definition.pattern)?.test(value) ?? true)) {
      problems.push({ path, message: `${named}: the value of "${name}" does not match the pattern ${definition.pattern} of deployment "${deployment.name}"` });
    }
  }
  for (const definition of deployment.parameters ?? []) {
    if (definition.required && definition.default == null && !Object.hasOwn(stage.parameters, definition.name)) {
      problems.push({ path: `stages.${index}.parameters`, message: `${named}: deployment "${deployment.name}" requires parameter "${definition.name}", which is not set` });
    }
  }
  return problems;
}

/**
 * An output read from a stage whose deployment has no step mentioning both BOSUN_OUTPUT and its
 * name: likely a mistake, but only a run knows what a command writes (a missing output fails the
 * stage that reads it then).
 */
export function outputWarnings(outputs: readonly OutputReference[], stages: readonly (LooseStage | null)[], deploymentOf: (stage: LooseStage) => StageDeploymentDoc | undefined): ErrorDetail[] {
  return outputs.flatMap(({ path, reader, source, name }) => {
    const stage = stages[source]!;
    const deployment = deploymentOf(stage);
    if (!deployment || deployment.steps.some((step) => step.command.includes('BOSUN_OUTPUT') && step.command.includes(name))) return [];
    return [{
      path,
      message: `stage "${reader}": no step of deployment "${deployment.name}" (stage "${stage.name}") mentions both BOSUN_OUTPUT and "${name}": the output is looked for when the pipeline runs, and a missing one fails this stage`,
    }];
  });
}
