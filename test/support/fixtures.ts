import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { StepDefinition, User } from './client';
import { LOOPBACK_ADDRESSES } from './sshd';

/*
 * What the tests' stories stand on, built through the test client: servers, fleets, steps that take
 * long enough to be interrupted, and a record of which commands ran where.
 */

/** A server of a fleet: the shared sshd on a loopback address of its own. */
export interface FleetServer {
  id: string;
  host: string;
  title: string;
}

/** The addresses a fleet's servers take, from 127.0.0.2 on (127.0.0.1 is what a single server gets by default). */
const FLEET_ADDRESSES = LOOPBACK_ADDRESSES.filter((host) => host !== '127.0.0.1');

/** `count` servers (`<title>-1` …) on as many loopback addresses, added and verified together; in that order. */
export async function addFleet(user: User, count: number, title = 'node'): Promise<FleetServer[]> {
  if (count > FLEET_ADDRESSES.length) throw new Error(`A fleet of at most ${FLEET_ADDRESSES.length} servers: the test sshd answers on no more addresses`);
  const hosts = FLEET_ADDRESSES.slice(0, count);
  return Promise.all(hosts.map(async (host, i) => ({ id: await user.addServer({ host, title: `${title}-${i + 1}` }), host, title: `${title}-${i + 1}` })));
}

/** A step that prints "begin", works for `seconds`, then prints "end": long enough to be interrupted in its middle. */
export const longStep = (seconds: number, name = 'long'): StepDefinition => ({ name, command: `echo begin; sleep ${seconds}; echo end` });

/** A step that prints t1 … t<count>, one every `everySeconds`: its output says how far it got. */
export const tickingStep = (count: number, everySeconds = 0.5, name = 'ticks'): StepDefinition => ({
  name,
  command: `for i in ${Array.from({ length: count }, (_, i) => i + 1).join(' ')}; do echo t$i; sleep ${everySeconds}; done`,
});

/** The whole output of a `tickingStep` of `count` ticks. */
export const tickingOutput = (count: number) => Array.from({ length: count }, (_, i) => `t${i + 1}\n`).join('');

/**
 * A folder the test login can write to, where commands note each of their executions per server
 * address: how many times a command really ran, whatever the run says.
 */
export function executionRecord(prefix: string) {
  const dir = mkdtempSync(path.join(tmpdir(), `bosun-${prefix}-`));
  // The sshd's login may be another user than the one running the tests.
  execFileSync('chmod', ['777', dir]);
  return {
    /** Shell that notes one execution of `what` under the address the step's SSH connection came in on (SSH_CONNECTION's third field). */
    note: (what: string) => `here=$(echo "$SSH_CONNECTION" | cut -d" " -f3); echo x >> ${dir}/${what}-$here`,
    /** How many times `what` ran on `address`. */
    count(what: string, address: string): number {
      const file = path.join(dir, `${what}-${address}`);
      return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
