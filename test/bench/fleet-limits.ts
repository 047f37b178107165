import { readdirSync, readFileSync } from 'node:fs';
import { loadConfig } from '../../src/config';

/*
 * What a fleet bench of N targets needs from the machine, checked before it starts: this process's
 * open files (Bosun's pooled connections, the floor's, MongoDB's and Temporal's), processes (an sshd
 * session is two processes: a thousand connections are two thousand), ephemeral ports. Node cannot
 * raise its own rlimits: `ulimit -n` before the bench does (the hard limit bounds it).
 */

const limitOf = (name: string) => {
  const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith(name));
  const [soft, hard] = line?.slice(name.length).trim().split(/\s+/) ?? [];
  return { soft: soft === 'unlimited' ? Infinity : Number(soft), hard: hard === 'unlimited' ? Infinity : Number(hard) };
};

/** The machine's limits against what `targets` need; throws when one cannot be met, else the lines to print. */
export function checkLimits(targets: number, sshdConfig: string): string[] {
  const files = limitOf('Max open files');
  const processes = limitOf('Max processes');
  const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
  const running = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).length;
  const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number) as [number, number];
  const poolMax = loadConfig({ SSH_POOL_MAX: process.env.SSH_POOL_MAX }).ssh.maxConnections;
  const setting = (name: string) => new RegExp(`^${name} (.+)$`, 'm').exec(sshdConfig)?.[1] ?? 'default';
  // Bosun's pool and the floor each hold one connection per target (the floor's closed before Bosun runs), plus the drivers' sockets.
  const filesNeeded = 2 * targets + 500;
  // Per open connection an sshd session and its privilege-separated child; Ansible's ControlPersist masters add one each.
  const processesNeeded = 3 * targets + 200;
  const lines = [
    `open files: soft ${files.soft}, hard ${files.hard}; needs about ${filesNeeded}`,
    `processes: ${running} running, pid_max ${pidMax}, this user's limit ${processes.soft}; needs about ${processesNeeded} more (sshd sessions, Ansible's control masters)`,
    `ephemeral ports ${low}–${high} (${high - low + 1}); needs about ${2 * targets} at once`,
    `Bosun's SSH pool: SSH_POOL_MAX ${poolMax}${process.env.SSH_POOL_MAX ? '' : ' (the default)'}${poolMax < targets ? ': fewer than the targets, so runs and health checks log in beyond it' : ''}`,
    `each private sshd: MaxStartups ${setting('MaxStartups')}, MaxSessions ${setting('MaxSessions')} (Bosun opens at most its SSH_MAX_CHANNELS_PER_CONNECTION sessions per connection)`,
  ];
  if (files.soft < filesNeeded) throw new Error(`too few open files for ${targets} targets (${files.soft} < ${filesNeeded}): run \`ulimit -n ${Math.min(files.hard, 4 * filesNeeded)}\` first`);
  if (pidMax - running < processesNeeded) throw new Error(`too few free pids for ${targets} targets (${pidMax - running} < ${processesNeeded})`);
  if (high - low + 1 < 2 * targets) throw new Error(`too few ephemeral ports for ${targets} targets`);
  return lines;
}
