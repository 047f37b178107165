import { rmSync } from 'node:fs';
import type { ManagedProcess } from '../../src/embedded/child-process';
import type { Sshd } from './sshd';

export default async function globalTeardown(): Promise<void> {
  const services = (globalThis as { __bosunServices?: { mongo: { process: ManagedProcess }; temporal: { process: ManagedProcess }; sshd: Sshd; dir: string } }).__bosunServices;
  if (!services) return;
  await Promise.all([services.temporal.process.stop(), services.mongo.process.stop(), services.sshd.stop()]);
  rmSync(services.dir, { recursive: true, force: true });
}
