import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/*
 * The Ansible a bench compares against, named in its output: which version, and where it came from,
 * since they differ in speed (on this machine, Debian's ansible-core 2.14 ran bench:fleet about 20%
 * slower than the one from PyPI). BENCH_ANSIBLE picks it: `pypi` (the default: the newest
 * ansible-core pip installs for this Python, into .bosun/cache/ansible-venv the first time),
 * `system` (the ansible-playbook on the PATH, e.g. Debian's package), or `0` (none).
 */

const REPO = path.resolve(__dirname, '../..');
const VENV = path.join(REPO, '.bosun/cache/ansible-venv');

export interface Ansible {
  /** How to run ansible-playbook: the program, then its first arguments (PyPI's through its venv's python). */
  playbook: [string, ...string[]];
  /** e.g. "ansible-core 2.18.6 (PyPI, in .bosun/cache/ansible-venv; Python 3.11.7)". */
  label: string;
}

/** `ansible-playbook --version`'s first line's version and its Python's, or null when it does not run. */
function versionOf([program, ...first]: Ansible['playbook']): { core: string; python: string } | null {
  const answer = spawnSync(program, [...first, '--version'], { encoding: 'utf8' });
  if (answer.status !== 0) return null;
  const core = /core ([\d.]+)/.exec(answer.stdout)?.[1] ?? 'unknown version';
  const python = /python version = ([\d.]+)/.exec(answer.stdout)?.[1] ?? '?';
  return { core, python };
}

/** Where a system ansible-playbook came from: the Debian package that owns it, if one does. */
function systemOrigin(playbook: string): string {
  const resolved = spawnSync('sh', ['-c', `readlink -f "$(command -v ${playbook})"`], { encoding: 'utf8' }).stdout.trim();
  const owner = spawnSync('dpkg', ['-S', resolved], { encoding: 'utf8' });
  if (owner.status !== 0) return `on the PATH, ${resolved}`;
  const pkg = owner.stdout.split(':')[0]!;
  const version = spawnSync('dpkg-query', ['-W', '-f=${Version}', pkg], { encoding: 'utf8' }).stdout.trim();
  return `Debian package ${pkg} ${version}, ${resolved}`;
}

function fromPyPI(): Ansible | null {
  // Through the venv's python: the scripts' #! lines name the folder the venv was made in, which may have moved since (a worktree's cache is linked).
  const playbook: Ansible['playbook'] = [path.join(VENV, 'bin/python3'), path.join(VENV, 'bin/ansible-playbook')];
  if (!existsSync(playbook[1]!)) {
    console.error('installing ansible-core from PyPI into .bosun/cache/ansible-venv …');
    const made = spawnSync('python3', ['-m', 'venv', VENV], { stdio: 'inherit' });
    if (made.status !== 0 || spawnSync(path.join(VENV, 'bin/pip'), ['install', '-q', 'ansible-core'], { stdio: 'inherit' }).status !== 0) return null;
  }
  const version = versionOf(playbook);
  return version && { playbook, label: `ansible-core ${version.core} (PyPI, in .bosun/cache/ansible-venv; Python ${version.python})` };
}

function fromSystem(): Ansible | null {
  const version = versionOf(['ansible-playbook']);
  return version && { playbook: ['ansible-playbook'], label: `ansible-core ${version.core} (${systemOrigin('ansible-playbook')}; Python ${version.python})` };
}

/** e.g. "ansible-core 2.19.14 (PyPI)": what a recorded figure against it is keyed by. */
export const ansibleName = (ansible: Ansible) => ansible.label.replace(/ \((PyPI|Debian)[^)]*\)/, ' ($1)').replace(/ \(on the PATH[^)]*\)/, '');

/** The Ansible BENCH_ANSIBLE asks for, or null (skipped, or it cannot be had: say why on stderr). */
export function chosenAnsible(): Ansible | null {
  const choice = process.env.BENCH_ANSIBLE ?? 'pypi';
  if (choice === '0') return null;
  const ansible = choice === 'system' ? fromSystem() : choice === 'pypi' ? fromPyPI() : null;
  if (!ansible) console.error(`Ansible (${choice}) could not be had: skipped`);
  return ansible;
}
