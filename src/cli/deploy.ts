import { randomUUID } from 'node:crypto';
import { DeployExit, exitCodeOf, FROZEN_EXIT } from './exit';
import { bosunApiFromEnvironment, errorMessage } from './http';
import { resolveDeployment } from './resolve';
import { OutputPrinter, reportFailure, reportFleet, say } from './print';
import { followToEnd } from './follow';
import { parseParams } from './calls';

/**
 * `bosun deploy`: triggers a run of a deployment (by name or id) with an idempotency key; with
 * --wait, follows it to its end and reports it. Always ends by throwing its DeployExit.
 */
export async function deploy(deployment: string, options: { wait?: boolean; timeout?: number; idempotencyKey?: string; params?: string[] }): Promise<never> {
  const api = bosunApiFromEnvironment();
  const deploymentId = await resolveDeployment(api, deployment);
  const key = options.idempotencyKey ?? `bosun-cli-${randomUUID()}`;
  if (!options.idempotencyKey) say(`Idempotency-Key: ${key} (rerun with --idempotency-key ${key} to retry without a second run)`);

  const parameters = parseParams(options.params ?? []);
  const trigger = await api.request('POST', `/deployments/${encodeURIComponent(deploymentId)}/run`, { 'Idempotency-Key': key }, { parameters });
  // A change freeze is no mistake of the caller's: its own code, so a pipeline can wait for the freeze to lift.
  if (trigger.status === 409 && (trigger.body as { error?: { code?: string } }).error?.code === 'frozen') throw new DeployExit(FROZEN_EXIT, `Not triggered: ${errorMessage(trigger.body)}`);
  if (trigger.status !== 202) throw new DeployExit(2, `Could not trigger: ${errorMessage(trigger.body)}`);
  const runId = trigger.body.run_id as string;
  process.stdout.write(options.wait ? '' : `${runId}\n`);
  say(`Run ${runId}: ${trigger.body.status}`);
  if (!options.wait) throw new DeployExit(0, '');

  const runPath = `/deployments/${encodeURIComponent(deploymentId)}/runs/${runId}`;
  const readTarget = (serverId: string) => api.readTarget(runPath, serverId);
  const printer = new OutputPrinter();
  const final = await followToEnd({ api, runId, runPath, timeout: options.timeout, printer });

  printer.flush();
  if (final.strategy) {
    await printer.catchUp(final, readTarget);
    printer.flush();
    await reportFleet(final, readTarget);
  } else if (final.status === 'failed') reportFailure(final);
  say(`Run ${runId}: ${final.status}${final.duration_seconds === null ? '' : ` in ${final.duration_seconds} s`}`);
  throw new DeployExit(exitCodeOf(final), '');
}
