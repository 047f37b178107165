import { asUser, type TestBosun, type User } from './client';
import { executionRecord } from './fixtures';
import { Sshd, type SshdInfo } from './sshd';

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

/** What privateFleet sets up for a test file: read its fields inside the tests (they are set before them). */
export interface PrivateFleet<B> {
  sshd: Sshd;
  bosun: B;
  ops: User;
  /** The servers added before the tests (`titled`), or by the tests themselves. */
  servers: string[];
  record: ReturnType<typeof executionRecord>;
}

/**
 * A test file's private sshd on `addresses` (with `sshdConfig`'s lines), a Bosun (`start`: the file's own, or its jest
 * worker's), a user of organization `org` and an execution record named after it: set up before the file's tests — its
 * servers added, one at a time, when `titled` names them (`${titled}-1`…) — and all stopped after them.
 */
export function privateFleet<B extends TestBosun & { stop(): Promise<void> }>(options: {
  org: string;
  addresses: readonly string[];
  start: () => Promise<B>;
  sshdConfig?: string[];
  titled?: string;
}): PrivateFleet<B> {
  const fleet = { servers: [], record: executionRecord(options.org) } as unknown as PrivateFleet<B>;
  beforeAll(async () => {
    fleet.sshd = await Sshd.startPrivate(options.addresses, options.sshdConfig ? { config: options.sshdConfig } : {});
    fleet.bosun = await options.start();
    fleet.ops = await asUser(fleet.bosun, options.org);
    if (options.titled) fleet.servers = await addFleet(fleet.ops, fleetOn(fleet.sshd.info, options.addresses, options.titled));
  }, 120_000);
  afterAll(async () => {
    fleet.ops?.close();
    await fleet.bosun?.stop();
    await fleet.sshd?.stop({ dropSessions: true });
    fleet.record.remove();
  });
  return fleet;
}
