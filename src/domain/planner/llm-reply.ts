import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { transferCommand } from './transfer';
import { RISKS, type PlanContext, type PlannedStep } from './types';

export const MAX_PLANNED_STEPS = 30;

// No length keywords: strict structured outputs may reject them; emptiness is checked after parsing.
const text = z.string().trim();
const transferSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('copy'), from: text, to: text }),
  z.strictObject({ kind: z.literal('pipe'), source_command: text, target_command: text }),
  z.strictObject({ kind: z.literal('compare'), source_command: text, target_command: text }),
]);
const stepSchema = z.strictObject({
  title: text,
  // Empty for a transfer: Bosun writes that line itself.
  command: text,
  target: z.enum(['server', 'source', 'target']),
  risk: z.enum(RISKS),
  transfer: transferSchema.nullish(),
});
// nullish: the JSON schema requires each key (strict mode wants them all) as null, but a model without structured output may leave it out.
const replySchema = z.strictObject({
  steps: z.array(stepSchema).max(MAX_PLANNED_STEPS).nullish(),
  cannot_plan: text.nullish(),
});

/** The `response_format` of every request: the reply schema as a strict JSON schema. */
export const PLAN_RESPONSE_FORMAT = zodResponseFormat(replySchema, 'bosun_plan');

export type Reply = { kind: 'steps'; steps: PlannedStep[] } | { kind: 'cannot_plan'; reason: string } | { kind: 'malformed'; problem: string };

const pathOf = (path: PropertyKey[]) => path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '');

/** The model's answer read, checked against the schema and against what the context allows. */
export function readReply(content: string | null | undefined, context: PlanContext): Reply {
  if (!content?.trim()) return { kind: 'malformed', problem: 'the answer was empty.' };
  // Models without structured output often fence their JSON.
  const json = content.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, '$1');
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return { kind: 'malformed', problem: 'the answer was not a JSON object.' };
  }
  const parsed = replySchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${pathOf(issue.path) || 'the answer'}: ${issue.message}`);
    return { kind: 'malformed', problem: `the JSON does not match the schema (${issues.join('; ')}).` };
  }
  const { steps, cannot_plan: cannotPlan } = parsed.data;
  if (cannotPlan && steps?.length) return { kind: 'malformed', problem: 'it gave both steps and cannot_plan; give one of them.' };
  if (cannotPlan) return { kind: 'cannot_plan', reason: cannotPlan };
  if (!steps?.length) return { kind: 'malformed', problem: 'it gave no steps and no cannot_plan reason.' };
  const problems = steps.flatMap((step, i) => stepProblems(step, context).map((p) => `steps[${i}] ("${step.title}"): ${p}`));
  if (problems.length) return { kind: 'malformed', problem: `${problems.join('; ')}.` };
  return {
    kind: 'steps',
    steps: steps.map(({ transfer, ...step }) =>
      // A transfer's line is always Bosun's own: the model cannot describe it as something milder than it is.
      transfer ? { ...step, command: transferCommand(transfer), transfer } : step,
    ),
  };
}

function stepProblems(step: z.infer<typeof stepSchema>, context: PlanContext): string[] {
  const problems: string[] = [];
  if (context.kind === 'server') {
    if (step.target !== 'server') problems.push(`target must be "server" (this conversation is about one server), not "${step.target}"`);
    if (step.transfer) problems.push('transfer is only for migration plans; use null');
  } else {
    if (step.target === 'server') problems.push('target must be "source" or "target" in a migration plan, not "server"');
    if (step.transfer && step.target !== 'target') problems.push('a transfer\'s target must be "target"');
  }
  if (!step.title) problems.push('title is empty');
  if (!step.transfer && !step.command) problems.push('command is empty');
  for (const [field, value] of Object.entries(step.transfer ?? {})) if (!value) problems.push(`transfer.${field} is empty`);
  return problems;
}
