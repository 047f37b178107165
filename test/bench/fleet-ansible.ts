import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Ansible } from './ansible';
import type { FloorTarget } from './fleet-floor';

/** The pids of the OpenSSH control masters whose sockets are in dir (their command line names it). */
function controlMastersIn(dir: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith(`ssh: ${dir}/`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * The same commands on the same hosts with Ansible: `forks` and `serial` equal to the batch size,
 * pipelining, ControlPersist. A warm-up play of one `true` per host first (control sockets open, the
 * interpreter found), then the measured play; its wall time (ms).
 */
export function ansibleFleet([program, ...first]: Ansible['playbook'], targets: FloorTarget[], commands: string[], forks: number): number {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bosun-bench-fleet-ansible-'));
  const keys = new Map<number, string>();
  const hosts = targets.map(({ host, sshd }) => {
    if (!keys.has(sshd.port)) {
      keys.set(sshd.port, path.join(dir, `key-${sshd.port}`));
      writeFileSync(keys.get(sshd.port)!, sshd.privateKey, { mode: 0o600 });
    }
    return `${host} ansible_port=${sshd.port} ansible_user=${sshd.username} ansible_ssh_private_key_file=${keys.get(sshd.port)}`;
  });
  writeFileSync(path.join(dir, 'inventory'), `[fleet]\n${hosts.join('\n')}\n`);
  // ControlPersist outlives the warm-up of a thousand hosts (minutes); the masters are closed below.
  writeFileSync(
    path.join(dir, 'ansible.cfg'),
    `[defaults]\nforks = ${forks}\nhost_key_checking = False\ngathering = explicit\ninterpreter_python = /usr/bin/python3\n` +
      `[ssh_connection]\npipelining = True\nssh_args = -o ControlMaster=auto -o ControlPersist=30m -o ControlPath=${dir}/cp-%%h-%%p-%%r -o UserKnownHostsFile=/dev/null\n`,
  );
  const play = (name: string, steps: string[]) =>
    writeFileSync(
      path.join(dir, name),
      `- hosts: fleet\n  serial: ${forks}\n  gather_facts: false\n  tasks:\n${steps.map((command, i) => `    - name: step ${i + 1}\n      command: "${command}"\n`).join('')}`,
    );
  play('warm.yml', ['true']);
  play('play.yml', commands);
  const run = (file: string) =>
    execFileSync(program, [...first, '-i', 'inventory', file], { cwd: dir, env: { ...process.env, ANSIBLE_CONFIG: path.join(dir, 'ansible.cfg') }, stdio: 'pipe', maxBuffer: 256 * 1024 * 1024 });
  try {
    run('warm.yml');
    const t0 = performance.now();
    run('play.yml');
    return performance.now() - t0;
  } finally {
    for (const { host, sshd } of targets) {
      spawnSync('ssh', ['-O', 'exit', '-o', `ControlPath=${dir}/cp-${host}-${sshd.port}-${sshd.username}`, host], { stdio: 'ignore' });
    }
    // A master that missed its exit would otherwise hold its session for ControlPersist's 30 minutes.
    for (const pid of controlMastersIn(dir)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
