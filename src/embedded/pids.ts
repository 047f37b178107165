import { readFileSync } from 'node:fs';

/**
 * Is pid a live process? A zombie is not: it has exited and waits to be reaped, which may never
 * happen where pid 1 reaps no orphans (some containers and sandboxes), yet signal 0 still reaches it.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // The state follows the parenthesised command name, which may itself hold spaces or parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    // No /proc (macOS): signal 0 is all there is to go on.
    return process.platform !== 'linux';
  }
}
