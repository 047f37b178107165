import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { ManagedProcess } from '../../src/embedded/child-process';
import { secretsInLogs } from './log-secrets';
import type { SharedServices } from './shared';
import type { Sshd } from './sshd';

export default async function globalTeardown(): Promise<void> {
  const services = (globalThis as { __bosunServices?: { mongo: { process: ManagedProcess }; temporal: { process: ManagedProcess }; sshd: Sshd; dir: string; runDir: string } }).__bosunServices;
  if (!services) return;
  await Promise.all([services.temporal.process.stop(), services.mongo.process.stop(), services.sshd.stop()]);
  // Every Bosun of the run logged at debug into one file: not one secret may be in it.
  const shared = JSON.parse(readFileSync(path.join(services.dir, 'shared.json'), 'utf8')) as SharedServices;
  const { lines, found } = secretsInLogs(shared.logFile, shared.sshd);
  if (found.length) throw new Error(`Secrets in the logs of this test run (${shared.logFile}, ${lines} lines kept for inspection):\n${found.slice(0, 20).join('\n')}`);
  // The run's temporary files, everything its tests and their processes left (kept above when secrets leaked).
  rmSync(services.runDir, { recursive: true, force: true });
}
