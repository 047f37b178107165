import type { User } from './client';
import type { SshdInfo } from './sshd';

/** One server of a test's fleet: an address its private sshd listens on, and its title in Bosun. */
export interface FleetServer {
  host: string;
  sshd: SshdInfo;
  title: string;
}

/**
 * Adds each address as a server of its own and waits for its verification, `atOnce` at a time
 * (many handshakes at once can outlast a short connect timeout, or sshd's MaxStartups, on a loaded
 * machine): the servers' ids, in the order given.
 */
export async function addFleet(ops: User, servers: readonly FleetServer[], { atOnce = 1 } = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < servers.length; i += atOnce) {
    ids.push(...(await Promise.all(servers.slice(i, i + atOnce).map(({ host, sshd, title }) => ops.addServer({ host, sshd, title })))));
  }
  return ids;
}

/** The addresses one sshd serves as a fleet's servers, titled `${prefix}-1`, `${prefix}-2`…. */
export const fleetOn = (sshd: SshdInfo, hosts: readonly string[], prefix: string, first = 1): FleetServer[] =>
  hosts.map((host, i) => ({ host, sshd, title: `${prefix}-${first + i}` }));
