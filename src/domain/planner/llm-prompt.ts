import { MAX_PLANNED_STEPS } from './llm-reply';
import type { PlanContext, PlannedStep, ServerContext, StepReport } from './types';

/** Each step's log is cut to its end before it goes into a re-planning request. */
const LOG_TAIL_CHARS = 2000;

const JOB = `You are the planner of Bosun, an operations assistant. You turn a person's instruction about their servers into shell steps that Bosun runs over SSH.

How steps run:
- Each step is one command line, run by sh as the server's login user, non-interactively: no terminal and no input. Never use editors, pagers or anything that prompts; pass the flags that avoid them (-y, --no-pager, --batch...).
- When a command needs root and the login user is not root, prefix it with "sudo -n" (it fails instead of asking for a password). When the login user is root, do not use sudo.
- One command per step. Join commands with && or a pipe only when they belong together.
- Steps run in order; a failed step stops the ones after it.
- Prefer read-only commands. Change only what the instruction asks for.
- "risk" of a step: "read" (only looks), "change" (changes the system: services, packages, files), "destructive" (deletes data, takes the server or its network down). Bosun's command policy judges every command again and may refuse it or hold it for a person's approval.
- "title": a few words in plain English saying what the step does.
- At most ${MAX_PLANNED_STEPS} steps.`;

const ANSWER = `Answer with one JSON object and nothing else:
{"steps":[{"title":"...","command":"...","target":"...","risk":"read","transfer":null}],"cannot_plan":null}
or, when the instruction cannot be done safely with shell commands on these servers:
{"steps":null,"cannot_plan":"the reason, in one sentence"}`;

const TRANSFERS = `A step can also move data from the source to the target, streamed through Bosun (the two servers need not reach each other). Such a step has target "target", command "" and one of these transfers:
- {"kind":"copy","from":"/dir/on/source","to":"/dir/on/target"}: copies a directory tree (resumable).
- {"kind":"pipe","source_command":"...","target_command":"..."}: the source command's output becomes the target command's input (a database dump into a restore).
- {"kind":"compare","source_command":"...","target_command":"..."}: compares the two commands' outputs (to verify a migration).
Every other step has "transfer": null.`;

function describeServer(server: ServerContext): string {
  const os = server.os?.name ? [server.os.name, server.os.version].filter(Boolean).join(' ') : 'unknown (check before using a package manager)';
  const kernel = server.os?.kernel ? `, kernel ${server.os.kernel}` : '';
  const login = server.username === 'root' ? 'root' : `${server.username} (not root)`;
  return `"${server.title}": login user ${login}, OS ${os}${kernel}`;
}

function describeContext(context: PlanContext): string {
  if (context.kind === 'server') {
    return `The server: ${describeServer(context.server)}.\nEvery step has target "server" and "transfer": null.`;
  }
  return [
    `A migration plan: "${context.title}".`,
    `Its notes: ${context.notes.trim() || '(none)'}`,
    `The source server: ${describeServer(context.source)}.`,
    `The target server: ${describeServer(context.target)}.`,
    'Each step runs where its target says: "source" or "target".',
    TRANSFERS,
  ].join('\n');
}

/** The system message: the job, the servers, the answer's shape. */
export const systemPrompt = (context: PlanContext) => `${JOB}\n\n${describeContext(context)}\n\n${ANSWER}`;

const tail = (log: string) => (log.length > LOG_TAIL_CHARS ? `…${log.slice(-LOG_TAIL_CHARS)}` : log);

/** What ran for the instruction, as the model is told before it re-plans. */
export function historyMessage(history: StepReport[]): string {
  const steps = history.map((step, i) =>
    [`${i + 1}. [${step.status}] ${step.title} (on ${step.target}): ${step.command}`, '   Its log ends:', tail(step.log.trimEnd()) || '(no output)'].join('\n'),
  );
  return [
    'Bosun ran these steps for the instruction:',
    ...steps,
    '',
    'The last step failed. Give the steps to run instead of the rest of the plan (do not repeat the completed steps unless they must run again), or answer cannot_plan to stop if the failure cannot be worked around safely.',
  ].join('\n');
}

export const malformedMessage = (problem: string) =>
  `Bosun could not use your answer: ${problem}\nAnswer again with one JSON object of the shape described, and nothing else.`;

export const refusedMessage = (refused: Array<{ index: number; step: PlannedStep; reason: string }>) =>
  [
    ...refused.map(({ index, step, reason }) => `Step ${index + 1} ("${step.title}": ${step.command}) is refused. ${reason}`),
    'Propose a safe alternative that does what the instruction needs without it, or answer cannot_plan if it cannot be done safely.',
  ].join('\n');
