import { MIGRATION_INTENTS } from './migration-intents';
import { PATH, trimSentenceEnd } from './phrases';
import type { PlanContext, PlannedStep, Planner, PlanResult, ServerContext, StepTarget } from './types';

import { SERVICE_WORDS, timeWindow, type Memory } from './clause';
import { INTENTS } from './intents';

/** Splits a sentence into clauses, one request each: "restart nginx and show its status". */
export const clauses = (sentence: string) =>
  sentence
    .split(/\s*(?:[;\n]|,\s*(?:and\s+)?(?:then\s+)?|\band\s+then\b|\bthen\b|\band\s+also\b|\balso\b|\band\b(?!\s+restore\b)|\bafterwards\b)\s*/i)
    .map((c) => c.trim().replace(/[.!?]+$/, ''))
    .filter((c) => c.length > 0 && !/^(?:please|thanks?|thank you|ok|okay)$/i.test(c));

/** "on the source", "on the target", "on both": where a migration plan's step runs (the target by default). */
function targetsOf(clause: string, context: PlanContext): StepTarget[] {
  if (context.kind === 'server') return ['server'];
  if (/\b(?:on|from|at)\s+both\b|\bboth\s+servers\b|\beach\s+server\b/i.test(clause)) return ['source', 'target'];
  if (/\b(?:on|from|at|of)\s+(?:the\s+)?(?:source|old)\b/i.test(clause)) return ['source'];
  return ['target'];
}

const serverFor = (target: StepTarget, context: PlanContext): ServerContext =>
  context.kind === 'server' ? context.server : target === 'source' ? context.source : context.target;

/** What the built-in planner understands, for the message when a sentence is not among it. */
export const CATALOGUE = [...INTENTS, ...MIGRATION_INTENTS].map((i) => ({ id: i.id, label: i.label, risk: i.risk }));

/**
 * The built-in planner: no network, a catalogue of common operations matched clause by clause,
 * with names, paths, ports and URLs taken from the sentence (each quoted for the shell) and
 * commands adapted to the server's OS family.
 */
export class RulesPlanner implements Planner {
  readonly name = 'rules';

  async plan(instruction: string, context: PlanContext): Promise<PlanResult> {
    const steps: PlannedStep[] = [];
    const memory: Memory = { service: null, path: null };
    for (const clause of clauses(instruction)) {
      const migration = MIGRATION_INTENTS.find((i) => i.pattern.test(clause));
      if (migration) {
        const built = context.kind === 'migration_plan' ? migration.build(clause.match(migration.pattern)!, context) : null;
        if (!built) return { ok: false, reason: unplannable(clause, context.kind === 'server' ? `"${migration.label}" needs a migration plan (a conversation about its two servers).` : null) };
        steps.push({ ...built, title: `${built.title}${unused(clause, built, context.kind === 'migration_plan' ? context.target : context.server)}`, target: 'target', risk: migration.risk });
        continue;
      }
      const intent = INTENTS.find((i) => i.pattern.test(clause));
      const match = intent && clause.match(intent.pattern);
      const targets = targetsOf(clause, context);
      // Asked to destroy something no intent names exactly: refused for what it is, never planned as something else.
      if ((!intent || intent.risk !== 'destructive') && DESTRUCTIVE_VERB.test(clause)) return { ok: false, reason: refusedDestructive(clause), risk: 'destructive' };
      const built = intent && match ? targets.map((target) => ({ target, step: intent.build(match, serverFor(target, context), memory, clause) })) : [];
      if (!intent || built.some((b) => b.step === null)) return { ok: false, reason: unplannable(clause) };
      for (const { target, step } of built) {
        // "uptime and load" is one request said twice.
        if (steps.some((s) => s.command === step!.command && s.target === target)) continue;
        const where = context.kind === 'migration_plan' ? ` on the ${target}` : '';
        steps.push({ title: `${step!.title}${where}${unused(clause, step!, serverFor(target, context))}`, command: step!.command, target, risk: intent.risk });
      }
    }
    if (!steps.length) return { ok: false, reason: unplannable(instruction) };
    return { ok: true, steps };
  }
}

