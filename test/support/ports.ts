import { readFileSync } from 'node:fs';
import { freePort } from '../../src/embedded/ports';

/** Where the kernel's range of ports for outgoing connections (and listen(0)) begins. */
function ephemeralRangeStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

const LOWEST = 10_000;

/**
 * A free port for a process the test starts (a Bosun, a Temporal, a mongod), from below the
 * ephemeral range: seconds pass before that process binds it (or binds it again after a restart),
 * and on a busy machine any outgoing connection may meanwhile take a port of that range.
 */
export async function portForProcess(): Promise<number> {
  const top = ephemeralRangeStart();
  for (let tries = 0; tries < 100; tries += 1) {
    const candidate = LOWEST + Math.floor(Math.random() * (top - LOWEST));
    if ((await freePort(candidate)) === candidate) return candidate;
  }
  throw new Error(`No free TCP port between ${LOWEST} and ${top}`);
}
