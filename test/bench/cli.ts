/**
 * npm run bench:cli — what a CI job pays to call `bosun`, against baselines measured in the same run,
 * interleaved (this machine is shared and noisy): bare `node -e 0`, and npx's own cost (`npx node -e 0`
 * minus bare node).
 *
 *   bosun --help            node src/cli/bin.js --help (the package's bin, compiled JavaScript)
 *   npx bosun --help        as a CI job in a checkout calls it (npx loads the installed tree to find a
 *                           package's own bin, which costs more than `npx node`; the bench says how much)
 *   bosun deploy --wait     a deployment of one `sleep 1` step on the test sshd, triggered and followed
 *
 * Goal: `bosun --help` within npx's own cost + 6× bare node. BENCH_RUNS (default 15) runs each.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO } from '../support/processes';
import { bearer } from '../support/bosun';
import { userWithToken } from '../support/client';
import { runBench } from './harness';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Wall time of one command, in ms; it must exit 0. (Not spawnSync: the Bosun it calls runs in this process.) */
function time(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const t0 = performance.now();
  const child = spawn(command, args, { cwd: REPO, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      const ms = performance.now() - t0;
      if (code === 0) resolve(ms);
      else reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr}`));
    });
  });
}

const bin = path.join(REPO, 'src/cli/bin.js');
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

runBench({}, async (bosun) => {
  const token = await bosun.token('bench-cli');
  const serverId = await userWithToken(bosun, token).addServer();
  const created = await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({ name: 'one-second', server_id: serverId, steps: [{ name: 'sleep', command: 'sleep 1' }] });
  const env = { ...process.env, BOSUN_URL: bosun.url, BOSUN_TOKEN: token };

  // Warm the file cache (and build dist/ if its sources changed) before measuring.
  await time(process.execPath, [bin, '--help']);
  await time(npx, ['--offline', 'bosun', '--help']);

  const samples: Record<string, number[]> = { node: [], help: [], npxNode: [], npxHelp: [], deploy: [] };
  for (let i = 0; i < RUNS; i += 1) {
    samples.node!.push(await time(process.execPath, ['-e', '0']));
    samples.help!.push(await time(process.execPath, [bin, '--help']));
    samples.npxNode!.push(await time(npx, ['--offline', 'node', '-e', '0']));
    samples.npxHelp!.push(await time(npx, ['--offline', 'bosun', '--help']));
    if (i < Math.min(RUNS, 5)) samples.deploy!.push(await time(process.execPath, [bin, 'deploy', created.body.data.id, '--wait'], env));
  }
  const node = median(samples.node!);
  const npxOwn = median(samples.npxNode!) - node;
  const line = (name: string, xs: number[], extra = '') =>
    `${name.padEnd(34)} median ${median(xs).toFixed(0).padStart(6)} ms   ×${(median(xs) / node).toFixed(1).padStart(5)} bare node${extra}`;
  // npx runs a package's own bin only after loading the installed tree (Arborist): more than `npx node` costs.
  const npxOwnBin = median(samples.npxHelp!) - median(samples.help!);
  process.stdout.write(
    [
      '',
      `bench:cli, ${RUNS} runs each (interleaved); node ${process.version}`,
      line('node -e 0 (baseline)', samples.node!),
      line('npx node -e 0', samples.npxNode!, `   (npx's own cost: ${npxOwn.toFixed(0)} ms)`),
      line('bosun --help', samples.help!, `   (goal: within npx's own cost + 6× bare node)`),
      line('npx bosun --help', samples.npxHelp!, `   = bosun --help + ${npxOwnBin.toFixed(0)} ms npx spends finding a package's own bin (it loads node_modules first)`),
      line('bosun deploy --wait (1 s step)', samples.deploy!, `   (${(median(samples.deploy!) - 1000).toFixed(0)} ms beyond the step's second)`),
      '',
    ].join('\n'),
  );
  if (median(samples.help!) > npxOwn + 6 * node) process.exitCode = 1;
});
