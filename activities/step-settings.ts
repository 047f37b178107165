import { DEFAULT_STEP_LOG_LIMIT_BYTES } from '../src/domain/execution/step-logs';
import type { Logger } from '../src/logger';
import type { SshPool } from '../src/domain/ssh/pool';
import type { SecretBox } from '../src/domain/secrets/secret-box';

/* How a step's command is run and its output kept: from the worker's settings, the same for every attempt. */

/** What every activity that runs a step's command needs: the server's credentials opened, SSH, where output goes. */
export interface StepExecutionDeps {
  secretBox: SecretBox;
  sshPool: SshPool;
  log: Logger;
  /** Per-step output kept for polling: a quarter from the start, the rest from the end. */
  stepOutputLimitBytes: number;
  /** How much of a step's output its whole log keeps (default 64 MiB). */
  stepLogLimitBytes?: number;
  /** How often streamed output is persisted (and so relayed live). */
  outputFlushMs?: number;
}

export interface ExecutionSettings {
  sshPool: SshPool;
  log: Logger;
  headLimit: number;
  tailLimit: number;
  /** How much of a step's output its whole log keeps. */
  logLimitBytes: number;
  outputFlushMs: number;
}

/** Per-step output kept for polling: a quarter of the limit from the start, the rest from the end. */
export function executionSettings({
  stepOutputLimitBytes,
  stepLogLimitBytes = DEFAULT_STEP_LOG_LIMIT_BYTES,
  ...rest
}: Omit<ExecutionSettings, 'headLimit' | 'tailLimit' | 'logLimitBytes'> & { stepOutputLimitBytes: number; stepLogLimitBytes?: number }): ExecutionSettings {
  const headLimit = Math.floor(stepOutputLimitBytes / 4);
  return { ...rest, headLimit, tailLimit: stepOutputLimitBytes - headLimit, logLimitBytes: stepLogLimitBytes };
}
