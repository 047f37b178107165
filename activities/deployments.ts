import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { DeploymentModel, DeploymentRunModel, type RunStatus } from '../src/deployments/model';
import { CappedOutput, Redactor } from '../src/deployments/output';
import type { Logger } from '../src/logger';
import { organizationSecretValues } from '../src/secrets/model';
import type { SecretBox } from '../src/secrets/secret-box';
import { loadSshTarget } from '../src/servers/credentials';
import { loadTargetOrFail } from './ssh-target';
import type { SshTarget } from '../src/ssh/connect';
import { describeTarget } from '../src/ssh/connect';
import { classifySshError, SSH_FAILURE_TYPES } from '../src/ssh/errors';
import { killProcessGroup, runInProcessGroup } from '../src/ssh/exec';
import type { SshPool } from '../src/ssh/pool';
import { DEFAULT_STEP_LIMIT_SECONDS, type QueuedRun, type RunStepDefinition, type StepResult } from '../workflows/contracts';
import type { SshError } from '../src/ssh/errors';

/** The SSH side of a step failed (not the command, not the database). */
class StepTransportError extends Error {
  constructor(readonly sshError: SshError) {
    super(sshError.message);
  }
}

export interface DeploymentActivityDeps {
  secretBox: SecretBox;
  sshPool: SshPool;
  log: Logger;
  /** Per-step output kept for polling: a quarter from the start, the rest from the end. */
  stepOutputLimitBytes: number;
  /** How often streamed output is persisted (and so relayed live). */
  outputFlushMs?: number;
}

const stepField = (index: number, field: string) => `steps.${index}.${field}`;

/** Secrets of a server's login that must never appear in output: the password, passphrase and key body. */
function credentialSecrets(target: SshTarget): string[] {
  const keyLines = (target.privateKey ?? '').split('\n').filter((line) => line.length >= 16 && !line.startsWith('-----'));
  return [target.password, target.passphrase, ...keyLines].filter((s): s is string => !!s);
}

