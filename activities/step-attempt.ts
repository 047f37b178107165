import type { SshTarget } from '../src/domain/ssh/connect';
import type { StepAttempt } from '../src/domain/contracts/runs';
import type { AttemptResult, StepTransitions } from '../src/domain/execution/steps';
import type { CommandContext, CommandRecorder } from '../src/domain/audit/commands';
import type { ExecutionSettings } from './step-settings';
import type { StepLog } from './step-log';
import type { AttemptStartWrite } from './step-start-write';
import type { CommandStop } from './step-stop';

/* A step's command and one attempt of it, as the phases of step-execution.ts share them. */

/** The step fields an execution reads; a deployment run's and a conversation's steps both have them. */
export interface ExecutableStep {
  command: string;
  output?: string | null;
  streamed?: number | null;
  retries?: number | null;
  attempts?: number | null;
  started_exit_attempt?: number | null;
  started_at?: Date | null;
  pgid?: number | null;
}

/** What ran the command, as its audit entry says: a run's or a conversation's step. */
export type StepAudit = Pick<CommandContext, 'kind' | 'stepId' | 'stepName'>;

/** A step's command to run, and where its results go. */
export interface StepCommand {
  attempt: StepAttempt;
  step: ExecutableStep;
  target: SshTarget;
  /** Exported to the command (a deployment's parameters). */
  environment?: Record<string, string>;
  secrets: string[];
  limitSeconds: number;
  /** The step's document (a run, a conversation), written only through its transitions. */
  steps: StepTransitions;
  /**
   * What the step's success ends with it (a run's last step ends the run): the transition that
   * writes that success instead of `finishAttempt` (one write), answering with what follows once it
   * is written (`endedRun` in the result), or null when it was not.
   */
  successEnds?: { finish: (index: number, result: AttemptResult) => Promise<(() => Promise<void>) | null> };
  /** Give the command BOSUN_OUTPUT and record what it wrote there (a deployment run's step), against the names earlier steps of the run recorded. */
  outputs?: { earlierNames: string[] };
  /** End a failed step's output with the exit code (a conversation's execution log holds the failure details). */
  failureNote?: boolean;
  audit: StepAudit;
}

/** An attempt as its phases share it. */
export interface RunningAttempt {
  settings: ExecutionSettings;
  input: StepCommand;
  stepLog: StepLog;
  start: AttemptStartWrite;
  recorder: CommandRecorder;
  stop: CommandStop;
}
