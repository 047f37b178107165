import { CancelledFailure, Context } from '@temporalio/activity';
import type { NodeSSH } from 'node-ssh';
import { organizationSecretValues } from '../src/domain/secrets/model';
import { describeTarget, type SshTarget } from '../src/domain/ssh/connect';
import { classifySshError, SshError } from '../src/domain/ssh/errors';
import { humanSize } from '../src/domain/ssh/fingerprint';
import { commandFailure, OutputLimitExceeded, type ChannelExit } from '../src/domain/ssh/stream';
import { commandRecorder, isTrailFailure } from '../src/domain/audit/commands';
import { captureOn, streamOn, type Side } from './audited-commands';
import type { StepResult } from '../src/domain/contracts/runs';
import type { TransferStepAttempt } from '../src/domain/contracts/conversations';
import { failure } from '../src/domain/contracts/failure-types';
import { frozenLine } from '../src/domain/freezes/coverage';
import { copyTree, CopyFailed } from './copy-tree';
import { credentialSecrets, loadVerifiedTarget } from './ssh-target';
import type { SshPool } from '../src/domain/ssh/pool';
import { executionSettings, recordedResult, type StepExecutionDeps } from './step-execution';
import { conversationSteps, findStep } from '../src/domain/conversations/store';
import type { ConversationStep } from '../src/domain/conversations/model';
import { StepLog } from './step-log';

const PROGRESS_EVERY_MS = 2000;
const COMPARE_OUTPUT_LIMIT = 16 * 1024 * 1024;
const COMPARE_LINES_SHOWN = 200;

export interface TransferActivityDeps extends StepExecutionDeps {
  /** Per transfer; 0 for no limit. */
  transferMaxBytesPerSecond?: number;
}

/** How long a transfer command's entry waits for its exit before the trail says `unknown` (a copy may take hours). */
const TRANSFER_AUDIT_LIMIT_SECONDS = 24 * 3600;

/** The transfer could not be done (a command failed, content differs): the step fails, nothing to retry. */
class TransferFailed extends Error {}

/** Throws TransferFailed naming each side whose command failed. */
function requireBothSucceeded(source: ChannelExit, target: ChannelExit) {
  const failed = [source.exitCode !== 0 && commandFailure('the source command', source), target.exitCode !== 0 && commandFailure('the target command', target)].filter(Boolean);
  if (failed.length) throw new TransferFailed(failed.join('; '));
}

/** "x" only on one side of a comparison: the lines each side has that the other lacks. */
function difference(source: string, target: string) {
  const lines = (text: string) => new Set(text.split('\n').map((l) => l.trimEnd()).filter(Boolean));
  const [a, b] = [lines(source), lines(target)];
  return { onlySource: [...a].filter((l) => !b.has(l)), onlyTarget: [...b].filter((l) => !a.has(l)), common: [...a].filter((l) => b.has(l)).length };
}

const listing = (title: string, lines: string[]) =>
  lines.length ? `${title} (${lines.length}):\n${lines.slice(0, COMPARE_LINES_SHOWN).map((l) => `  ${l}`).join('\n')}${lines.length > COMPARE_LINES_SHOWN ? `\n  … and ${lines.length - COMPARE_LINES_SHOWN} more` : ''}\n` : `${title}: none\n`;

/**
 * Steps that move data between a migration plan's two servers, streamed through this worker (the
 * servers need not reach each other, and neither gets the other's credentials).
 */
export function createTransferActivities({ secretBox, sshPool, log, stepOutputLimitBytes, stepLogLimitBytes, outputFlushMs = 200, transferMaxBytesPerSecond = 0 }: TransferActivityDeps) {
  const limits = executionSettings({ sshPool, log, stepOutputLimitBytes, stepLogLimitBytes, outputFlushMs });

  return {
    /**
     * Runs one transfer step to the end, heartbeating with the bytes moved; a retry (its worker
     * died) resumes a directory copy where the target's files say it stopped.
     */
    async runTransferStep(input: TransferStepAttempt): Promise<StepResult> {
      const { conversationId, index } = input;
      const [step, sourceTarget, targetTarget, organizationSecrets] = await Promise.all([
        findStep(conversationId, index),
        loadVerifiedTarget(input.sourceServerId, secretBox),
        loadVerifiedTarget(input.targetServerId, secretBox),
        organizationSecretValues(input.organizationId, secretBox),
      ]);
      if (!step?.transfer || step._id.toString() !== input.stepId) {
        throw failure('StepNotFound', `Conversation ${conversationId} has no transfer step ${input.stepId}`);
      }
      const recorded = recordedResult(step, 0);
      if (recorded) return recorded;
      // A transfer not yet begun does not begin while a change freeze covers either server.
      const frozen = step.status === 'pending' ? await frozenLine(input.organizationId, [input.sourceServerId, input.targetServerId]) : null;
      if (frozen) throw failure('ChangeFrozen', `Not run: ${frozen}`);

      const secrets = [...credentialSecrets(sourceTarget), ...credentialSecrets(targetTarget), ...organizationSecrets];
      const stepLog = new StepLog(conversationSteps(conversationId), index, step, limits, secrets, log, { conversationId, index });
      if (step.status === 'running') stepLog.note(`\n--- attempt ${(step.attempts ?? 0) + 1}: the previous attempt was interrupted; ${step.transfer.kind === 'copy' ? 'resuming the copy' : 'starting again'} ---\n`);
      await stepLog.write((steps) => steps.startAttempt(index, { startedAt: step.started_at ?? new Date(), exitAttempt: 0 }));
      return runTransfer({ input, step, transfer: step.transfer, stepLog, secrets, sourceTarget, targetTarget }, { sshPool, outputFlushMs, bytesPerSecond: transferMaxBytesPerSecond });
    },
  };
}