export function createDeploymentActivities({ secretBox, sshPool, log, stepOutputLimitBytes, outputFlushMs = 200 }: DeploymentActivityDeps) {
  const headLimit = Math.floor(stepOutputLimitBytes / 4);
  const tailLimit = stepOutputLimitBytes - headLimit;

  async function loadTarget(serverId: string): Promise<SshTarget> {
    const loaded = await loadTargetOrFail(serverId, secretBox);
    if (!loaded) throw ApplicationFailure.nonRetryable('The server was deleted', 'ServerNotFound');
    if (!loaded.target.hostKeyFingerprint) {
      throw ApplicationFailure.nonRetryable('The server has no verified host key: verify it first', 'ServerNotVerified');
    }
    return loaded.target;
  }

  /** Best effort: a step that ends without its command's result (cancelled in a retry pause, given up) may leave it running. */
  async function killLeftovers(runId: string, pgids: number[]) {
    if (!pgids.length) return;
    const run = await DeploymentRunModel.findById(runId, { server_id: 1 }).lean();
    const loaded = run ? await loadSshTarget(run.server_id.toString(), secretBox).catch(() => null) : null;
    if (!loaded) return;
    await Promise.all(
      pgids.map((pgid) =>
        sshPool.withConnection(loaded.target, (ssh) => killProcessGroup(ssh, pgid, 1)).catch((err) =>
          log.warn({ err: (err as Error).message, runId, pgid }, 'could not stop a leftover command'),
        ),
      ),
    );
  }

  return {
    /** queued → running; returns the steps, or null when the run is no longer queued (cancelled, or started already). */
    async beginRun({ runId }: { runId: string }): Promise<RunStepDefinition[] | null> {
      const run = await DeploymentRunModel.findOneAndUpdate(
        { _id: runId, status: 'queued' },
        { $set: { status: 'running', started_at: new Date() }, $inc: { seq: 1 } },
        { returnDocument: 'after' },
      ).lean();
      if (!run) return null;
      await DeploymentModel.updateOne({ _id: run.deployment_id }, { $set: { last_run_at: run.started_at, last_run_status: 'running' } });
      return run.steps.map(({ name, command, timeout_seconds, retries, continue_on_error }) => ({
        name,
        command,
        timeout_seconds: timeout_seconds ?? null,
        retries: retries ?? 0,
        continue_on_error: continue_on_error ?? false,
      }));
    },

    /**
     * Runs one step's command once, streaming its output into the run document while it runs. An
     * exit status is a result (returned); a lost connection is a transport failure (thrown, retried).
     */
    async runStep(input: { runId: string; index: number; exitAttempt: number; finalExitAttempt: boolean }): Promise<StepResult> {
      const { runId, index } = input;
      const ctx = Context.current();
      // Just this step: the others' output can be megabytes.
      const run = await DeploymentRunModel.findById(runId, { organization_id: 1, server_id: 1, steps: { $slice: [index, 1] } }).lean();
      const step = run?.steps[0];
      if (!run || !step) throw ApplicationFailure.nonRetryable(`Run ${runId} has no step ${index}`, 'RunNotFound');
      // This attempt already finished (its worker died before reporting): report it, never run it twice.
      if (step.last_exit?.attempt === input.exitAttempt) {
        const exitCode = step.last_exit.exit_code ?? null;
        const timedOut = !!step.last_exit.timed_out;
        return { status: exitCode === 0 && !timedOut ? 'success' : 'failed', exitCode, timedOut };
      }
      const limitSeconds = step.timeout_seconds ?? DEFAULT_STEP_LIMIT_SECONDS;
      const [target, organizationSecrets] = await Promise.all([
        loadTarget(run.server_id.toString()),
        organizationSecretValues(run.organization_id.toString(), secretBox),
      ]);
      const redactor = new Redactor([...credentialSecrets(target), ...organizationSecrets]);
      const output = new CappedOutput(headLimit, tailLimit, step.output ?? '');

      let pending = '';
      if (ctx.info.attempt > 1) pending += `\n--- attempt ${ctx.info.attempt}: the previous attempt was interrupted; running the command again ---\n`;
      else if (input.exitAttempt > 0) pending += `\n--- retry ${input.exitAttempt} of ${step.retries} ---\n`;

      await DeploymentRunModel.updateOne(
        { _id: runId },
        {
          $set: { [stepField(index, 'status')]: 'running', [stepField(index, 'started_at')]: step.started_at ?? new Date() },
          $inc: { [stepField(index, 'attempts')]: 1, seq: 1 },
        },
      );

      // Persist-then-relay: each flush is one update, one change event, one sequence number.
      let streamed = step.streamed ?? 0;
      const chunkFields = (chunk: string) => {
        output.append(chunk);
        const fields = {
          [stepField(index, 'output')]: output.toString(),
          [stepField(index, 'output_bytes')]: output.bytes,
          [stepField(index, 'streamed')]: streamed + chunk.length,
          // The offset makes every chunk a change, even one identical to the last.
          last_chunk: { step: index, offset: streamed, data: chunk },
        };
        streamed += chunk.length;
        return fields;
      };
      let flushing: Promise<void> = Promise.resolve();
      const flush = () => {
        flushing = flushing
          .then(async () => {
            if (!pending) return;
            const chunk = pending;
            pending = '';
            await DeploymentRunModel.updateOne({ _id: runId }, { $set: chunkFields(chunk), $inc: { seq: 1 } });
          })
          // One failed write must not stop every later one.
          .catch((err) => log.warn({ err, runId }, 'could not persist step output'));
        return flushing;
      };
      const ticker = setInterval(() => {
        void flush();
        ctx.heartbeat({ bytes: output.bytes });
      }, outputFlushMs);

      let pgid: number | null = null;
      let stop: 'timeout' | 'cancel' | null = null;
      const killGroup = async () => {
        if (pgid === null) return;
        await sshPool.withConnection(target, (ssh) => killProcessGroup(ssh, pgid!)).catch((err) =>
          log.warn({ err: (err as Error).message, runId, pgid }, 'could not kill the process group'),
        );
      };
      const onCancel = () => {
        stop ??= 'cancel';
        void killGroup();
      };
      ctx.cancellationSignal.addEventListener('abort', onCancel);
      const timer = setTimeout(() => {
        stop ??= 'timeout';
        void killGroup();
      }, limitSeconds * 1000);

      try {
        let result;
        try {
          // An earlier attempt's command may still run on the server (its worker died): stop it first.
          if (step.pgid) {
            const previous = step.pgid;
            await sshPool.withConnection(target, (ssh) => killProcessGroup(ssh, previous, 1));
          }
          result = await sshPool.withConnection(target, (ssh) =>
            runInProcessGroup(ssh, step.command, {
              onOutput: (text) => {
                pending += redactor.push(text);
              },
              onProcessGroup: (id) => {
                pgid = id;
                void DeploymentRunModel.updateOne({ _id: runId }, { $set: { [stepField(index, 'pgid')]: id } }).catch(() => undefined);
                if (stop) void killGroup();
              },
            }),
          );
        } catch (error) {
          throw new StepTransportError(classifySshError(error, describeTarget(target)));
        }
        pending += redactor.flush();
        const succeeded = result.exitCode === 0 && stop === null;
        if (stop === 'timeout') pending += `\n--- timed out after ${limitSeconds} s: the command's process group was killed ---\n`;
        if (stop === 'cancel') pending += '\n--- cancelled: the command\'s process group was killed ---\n';
        if (!succeeded && stop !== 'cancel' && !input.finalExitAttempt) {
          pending += `\n--- exit code ${result.exitCode ?? result.signal}; retrying ---\n`;
        }
        clearInterval(ticker);
        if (stop === 'cancel') {
          await flush();
          throw new CancelledFailure('Cancelled while the command ran');
        }
        await flushing;
        // The last output and the result in one write: one change, one event.
        const chunk = pending;
        pending = '';
        const final = succeeded || input.finalExitAttempt;
        await DeploymentRunModel.updateOne(
          { _id: runId },
          {
            $set: {
              [stepField(index, 'status')]: succeeded ? 'success' : final ? 'failed' : 'running',
              [stepField(index, 'exit_code')]: result.exitCode,
              [stepField(index, 'pgid')]: null,
              [stepField(index, 'last_exit')]: { attempt: input.exitAttempt, exit_code: result.exitCode, timed_out: stop === 'timeout' },
              ...(final ? { [stepField(index, 'completed_at')]: new Date() } : {}),
              ...(chunk ? chunkFields(chunk) : {}),
            },
            $inc: { seq: 1 },
          },
        );
        return { status: succeeded ? 'success' : 'failed', exitCode: result.exitCode, timedOut: stop === 'timeout' };
      } catch (error) {
        // Anything else (a database error) is thrown as it is: Temporal retries it, and last_exit keeps a retry from re-running.
        if (!(error instanceof StepTransportError)) throw error;
        const sshError = error.sshError;
        pending += redactor.flush();
        pending += `\n--- ${sshError.message}${sshError.retryable ? '; retrying' : ''} ---\n`;
        clearInterval(ticker);
        await flush();
        throw ApplicationFailure.create({ message: sshError.message, type: SSH_FAILURE_TYPES[sshError.kind], nonRetryable: !sshError.retryable });
      } finally {
        clearInterval(ticker);
        clearTimeout(timer);
        ctx.cancellationSignal.removeEventListener('abort', onCancel);
      }
    },

    /** A step whose activity failed for good (server unreachable or refusing us): failed, with the reason. */
    async failStep({ runId, index, message }: { runId: string; index: number; message: string }): Promise<void> {
      const run = await DeploymentRunModel.findById(runId, { steps: { $slice: [index, 1] } }).lean();
      const pgid = run?.steps[0]?.pgid;
      if (pgid) await killLeftovers(runId, [pgid]);
      await DeploymentRunModel.updateOne(
        { _id: runId },
        {
          $set: { [stepField(index, 'status')]: 'failed', [stepField(index, 'completed_at')]: new Date(), [stepField(index, 'pgid')]: null },
          $inc: { seq: 1 },
        },
      );
      log.warn({ runId, index, message }, 'step failed');
    },

    /** Steps from `from` on that have not run: skipped. */
    async skipSteps({ runId, from }: { runId: string; from: number }): Promise<void> {
      const run = await DeploymentRunModel.findById(runId, { steps: 1 }).lean();
      if (!run) return;
      const $set: Record<string, string> = {};
      run.steps.forEach((step, index) => {
        if (index >= from && step.status === 'pending') $set[stepField(index, 'status')] = 'skipped';
      });
      if (Object.keys($set).length) await DeploymentRunModel.updateOne({ _id: runId }, { $set, $inc: { seq: 1 } });
    },

    /** After a cancel: the running step and every pending one become cancelled. */
    async cancelSteps({ runId }: { runId: string }): Promise<void> {
      const run = await DeploymentRunModel.findById(runId, { 'steps.status': 1, 'steps.pgid': 1 }).lean();
      if (!run) return;
      await killLeftovers(runId, run.steps.flatMap((step) => (step.pgid ? [step.pgid] : [])));
      const now = new Date();
      const $set: Record<string, unknown> = {};
      run.steps.forEach((step, index) => {
        if (step.status === 'pending' || step.status === 'running') {
          $set[stepField(index, 'status')] = 'cancelled';
          if (step.status === 'running') $set[stepField(index, 'completed_at')] = now;
          $set[stepField(index, 'pgid')] = null;
        }
      });
      if (Object.keys($set).length) await DeploymentRunModel.updateOne({ _id: runId }, { $set, $inc: { seq: 1 } });
    },

    async finishRun({ runId, status, error }: { runId: string; status: RunStatus; error: string | null }): Promise<void> {
      const run = await DeploymentRunModel.findOneAndUpdate(
        { _id: runId },
        { $set: { status, error, completed_at: new Date() }, $inc: { seq: 1 } },
        { returnDocument: 'after' },
      ).lean();
      if (run) await DeploymentModel.updateOne({ _id: run.deployment_id }, { $set: { last_run_status: status } });
    },

    /** The server's next run: the queued one with the lowest place in the queue, or null. */
    async nextQueuedRun({ serverId }: { serverId: string }): Promise<QueuedRun | null> {
      const run = await DeploymentRunModel.findOne({ server_id: serverId, status: 'queued' }, { steps: 0 }).sort({ queue_seq: 1 }).lean();
      if (!run) return null;
      const deployment = await DeploymentModel.findById(run.deployment_id, { name: 1 }).lean();
      return {
        runId: run._id.toString(),
        organizationId: run.organization_id.toString(),
        deploymentId: run.deployment_id.toString(),
        serverId,
        deploymentName: deployment?.name ?? '(deleted)',
        triggeredBy: `API token: ${run.triggered_by}`,
      };
    },
  };
}

export type DeploymentActivities = ReturnType<typeof createDeploymentActivities>;
