import type { Command } from 'commander';
import type { Pipeline, PipelineRun } from './api-types';
import { action, all, print, printJson, type Fail } from './calls';
import { DeployExit } from './exit';
import { bosunApiFromEnvironment, errorMessage } from './http';
import { resolvePipeline } from './resolve';

/*
 * `bosun pipelines list|run|get|cancel|retry|approve|reject`: pipelines over the API (BOSUN_URL and
 * BOSUN_TOKEN), named by name or id. `run --wait` follows the run and exits as `deploy --wait` does:
 * 0 success, 1 failed or cancelled, 2 usage or connection trouble, 4 a stage's gate rejected, 5 a
 * stage's gate expired. The other commands: 0 done, 1 refused by the API (its reason on stderr).
 */

const collect = (v: string, all: string[] = []) => [...all, v];

/** The pipeline's id and the API with which to call it. */
async function pipelineOf(ref: string) {
  const api = bosunApiFromEnvironment();
  return { api, pipelineId: await resolvePipeline(api, ref) };
}

/** A call about one run that answers `status` with the run in `data`; its line and stages printed. */
async function onRun(ref: string, runId: string, suffix: string, method: 'GET' | 'POST', status: number, body?: unknown): Promise<PipelineRun> {
  const [{ api, pipelineId }, { runPathOf }] = await Promise.all([pipelineOf(ref), import('./pipeline-runs')]);
  const res = await api.request(method, `${runPathOf(pipelineId, runId)}${suffix}`, {}, body);
  if (res.status !== status) {
    const code = (res.body.error as { code?: string } | undefined)?.code;
    throw new DeployExit(res.status === 401 ? 2 : 1, `${code ? `${code}: ` : ''}${errorMessage(res.body)}`);
  }
  return res.body.data as PipelineRun;
}

const printRun = async (run: PipelineRun) => (await import('./pipeline-runs')).printPipelineRun(run);

export function pipelineCommands(program: Command, fail: Fail): void {
  const seconds = (v: string) => {
    const n = Number(v);
    return Number.isInteger(n) && n > 0 ? n : fail(2, '--timeout takes a whole number of seconds');
  };
  const pipelines = program
    .command('pipelines')
    .description('pipelines: releases as graphs of deployment stages (BOSUN_URL and BOSUN_TOKEN); run --wait exits 0 success, 1 failed/cancelled, 2 usage or connection error, 4 a stage’s gate rejected, 5 a stage’s gate expired');

  pipelines
    .command('list')
    .description('the pipelines you may see: their stages, in order, with what each needs')
    .option('--json', 'print JSON')
    .action(
      action(async (opts: { json?: boolean }) => {
        const items = (await all('/pipelines')) as Pipeline[];
        if (opts.json) return printJson(items);
        print(['ID', 'NAME', 'PARAMETERS', 'STAGES'].join('\t'));
        for (const p of items) {
          const stages = p.stages.map((s) => `${s.name}${s.needs.length ? `<-${s.needs.join('+')}` : ''}${s.gate ? ' (gated)' : ''}`).join(', ');
          print([p.id, p.name, p.parameters.map((x) => x.name).join(',') || '-', stages].join('\t'));
        }
      }, fail),
    );

  pipelines
    .command('run <pipeline>')
    .description('trigger a run of the pipeline, by name or id; prints the run id, or with --wait each stage’s changes until the run ends')
    .option('--param <name=value>', 'a parameter of the pipeline (repeat for more)', collect)
    .option('--wait', 'follow the run until it ends, and exit with its result')
    .option('--timeout <seconds>', 'with --wait: give up waiting after this many seconds (exit 1; the run goes on)', seconds)
    .option('--plan-hash <hash>', 'run only if the plan (POST /pipelines/{id}/plan) is still this one (else 409 plan_changed)')
    .option('--idempotency-key <key>', 'reuse the key printed by an earlier attempt: the same run, never a second one')
    .action(
      action(async (ref: string, opts: { param?: string[]; wait?: boolean; timeout?: number; planHash?: string; idempotencyKey?: string }) => {
        const [{ api, pipelineId }, { runPipeline }] = await Promise.all([pipelineOf(ref), import('./pipeline-runs')]);
        await runPipeline(api, pipelineId, { ...opts, params: opts.param });
      }, fail),
    );

  pipelines
    .command('get <pipeline> <run-id>')
    .description('a run of the pipeline: its status, and each stage’s status, deployment run, error or skip reason')
    .option('--json', 'print JSON')
    .action(
      action(async (ref: string, runId: string, opts: { json?: boolean }) => {
        const run = await onRun(ref, runId, '', 'GET', 200);
        if (opts.json) return printJson(run);
        await printRun(run);
      }, fail),
    );

  pipelines
    .command('cancel <pipeline> <run-id>')
    .description('cancel the run: its running stages’ runs are cancelled, what has not begun is skipped (`when: always` stages still run)')
    .action(action(async (ref: string, runId: string) => printRun(await onRun(ref, runId, '/cancel', 'POST', 202)), fail));

  pipelines
    .command('retry <pipeline> <run-id>')
    .description('a new run of a run that did not succeed: its succeeded stages kept with their outputs, the others run again')
    .option('--wait', 'follow the new run until it ends, and exit with its result')
    .option('--timeout <seconds>', 'with --wait: give up waiting after this many seconds (exit 1; the run goes on)', seconds)
    .option('--idempotency-key <key>', 'reuse the key printed by an earlier attempt: the same new run, never a second one')
    .action(
      action(async (ref: string, runId: string, opts: { wait?: boolean; timeout?: number; idempotencyKey?: string }) => {
        const [{ api, pipelineId }, { retryPipelineRun }] = await Promise.all([pipelineOf(ref), import('./pipeline-runs')]);
        await retryPipelineRun(api, pipelineId, runId, opts);
      }, fail),
    );

  pipelines
    .command('approve <pipeline> <run-id> <stage>')
    .description('approve the gate a stage waits at (a person with the approver role on its servers; never the one who triggered the run)')
    .option('--comment <text>', 'what you checked')
    .action(action(async (ref: string, runId: string, stage: string, opts: { comment?: string }) => printRun(await onRun(ref, runId, `/stages/${encodeURIComponent(stage)}/approve`, 'POST', 200, opts.comment ? { comment: opts.comment } : {})), fail));

  pipelines
    .command('reject <pipeline> <run-id> <stage>')
    .description('reject the gate a stage waits at: the stage fails, and so does the run')
    .requiredOption('--reason <text>', 'why')
    .action(action(async (ref: string, runId: string, stage: string, opts: { reason: string }) => printRun(await onRun(ref, runId, `/stages/${encodeURIComponent(stage)}/reject`, 'POST', 200, { reason: opts.reason })), fail));
}