/** What a transfer step moves (its kind, directories or commands). */
type TransferPlan = NonNullable<ConversationStep['transfer']>;

/** A transfer step under way: what it moves, between which servers, where its log goes. */
interface Transfer {
  input: TransferStepAttempt;
  step: ConversationStep;
  transfer: TransferPlan;
  stepLog: StepLog;
  secrets: string[];
  sourceTarget: SshTarget;
  targetTarget: SshTarget;
}

/**
 * The transfer's commands on both servers, heartbeating with the bytes moved and noting progress in
 * its log; its result recorded. Stopped (cancelled, or the worker shutting down) it throws; a
 * transfer that could not be done fails the step; a lost connection is retried.
 */
async function runTransfer(transfer: Transfer, { sshPool, outputFlushMs, bytesPerSecond }: { sshPool: SshPool; outputFlushMs: number; bytesPerSecond: number }): Promise<StepResult> {
  const { input, stepLog } = transfer;
  const ctx = Context.current();
  const aborted = ctx.cancellationSignal;
  const progress = transferProgress(stepLog, (bytes) => ctx.heartbeat({ bytes }), outputFlushMs);
  const finish = async (succeeded: boolean, reason?: string) => {
    // No progress line after the result.
    progress.stop();
    if (reason) stepLog.note(`\n--- failed: ${reason} ---\n`);
    const result = { succeeded, exitCode: succeeded ? 0 : 1, timedOut: false, exitAttempt: 0, final: true, chunk: stepLog.finalChunk() };
    await stepLog.write((steps) => steps.finishAttempt(input.index, result));
    return { status: succeeded ? 'success' : 'failed', exitCode: succeeded ? 0 : 1, timedOut: false } as const;
  };
  const failedTransfer = (error: unknown) => error instanceof TransferFailed || error instanceof CopyFailed || error instanceof OutputLimitExceeded;
  const connect = (t: SshTarget, fn: (ssh: NodeSSH) => Promise<void>) =>
    sshPool.withConnection(t, (ssh) => fn(ssh)).catch((error) => {
      if (failedTransfer(error) || isTrailFailure(error) || aborted.aborted) throw error;
      throw classifySshError(error, describeTarget(t));
    });
  try {
    await connect(transfer.sourceTarget, (source) =>
      connect(transfer.targetTarget, (target) => transferCommands(transfer, auditedSides(transfer, source, target), { signal: aborted, bytesPerSecond, progress })),
    );
    return await finish(true);
  } catch (error) {
    if (aborted.aborted && ctx.cancellationDetails?.workerShutdown) {
      stepLog.note('\n--- this Bosun worker is shutting down: the transfer was stopped; another worker takes it over ---\n');
      await stepLog.flush();
      throw failure('WorkerShutdown', 'The worker shut down during the transfer');
    }
    if (aborted.aborted) {
      stepLog.note('\n--- cancelled: the transfer was stopped ---\n');
      await stepLog.flush();
      throw new CancelledFailure('Cancelled during the transfer');
    }
    if (failedTransfer(error)) return await finish(false, (error as Error).message);
    if (!(error instanceof SshError)) throw error;
    stepLog.note(`\n--- ${error.message}${error.retryable ? '; retrying' : ''} ---\n`);
    await stepLog.flush();
    throw error.toFailure();
  } finally {
    progress.stop();
  }
}