/** Words that ask to destroy something: never read as another request ("delete the nginx logs" is not "show the nginx logs"). */
const DESTRUCTIVE_VERB = /\b(?:delete|erase|wipe|destroy|truncate|shred|purge|format|drop|rm)\b/i;

function refusedDestructive(clause: string): string {
  return [
    `Refused as destructive: "${clause}" asks to delete or destroy something, and the built-in planner plans that only for a path it can name exactly ("delete /var/log/old.log", "delete everything in /tmp/build"), which the organization's command policy then judges.`,
    'It never guesses at a destructive command. Name the path, or configure an LLM planner (LLM_BASE_URL, LLM_API_KEY and LLM_MODEL; see docs/conversations.md).',
  ].join('\n');
}

function unplannable(clause: string, why: string | null = null): string {
  return [
    `Not understood: the built-in planner could not turn "${clause}" into a command.${why ? ` ${why}` : ''}`,
    `It understands ${CATALOGUE.length} operations: ${INTENTS.map((i) => i.label).join(', ')}; and for migration plans: ${MIGRATION_INTENTS.map((i) => i.label).join(', ')}.`,
    'Rephrase the instruction, or configure an LLM planner (LLM_BASE_URL, LLM_API_KEY and LLM_MODEL; see docs/conversations.md).',
  ].join('\n');
}

/** Words after "of", "for", "named"... that name nothing a command could use ("the status of the server", "for me"). */
const NOT_NAMES = new Set([
  ...SERVICE_WORDS, 'me', 'us', 'you', 'my', 'our', 'your', 'last', 'past', 'next', 'whole', 'entire', 'every', 'each', 'now', 'today', 'yesterday',
  'host', 'box', 'user', 'users', 'process', 'processes', 'directory', 'folder', 'file', 'files', 'disk', 'disks', 'usage', 'memory', 'ram', 'cpu',
  'source', 'target', 'both', 'old', 'new', 'real', 'example', 'errors', 'error', 'minutes', 'hours', 'days', 'details', 'info', 'information', 'these', 'those',
]);

/**
 * A number, a path, a time window or a name of the clause that the step does not use (neither its
 * command nor its title mentions it): said in the title, so a person sees the step does not do what
 * was asked ("uptime of web-2" run on web-1, "containers named web", "ping 127.0.0.1 10 times").
 */
function unused(clause: string, step: { title: string; command: string }, server: ServerContext): string {
  const said = `${step.title} ${step.command}`.toLowerCase();
  const pathPattern = new RegExp(PATH, 'g');
  const paths = [...clause.matchAll(pathPattern)].map((m) => trimSentenceEnd(m[1]!)).filter((p) => p.length > 1);
  const rest = clause.replace(pathPattern, ' ').replace(/\bhttps?:\/\/\S+/gi, ' ');
  const window = timeWindow(rest);
  const withoutWindow = window ? rest.replace(window.said, ' ') : rest;
  // Whole numbers and dotted addresses, not the digits inside a name such as web-2.
  const numbers = [...withoutWindow.matchAll(/(?<![\w.@-])(\d+(?:\.\d+)*)(?![\w@-]|\.\w)/g)].map((m) => m[1]!);
  const names = [...withoutWindow.matchAll(/\b(?:of|for|named|called|matching|as|to|on)\s+(?:the\s+)?(?:user\s+|service\s+|interface\s+|host\s+|server\s+)?([a-z0-9][a-z0-9@._-]*)/gi)]
    .map((m) => m[1]!)
    .filter((name) => !NOT_NAMES.has(name.toLowerCase()) && !/^\d+(?:\.\d+)*$/.test(name) && name.toLowerCase() !== server.title.toLowerCase());
  // Said as a whole: "3" is not said by "8443", nor "/var" by "/var/log".
  const mentions = (value: string) => new RegExp(`(?<![\\w.-])${value.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w/-]|\\.\\w)`).test(said);
  const dropped = [...new Set([...paths, ...(window ? [window.said] : []), ...numbers, ...names])].filter((value) => !mentions(value));
  return dropped.length ? ` (this command does not use ${dropped.map((v) => `"${v}"`).join(', ')})` : '';
}
