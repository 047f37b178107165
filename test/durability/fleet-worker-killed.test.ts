import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually, runEnded } from '../support/bosun';
import { externalServicesEnv, Fleet } from '../support/processes';
import { sharedServices } from '../support/shared';

/*
 * A fleet run whose worker is killed (SIGKILL) in the middle of a batch: a new worker carries the
 * run to its end, and no step runs again after it succeeded (a step interrupted before its result
 * runs again, and says so).
 */

const ADDRESSES = [2, 3, 4, 5, 6, 7].map((n) => `127.0.0.${n}`);

describe('a fleet run survives the death of its worker', () => {
  const services = sharedServices();
  const fleet = new Fleet(externalServicesEnv('fleet-durable'));
  const work = mkdtempSync(path.join(tmpdir(), 'bosun-fleet-kill-'));
  execFileSync('chmod', ['777', work]);
  afterAll(async () => {
    await fleet.stop();
    rmSync(work, { recursive: true, force: true });
  });

  test('SIGKILL the worker mid-batch; a new worker completes the run; no step runs twice after it succeeded', async () => {
    await fleet.createToken('fleet-durable');
    const worker = await fleet.launch('worker');
    const api = await fleet.launch('api');
    const base = await api.ready();
    await worker.ready();
    const call = (method: string, route: string, body?: object) => fleet.call(base, method, route, body);
    const { port, username, privateKey } = services.sshd;
    const servers: string[] = [];
    for (const [i, host] of ADDRESSES.entries()) {
      servers.push((await call('POST', '/servers', { title: `node-${i + 1}`, host, port, username, auth_method: 'private_key', private_key: privateKey })).data.id);
    }
    for (const id of servers) await eventually(async () => (await call('GET', `/servers/${id}`)).data.status, (s) => s === 'verified');
    const here = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3)';
    const deploymentId = (await call('POST', '/deployments', {
      name: 'rolling',
      targets: { server_ids: servers },
      strategy: { batch_size: 2 },
      steps: [
        { name: 'slow', command: `${here}; echo x >> ${work}/slow-$here; echo begin; sleep 3; echo end` },
        { name: 'quick', command: `${here}; echo x >> ${work}/quick-$here; echo done` },
      ],
    })).data.id;
    const runId = (await call('POST', `/deployments/${deploymentId}/run`)).run_id;
    const read = async () => (await call('GET', `/deployments/${deploymentId}/runs/${runId}`)).data;

    // The second batch's commands are running.
    await eventually(read, (r) => r.targets.filter((t: { batch: number; steps: Array<{ status: string }> }) => t.batch === 2 && t.steps[0]!.status === 'running').length === 2, 60_000);
    await worker.stop('SIGKILL');
    await (await fleet.launch('worker')).ready();

    const run = await eventually(read, runEnded, 120_000);
    expect(run.status).toBe('success');
    expect(run.summary).toMatchObject({ total: 6, success: 6 });
    const executions = (step: string, address: string) => {
      const file = `${work}/${step}-${address}`;
      return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
    };
    for (const [i, target] of run.targets.entries()) {
      const address = ADDRESSES[i]!;
      // Each command ran as many times as the step says it was attempted: once, or twice when the kill interrupted it.
      expect([target.title, executions('slow', address)]).toEqual([target.title, target.steps[0].attempts]);
      expect([target.title, executions('quick', address)]).toEqual([target.title, 1]);
      // The first batch had finished: nothing of it ran again.
      if (target.batch === 1) expect(target.steps[0].attempts).toBe(1);
    }
    // The kill interrupted the second batch's commands: they ran again, and their output says so.
    const second = run.targets.filter((t: { batch: number }) => t.batch === 2);
    for (const target of second) {
      const detail = (await call('GET', `/deployments/${deploymentId}/runs/${runId}/targets/${target.server_id}`)).data;
      expect(detail.steps[0].output).toMatch(/--- attempt 2: the previous attempt was interrupted; running the command again ---\nbegin\nend\n$/);
    }
  }, 240_000);
});