/** Every command the transfer runs, on either server, is in the audit trail (redacted, with its exit), numbered among them. */
function auditedSides({ input, step, secrets }: Transfer, source: NodeSSH, target: NodeSSH): [Side, Side] {
  let sequence = 0;
  const auditOn = (serverId: string) =>
    commandRecorder(
      { kind: 'conversation', organizationId: input.organizationId, serverId, ownerId: input.conversationId, stepIndex: input.index, stepId: input.stepId, exitAttempt: 0, startedBefore: step.attempts ?? 0, secrets, limitSeconds: TRANSFER_AUDIT_LIMIT_SECONDS },
      () => sequence++,
    );
  return [
    { ssh: source, audit: auditOn(input.sourceServerId) },
    { ssh: target, audit: auditOn(input.targetServerId) },
  ];
}

/** Bytes moved, heartbeated and noted in the log every PROGRESS_EVERY_MS (with the share of what is expected, when known). */
function transferProgress(stepLog: StepLog, heartbeat: (bytes: number) => void, flushMs: number) {
  const counts = { moved: 0, expected: 0 };
  let lastLine = Date.now();
  const startedAt = Date.now();
  const ticker = setInterval(() => {
    heartbeat(counts.moved);
    if (Date.now() - lastLine >= PROGRESS_EVERY_MS && counts.moved > 0) {
      lastLine = Date.now();
      const rate = counts.moved / Math.max(0.001, (Date.now() - startedAt) / 1000);
      const share = counts.expected ? ` of ${humanSize(counts.expected)} (${Math.min(99, Math.floor((counts.moved / counts.expected) * 100))}%)` : '';
      stepLog.note(`moved ${humanSize(counts.moved)}${share}, ${humanSize(rate)}/s\n`);
    }
    void stepLog.flush();
  }, flushMs);
  return {
    moved: (bytes: number) => (counts.moved = bytes),
    expect: (bytes: number) => (counts.expected = bytes),
    stop: () => clearInterval(ticker),
  };
}

type TransferProgress = ReturnType<typeof transferProgress>;

/** What the transfer's kind runs on its two sides: a directory copy, a pipe from one command into another, or a comparison of two outputs. */
function transferCommands(
  { transfer, stepLog }: Transfer,
  [source, target]: [Side, Side],
  { signal, bytesPerSecond, progress }: { signal: AbortSignal; bytesPerSecond: number; progress: TransferProgress },
): Promise<void> {
  switch (transfer.kind) {
    case 'copy':
      return copyTree({ ...source, dir: transfer.from! }, { ...target, dir: transfer.to! }, { note: (line) => stepLog.note(line), expect: progress.expect, progress: progress.moved }, { signal, bytesPerSecond });
    case 'pipe':
      return pipe(stepLog, { ...source, command: transfer.source_command! }, { ...target, command: transfer.target_command! }, { onBytes: progress.moved, signal, bytesPerSecond });
    case 'compare':
      return compare(stepLog, [source, transfer.source_command!], [target, transfer.target_command!], signal);
    default:
      throw new TransferFailed(`Unknown transfer kind ${String(transfer.kind)}`);
  }
}

/** One command's output streamed into the other's input; what each side said noted in the log. */
async function pipe(stepLog: StepLog, source: Side & { command: string }, target: Side & { command: string }, options: Parameters<typeof streamOn>[2]) {
  const result = await streamOn(source, target, options);
  stepLog.note(`moved ${humanSize(result.bytes)} from the source to the target\n`);
  if (result.source.stderr.trim()) stepLog.note(`source stderr:\n${result.source.stderr.trimEnd()}\n`);
  if (result.targetOutput.trim()) stepLog.note(`target output:\n${result.targetOutput.trimEnd()}\n`);
  if (result.target.stderr.trim()) stepLog.note(`target stderr:\n${result.target.stderr.trimEnd()}\n`);
  requireBothSucceeded(result.source, result.target);
}

/** Both sides' outputs compared line by line: what only one of them has. */
async function compare(stepLog: StepLog, [source, sourceCommand]: [Side, string], [target, targetCommand]: [Side, string], signal: AbortSignal) {
  const [a, b] = await Promise.all([
    captureOn(source, sourceCommand, { maxBytes: COMPARE_OUTPUT_LIMIT, signal }),
    captureOn(target, targetCommand, { maxBytes: COMPARE_OUTPUT_LIMIT, signal }),
  ]);
  requireBothSucceeded(a, b);
  const diff = difference(a.stdout.toString('utf8'), b.stdout.toString('utf8'));
  stepLog.push(`${diff.common} lines on both servers\n${listing('only on the source', diff.onlySource)}${listing('only on the target', diff.onlyTarget)}`);
}

export type TransferActivities = ReturnType<typeof createTransferActivities>;
