import { sshBestEffort, type CommandRecorder } from '../src/domain/audit/commands';
import type { SshTarget } from '../src/domain/ssh/connect';
import { killProcessGroup } from '../src/domain/ssh/exec';
import type { ExecutionSettings } from './step-settings';

/** Why a step's command was stopped before it ended by itself. */
export type StopReason = 'timeout' | 'cancel' | 'shutdown';

/**
 * How a step's running command is stopped: past its time limit, cancelled, or handed back when the
 * worker shuts down. Each kill of its process group is in the trail through the attempt's recorder;
 * a kill is best effort over SSH, but one the trail could not record fails the attempt.
 */
export class CommandStop {
  /** The first reason it was asked to stop, if any. */
  reason: StopReason | null = null;
  private pgid: number | null = null;
  private over = false;
  /** Each kill's end: null, or the trail's failure to record it. */
  private readonly kills: Array<Promise<unknown>> = [];

  constructor(
    private readonly settings: ExecutionSettings,
    private readonly target: SshTarget,
    private readonly recorder: CommandRecorder,
    private readonly where: { runId: string; index: number },
  ) {}

  /** The command's process group is known: a stop asked before it kills the group now. */
  started(pgid: number): void {
    this.pgid = pgid;
    if (this.reason) this.kill();
  }

  /** Stops the command (its process group killed once known); the first reason stands. */
  ask(reason: StopReason): void {
    this.reason ??= reason;
    this.kill();
  }

  /** An earlier attempt's command (its worker died) stopped before this one starts. */
  earlier(pgid: number): Promise<void> {
    return this.settings.sshPool.withConnection(this.target, (ssh) => killProcessGroup(ssh, pgid, 1, this.recorder));
  }

  /** The command ended: nothing of it is left to kill. */
  ended(): void {
    this.over = true;
  }

  /** Every kill done; one the trail could not record is thrown (the attempt fails and is retried). */
  async settled(): Promise<void> {
    const failed = (await Promise.all(this.kills)).find((outcome) => outcome !== null);
    if (failed) throw failed;
  }

  private kill(): void {
    if (this.pgid === null || this.over) return;
    const pgid = this.pgid;
    const { sshPool, log } = this.settings;
    const killed = sshBestEffort(
      sshPool.withConnection(this.target, (ssh) => killProcessGroup(ssh, pgid, 2, this.recorder)),
      (err) => log.warn({ err: err.message, runId: this.where.runId, pgid }, 'could not kill the process group'),
    );
    this.kills.push(killed.then(() => null, (error: unknown) => error));
  }
}
