import { randomUUID } from 'node:crypto';
import type { PipelineRun, PipelineRunStage } from './api-types';
import { parseParams } from './calls';
import { DeployExit, pipelineExitCode } from './exit';
import { errorMessage, type BosunApi } from './http';
import { say } from './print';

/*
 * `bosun pipelines run|get|retry` and how they follow a run: its stages' changes on stdout, one line
 * each, as they happen; the CLI's own lines (the key, the end) on stderr, as `bosun deploy` does.
 */

const FINAL = new Set(['success', 'failed', 'cancelled']);
/** How often a followed run is read again (there is no pipeline event on the socket to follow). */
const POLL_MS = 1000;
/** A stage's deployment run that waits for something other than its turn to run steps. */
const WAITING_RUN = new Set(['queued', 'frozen', 'awaiting_approval', 'paused']);

export const runPathOf = (pipelineId: string, runId: string) => `/pipelines/${encodeURIComponent(pipelineId)}/runs/${encodeURIComponent(runId)}`;

/** "waiting for 2 approvals (1 given: Alice); expires at …", for a stage whose gate is open. */
function gateLine(stage: PipelineRunStage): string {
  const gate = stage.approval!;
  const names = gate.approvals.map((a) => a.by?.name ?? '?');
  return `waiting for ${gate.approvals_required} approval${gate.approvals_required > 1 ? 's' : ''} (${names.length} given${names.length ? `: ${names.join(', ')}` : ''}); expires at ${gate.expires_at}`;
}

/** One line for a stage as it stands: its status, its deployment run (and what that waits for), why it failed or was skipped. */
export function stageLine(stage: PipelineRunStage): string {
  const waiting = stage.deployment_run_status && WAITING_RUN.has(stage.deployment_run_status) ? `, ${stage.deployment_run_status}` : '';
  const run = stage.deployment_run_id ? ` (deployment run ${stage.deployment_run_id}${waiting})` : '';
  const kept = stage.kept_from ? ` (kept from pipeline run ${stage.kept_from})` : '';
  const gate = stage.status === 'awaiting_approval' && stage.approval ? `: ${gateLine(stage)}` : '';
  return `==> ${stage.name}: ${stage.status}${run}${kept}${gate}${stage.error ? `: ${stage.error}` : ''}`;
}

/** Prints each stage's line when it changes (a pending stage is not news). */
export class StagePrinter {
  private shown = new Map<string, string>();

  show(run: PipelineRun) {
    for (const stage of run.stages) {
      const line = stageLine(stage);
      if (this.shown.get(stage.name) === line || (stage.status === 'pending' && !this.shown.has(stage.name))) continue;
      this.shown.set(stage.name, line);
      process.stdout.write(`${line}\n`);
    }
  }
}

export async function readPipelineRun(api: BosunApi, runPath: string): Promise<PipelineRun> {
  const res = await api.request('GET', runPath);
  if (res.status !== 200) throw new DeployExit(res.status === 404 ? 1 : 2, `Could not read the pipeline run: ${errorMessage(res.body)}`);
  return res.body.data as PipelineRun;
}

/** Reads the run until it ends, printing its stages' changes; gives up after `timeout` seconds (exit 1, the run goes on). */
export async function followPipelineRun(api: BosunApi, runPath: string, timeout?: number): Promise<PipelineRun> {
  const deadline = timeout ? Date.now() + timeout * 1000 : Infinity;
  const printer = new StagePrinter();
  for (;;) {
    const run = await readPipelineRun(api, runPath);
    printer.show(run);
    if (FINAL.has(run.status)) return run;
    if (Date.now() > deadline) throw new DeployExit(1, `Pipeline run ${run.id} not finished after ${timeout} s (it goes on; poll ${runPath})`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The end of a followed run, on stderr: why it failed, and its status; then its exit code. */
function report(run: PipelineRun): never {
  if (run.status !== 'success') {
    for (const stage of run.stages.filter((s) => s.status === 'failed')) say(`Error: stage ${stage.name} failed: ${stage.error ?? 'no reason recorded'}`);
    if (run.error) say(`Error: ${run.error}`);
  }
  const seconds = run.started_at && run.completed_at ? ` in ${Math.round((Date.parse(run.completed_at) - Date.parse(run.started_at)) / 1000)} s` : '';
  say(`Pipeline run ${run.id}: ${run.status}${seconds}`);
  throw new DeployExit(pipelineExitCode(run), '');
}

export interface Follow {
  wait?: boolean;
  timeout?: number;
  idempotencyKey?: string;
}

/** A 202 of a trigger or a retry: its run id on stdout (alone, without --wait), or the run followed to its end. */
async function started(api: BosunApi, pipelineId: string, answer: { status: number; body: Record<string, unknown> }, options: Follow): Promise<never> {
  if (answer.status !== 202) throw new DeployExit(2, `Could not trigger: ${errorMessage(answer.body)}`);
  const runId = answer.body.run_id as string;
  if (!options.wait) process.stdout.write(`${runId}\n`);
  say(`Pipeline run ${runId}: ${answer.body.status as string}`);
  if (!options.wait) throw new DeployExit(0, '');
  report(await followPipelineRun(api, runPathOf(pipelineId, runId), options.timeout));
}

/** The Idempotency-Key of a trigger or a retry: the one given, or a new one said on stderr so a rerun can reuse it. */
function keyOf(options: Follow): string {
  const key = options.idempotencyKey ?? `bosun-cli-${randomUUID()}`;
  if (!options.idempotencyKey) say(`Idempotency-Key: ${key} (rerun with --idempotency-key ${key} to retry without a second run)`);
  return key;
}

/** `bosun pipelines run`: triggers the pipeline with its parameters (and the plan reviewed, if named). */
export async function runPipeline(api: BosunApi, pipelineId: string, options: Follow & { params?: string[]; planHash?: string }): Promise<never> {
  const parameters = parseParams(options.params ?? []);
  const body = { parameters, ...(options.planHash ? { plan_hash: options.planHash } : {}) };
  const key = keyOf(options);
  return started(api, pipelineId, await api.request('POST', `/pipelines/${encodeURIComponent(pipelineId)}/run`, { 'Idempotency-Key': key }, body), options);
}

/** `bosun pipelines retry`: a new run keeping the succeeded stages of one that did not succeed. */
export async function retryPipelineRun(api: BosunApi, pipelineId: string, runId: string, options: Follow): Promise<never> {
  const key = keyOf(options);
  return started(api, pipelineId, await api.request('POST', `${runPathOf(pipelineId, runId)}/retry`, { 'Idempotency-Key': key }), options);
}

/** `bosun pipelines get`: the run, one line, then its stages' lines. */
export function printPipelineRun(run: PipelineRun) {
  const by = run.triggered_by ? ` by ${run.triggered_by}` : '';
  process.stdout.write(`Pipeline run ${run.id} of ${run.pipeline_name}: ${run.status}${by}, created ${run.created_at}${run.error ? `: ${run.error}` : ''}\n`);
  for (const stage of run.stages) process.stdout.write(`${stageLine(stage)}\n`);
}
