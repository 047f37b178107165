import type { Command } from 'commander';
import type { Run } from './api-types';
import type { Fail } from './calls';
import { DeployExit } from './exit';
import { bosunApiFromEnvironment, errorMessage } from './http';
import { guardLine } from './print';
import { resolveDeployment } from './resolve';

/*
 * `bosun runs approve|reject|pause|resume <deployment> <run-id>`: people's decisions on a fleet run
 * between its batches, over the API (BOSUN_URL and BOSUN_TOKEN), so the server judges them as it
 * does for every client (only people approve, never the one who triggered the run). Exit 0 done,
 * 1 refused by the API (its code and reason on stderr), 2 usage or connection trouble.
 */

type Decision = 'approve' | 'reject' | 'pause' | 'resume';

async function decide(decision: Decision, deployment: string, runId: string, body: Record<string, string> | undefined): Promise<never> {
  const api = bosunApiFromEnvironment();
  const deploymentId = await resolveDeployment(api, deployment);
  const res = await api.request('POST', `/deployments/${encodeURIComponent(deploymentId)}/runs/${encodeURIComponent(runId)}/${decision}`, {}, body ?? {});
  if (res.status !== 200) {
    const code = (res.body.error as { code?: string } | undefined)?.code;
    throw new DeployExit(res.status === 401 ? 2 : 1, `${code ? `${code}: ` : ''}${errorMessage(res.body)}`);
  }
  const run = res.body.data as Run;
  const waiting = guardLine(run);
  process.stdout.write(`Run ${run.id}: ${run.status}${waiting ? `; ${waiting}` : ''}\n`);
  throw new DeployExit(0, '');
}

export function runCommands(program: Command, fail: Fail) {
  const runs = program.command('runs').description('decisions on a fleet run between its batches (BOSUN_URL and BOSUN_TOKEN); exit 0 done, 1 refused, 2 usage or connection error');
  const act = (decision: Decision, body: (opts: Record<string, string | undefined>) => Record<string, string> | undefined) => async (deployment: string, runId: string, opts: Record<string, string | undefined>) => {
    try {
      await decide(decision, deployment, runId, body(opts));
    } catch (error) {
      if (error instanceof DeployExit) fail(error.code, error.message);
      throw error;
    }
  };
  runs
    .command('approve <deployment> <run-id>')
    .description('approve the gate the run waits at (a person with the approver role; never the one who triggered it)')
    .option('--comment <text>', 'what you checked')
    .action(act('approve', (o) => (o.comment ? { comment: o.comment } : undefined)));
  runs
    .command('reject <deployment> <run-id>')
    .description('reject the gate the run waits at: the run fails, no later batch starts')
    .requiredOption('--reason <text>', 'why')
    .action(act('reject', (o) => ({ reason: o.reason! })));
  runs
    .command('pause <deployment> <run-id>')
    .description('pause the run after its running batch')
    .requiredOption('--reason <text>', 'why')
    .action(act('pause', (o) => ({ reason: o.reason! })));
  runs
    .command('resume <deployment> <run-id>')
    .description('resume a paused run')
    .action(act('resume', () => undefined));
}
