import type { Memory } from './clause';
import type { Risk, ServerContext } from './types';

/* What one intent of the built-in planner is: a kind of request, the pattern it is said with, and how its step is built. */

/** A planned step's title and command. */
export interface IntentStep {
  title: string;
  command: string;
}

/** The step for a matching clause (the whole clause too: counts such as "top 5" live anywhere in it), or null when it cannot be planned. */
export type StepBuilder = (match: RegExpMatchArray, server: ServerContext, memory: Memory, clause: string) => IntentStep | null;

export interface Intent {
  id: string;
  /** What it is for, listed when a sentence cannot be planned. */
  label: string;
  risk: Risk;
  pattern: RegExp;
  build: StepBuilder;
}

/** A step that is the same whatever the clause says. */
export const always =
  (title: string, command: string): StepBuilder =>
  () => ({ title, command });
