import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { isAlive } from '../../src/embedded/pids';
import type { ManagedProcess } from '../../src/embedded/child-process';
import { secretsInLogs } from './log-secrets';
import type { SharedServices } from './shared';
import { SHARED_BOSUN_FILE_PATTERN, type SharedBosunInfo } from './shared-bosun-info';
import type { Sshd } from './sshd';

/** Each jest worker's shared Bosun stopped (SIGTERM: it stops in order), before the services it runs on. */
async function stopSharedBosuns(dir: string): Promise<void> {
  const pids = readdirSync(dir)
    .filter((name) => SHARED_BOSUN_FILE_PATTERN.test(name))
    .map((name) => (JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as SharedBosunInfo).pid)
    .filter(isAlive);
  for (const pid of pids) process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 30_000;
  while (pids.some(isAlive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  for (const pid of pids.filter(isAlive)) process.kill(pid, 'SIGKILL');
}

export default async function globalTeardown(): Promise<void> {
  const services = (globalThis as { __bosunServices?: { mongo: { process: ManagedProcess }; temporal: { process: ManagedProcess }; sshd: Sshd; dir: string; runDir: string } }).__bosunServices;
  if (!services) return;
  await stopSharedBosuns(services.dir);
  await Promise.all([services.temporal.process.stop(), services.mongo.process.stop(), services.sshd.stop()]);
  // Every Bosun of the run logged at debug into one file: not one secret may be in it.
  const shared = JSON.parse(readFileSync(path.join(services.dir, 'shared.json'), 'utf8')) as SharedServices;
  const { lines, found } = secretsInLogs(shared.logFile, shared.sshd);
  if (found.length) throw new Error(`Secrets in the logs of this test run (${shared.logFile}, ${lines} lines kept for inspection):\n${found.slice(0, 20).join('\n')}`);
  // The run's temporary files, everything its tests and their processes left (kept above when secrets leaked).
  if (!process.env.KEEP_RUN_DIR) rmSync(services.runDir, { recursive: true, force: true });
}
