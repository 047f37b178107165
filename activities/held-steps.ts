import type { StepAttempt } from '../src/domain/contracts/runs';
import type { StepExecution } from './step-execution';

/** How long a handed-off command that finished stays claimable by `awaitStep`. */
const HELD_STEP_GRACE_MS = 5 * 60_000;

const keyOf = ({ runId, index, exitAttempt }: StepAttempt) => `${runId}:${index}:${exitAttempt}`;

/**
 * Commands a step's local activity (`startStep`) started and handed off, still running on this
 * worker's SSH channels, until the activity that follows them (`awaitStep`) claims them.
 */
export class HeldSteps {
  private readonly held = new Map<string, StepExecution>();

  /** Keeps a handed-off command for its follower. Nobody comes for it (the workflow went another way): it still finishes and records its result, and is forgotten a while after. */
  hold(attempt: StepAttempt, execution: StepExecution): void {
    const key = keyOf(attempt);
    this.held.set(key, execution);
    // Only this execution is forgotten: a later one under the same key (a replayed attempt) stays.
    const forget = () => {
      if (this.held.get(key) === execution) this.held.delete(key);
    };
    void execution.result.catch(() => undefined).finally(() => setTimeout(forget, HELD_STEP_GRACE_MS).unref());
  }

  /** The held command of this attempt, now the caller's; undefined when this worker does not hold it (it restarted). */
  claim(attempt: StepAttempt): StepExecution | undefined {
    const key = keyOf(attempt);
    const execution = this.held.get(key);
    this.held.delete(key);
    return execution;
  }

  /**
   * Stops every command of the run this worker holds as a cancel does (its note written and its kill
   * in the trail, while its step is still open): a cancel that came after its hand-off and before any
   * follower claimed it. Resolves once each has ended.
   */
  async cancelRun(runId: string): Promise<void> {
    const claimed = [...this.held].filter(([key]) => key.startsWith(`${runId}:`));
    for (const [key] of claimed) this.held.delete(key);
    await Promise.all(claimed.map(([, execution]) => {
      execution.cancel();
      return execution.result.catch(() => undefined);
    }));
  }
}
