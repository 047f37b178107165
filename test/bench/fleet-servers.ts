import type { User } from '../support/client';
import { Sshd, type SshdOptions } from '../support/sshd';

/*
 * The fleet benches' servers: N loopback addresses (127.0.1.1, 127.0.1.2, …, 250 to a /24) on as many
 * private sshds as they need, added to Bosun twenty at a time (each verified by a workflow of its own).
 */

/** A bench's `--name value` argument, or undefined. */
export const argument = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};

/** How many targets: `--targets`, else BENCH_TARGETS, else the bench's own default. */
export const targetCount = (fallback: number) => Number(argument('--targets') ?? process.env.BENCH_TARGETS ?? fallback);

export const fleetAddresses = (count: number) => Array.from({ length: count }, (_, i) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`);

/** sshd listens on at most 16 addresses: one daemon per 15 of them. */
const PER_SSHD = 15;

/** The private sshds serving `addresses`, and each address with the sshd that serves it. */
export async function startFleetSshds(addresses: string[], options: SshdOptions = {}) {
  const daemons: Sshd[] = [];
  for (let i = 0; i < addresses.length; i += PER_SSHD) daemons.push(await Sshd.startPrivate(addresses.slice(i, i + PER_SSHD), options));
  return { daemons, targets: addresses.map((host, i) => ({ host, sshd: daemons[Math.floor(i / PER_SSHD)]!.info })) };
}

/** Adds the targets to Bosun (titled fleet-1, fleet-2, …), twenty at a time, each once verified: their ids. */
export async function addFleetServers(user: User, targets: Array<{ host: string; sshd: Sshd['info'] }>): Promise<string[]> {
  const servers: string[] = [];
  for (let i = 0; i < targets.length; i += 20) {
    servers.push(...(await Promise.all(targets.slice(i, i + 20).map(({ host, sshd }, k) => user.addServer({ host, title: `fleet-${i + k + 1}`, sshd })))));
  }
  return servers;
}
