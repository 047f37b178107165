import { posix } from 'node:path';
import { shellQuote, tokenize, type ShellToken } from '../shell';
import { higherRisk, riskRank, type Risk, type Transfer } from './types';

/** An organization's rules for what conversations may run; stored on the organization. */
export interface CommandPolicy {
  /** Destructive commands are refused unless this is true (and then wait for approval by default). */
  allow_destructive: boolean;
  /** Steps of these risks wait for a person's approval before they run. */
  require_approval_for: Risk[];
}

export const DEFAULT_POLICY: CommandPolicy = { allow_destructive: false, require_approval_for: ['destructive'] };

interface SimpleCommand {
  name: string;
  args: string[];
  /** Files written by `>`/`>>`/`&>`/`2>`. */
  writes: string[];
}

const SEPARATORS = new Set(['&&', '||', ';', ';;', '|', '&', '$(', '<(', '>(', '(', ')', '{', '}', '`', '\n']);
const REDIRECTS = new Set(['>', '>>', '&>', '2>']);
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash', 'fish', 'python', 'python2', 'python3', 'perl', 'ruby', 'node', 'php']);
const DOWNLOADERS = new Set(['curl', 'wget', 'fetch']);
/** Run their arguments as a command: look through them. */
const WRAPPERS = new Set(['sudo', 'doas', 'env', 'nohup', 'nice', 'ionice', 'time', 'timeout', 'exec', 'command', 'stdbuf', 'xargs', 'busybox', 'watch']);
const OPTIONS_WITH_VALUES: Record<string, string[]> = {
  sudo: ['-u', '-g', '-C', '-p', '-h', '-D', '-r', '-t', '-U'],
  doas: ['-u', '-C'],
  nice: ['-n'],
  ionice: ['-c', '-n', '-p'],
  timeout: ['-s', '-k', '--signal', '--kill-after'],
  xargs: ['-I', '-d', '-n', '-L', '-P', '-s', '-E'],
  watch: ['-n', '-d'],
  env: ['-u', '-C', '-S'],
};
const CRITICAL_PATHS = new Set(['/', '/bin', '/boot', '/dev', '/etc', '/home', '/lib', '/lib64', '/opt', '/proc', '/root', '/sbin', '/srv', '/sys', '/usr', '/var', '~', '.', '..', '*', '$HOME']);
const BLOCK_DEVICE = /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|dm-\d|md\d|mapper\/|disk\/)/;

const basename = (word: string) => word.slice(word.lastIndexOf('/') + 1);
const normalizePath = (p: string) => {
  const trimmed = p.replace(/\/\*$/, '/').replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
};
const isCritical = (p: string) => CRITICAL_PATHS.has(normalizePath(p)) || /^\/\*?$/.test(p);

function unwrap(words: string[]): string[] {
  let rest = words;
  for (;;) {
    while (rest.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(rest[0]!)) rest = rest.slice(1);
    const head = rest[0] ? basename(rest[0]) : '';
    if (!WRAPPERS.has(head)) return rest;
    rest = rest.slice(1);
    // Options of the wrapper, and its one positional value where it takes one (timeout's duration, nice's -n N).
    while (rest.length && rest[0]!.startsWith('-')) {
      const option = rest[0]!;
      rest = rest.slice(1);
      if ((OPTIONS_WITH_VALUES[head] ?? []).includes(option) && rest.length) rest = rest.slice(1);
    }
    if (head === 'timeout' && rest.length) rest = rest.slice(1);
  }
}

function simpleCommands(tokens: ShellToken[]): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  let words: string[] = [];
  let writes: string[] = [];
  const flush = () => {
    const [name, ...args] = unwrap(words);
    if (name) commands.push({ name: basename(name), args, writes });
    else if (writes.length) commands.push({ name: '', args: [], writes });
    words = [];
    writes = [];
  };
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i]!;
    if (token.kind === 'op' && REDIRECTS.has(token.value)) {
      const target = tokens[i + 1];
      if (target?.kind === 'word') {
        writes.push(target.value);
        i += 1;
      }
    } else if (token.kind === 'op' && token.value === '<') {
      if (tokens[i + 1]?.kind === 'word') i += 1;
    } else if (token.kind === 'op' && SEPARATORS.has(token.value)) {
      flush();
    } else if (token.kind === 'word') {
      words.push(token.value);
    }
  }
  flush();
  return commands;
}

const hasFlag = (args: string[], short: string, long?: string) =>
  args.some((a) => (a.startsWith('-') && !a.startsWith('--') && a.slice(1).includes(short)) || (long !== undefined && a === long));
const operands = (args: string[]) => args.filter((a) => !a.startsWith('-'));

/** Why one simple command is destructive, or null. */
function destructiveReason(cmd: SimpleCommand): string | null {
  const { name, args } = cmd;
  for (const target of cmd.writes) if (BLOCK_DEVICE.test(target)) return `writes straight to the block device ${target}`;
  switch (name) {
    case 'rm':
      if (args.includes('--no-preserve-root')) return 'rm with --no-preserve-root';
      if ((hasFlag(args, 'r', '--recursive') || hasFlag(args, 'R')) && operands(args).some(isCritical)) {
        return `recursive rm of a system path (${operands(args).filter(isCritical).join(' ')})`;
      }
      return null;
    case 'chmod':
    case 'chown':
    case 'chgrp':
      return hasFlag(args, 'R', '--recursive') && operands(args).slice(1).some(isCritical) ? `recursive ${name} of a system path` : null;
    case 'find':
      return (args.includes('-delete') || args.includes('-exec')) && args.length && isCritical(args[0]!) && args.some((a) => a === '-delete' || a === 'rm')
        ? 'find deleting from a system path'
        : null;
    case 'mkswap':
    case 'wipefs':
    case 'mke2fs':
    case 'fdisk':
    case 'sfdisk':
    case 'gdisk':
    case 'sgdisk':
    case 'parted':
    case 'blkdiscard':
      return `${name} rewrites a disk`;
    case 'dd': {
      const of = args.find((a) => a.startsWith('of='))?.slice(3);
      return of && of.startsWith('/dev/') && !['/dev/null', '/dev/zero', '/dev/stdout', '/dev/stderr'].includes(of) ? `dd writing to the device ${of}` : null;
    }
    case 'shred':
      return operands(args).some((a) => a.startsWith('/dev/')) ? 'shred of a device' : null;
    case 'shutdown':
    case 'reboot':
    case 'halt':
    case 'poweroff':
      return `${name} takes the server down`;
    case 'init':
    case 'telinit':
      return ['0', '6'].includes(args[0] ?? '') ? `${name} ${args[0]} takes the server down` : null;
    case 'systemctl':
      return args.some((a) => ['reboot', 'poweroff', 'halt', 'kexec', 'rescue', 'emergency', 'soft-reboot'].includes(a)) ? 'systemctl takes the server down' : null;
    case 'iptables':
    case 'ip6tables':
    case 'iptables-legacy':
    case 'iptables-nft':
      return hasFlag(args, 'F', '--flush') || hasFlag(args, 'X', '--delete-chain') ? 'flushes the firewall' : null;
    case 'nft':
      return args[0] === 'flush' ? 'flushes the firewall' : null;
    case 'ufw':
      return ['disable', 'reset'].includes(args[0] ?? '') ? `ufw ${args[0]} drops the firewall` : null;
    case 'userdel':
    case 'deluser':
    case 'delgroup':
    case 'groupdel':
      return `${name} deletes accounts`;
    case 'crontab':
      return args.includes('-r') ? 'crontab -r deletes every cron job' : null;
    case 'kill':
    case 'pkill':
    case 'killall':
      return args.includes('-1') && name === 'kill' ? 'kill -1 stops every process' : null;
    case 'dropdb':
      return 'drops a database';
    case 'mysql':
    case 'mariadb':
    case 'psql':
      return args.some((a) => /\bdrop\s+(database|schema)\b/i.test(a)) ? 'drops a database' : null;
    default:
      return name.startsWith('mkfs') ? `${name} formats a file system` : null;
  }
}

/** Commands that only read: anything else counts as a change. */
const READ_ONLY = new Set([
  'cat', 'ls', 'df', 'du', 'free', 'uptime', 'ps', 'ss', 'netstat', 'grep', 'egrep', 'zgrep', 'tail', 'head', 'less', 'more', 'journalctl',
  'uname', 'hostname', 'hostnamectl', 'date', 'timedatectl', 'who', 'w', 'id', 'whoami', 'last', 'lastlog', 'find', 'ping', 'getent', 'dig', 'host', 'nslookup',
  'lscpu', 'lsblk', 'nproc', 'findmnt', 'stat', 'file', 'which', 'type', 'printenv', 'echo', 'printf', 'wc', 'sort', 'uniq', 'cut', 'tr', 'awk', 'sed',
  'vmstat', 'iostat', 'top', 'pgrep', 'pidof', 'lsof', 'dpkg-query', 'rpm', 'test', 'true', 'false', 'sleep', 'curl', 'md5sum', 'sha256sum', 'diff',
  'comm', 'column', 'tac', 'nl', 'basename', 'dirname', 'realpath', 'readlink', 'env', 'lsmod', 'dmesg', 'sensors', 'mount', 'blkid', 'tar', 'xxd', 'od',
]);
const READ_SUBCOMMANDS: Record<string, string[]> = {
  systemctl: ['status', 'is-active', 'is-enabled', 'is-failed', 'list-units', 'list-unit-files', 'list-timers', 'show', 'cat', '--failed'],
  service: ['status', '--status-all'],
  'rc-service': ['status'],
  'rc-status': [],
  apt: ['list', 'show', 'policy', 'search'],
  'apt-cache': ['policy', 'show', 'search', 'depends'],
  dnf: ['list', 'info', 'check-update', 'search', 'repolist'],
  yum: ['list', 'info', 'check-update', 'search'],
  apk: ['info', 'version', 'search', 'list'],
  dpkg: ['-l', '-s', '-L', '--list', '--status'],
  docker: ['ps', 'images', 'logs', 'inspect', 'stats', 'version', 'info'],
  ip: ['a', 'addr', 'address', 'r', 'route', 'link', '-brief', '-br', '-4', '-6', 'neigh'],
  crontab: ['-l'],
  git: ['status', 'log', 'diff', 'show', 'branch', 'remote'],
};

function isReadOnly(cmd: SimpleCommand): boolean {
  if (cmd.writes.some((w) => !['/dev/null', '/dev/stdout', '/dev/stderr', '&1', '&2'].includes(w))) return false;
  if (!cmd.name) return true;
  if (cmd.name === 'sed') return !hasFlag(cmd.args, 'i', '--in-place');
  if (cmd.name === 'find') return !cmd.args.some((a) => ['-delete', '-exec', '-execdir', '-ok'].includes(a));
  if (cmd.name === 'curl') return !cmd.args.some((a) => ['-o', '-O', '--output', '-X', '-d', '--data', '-T', '--upload-file'].includes(a));
  if (cmd.name === 'tar') return cmd.args.some((a) => /^-?[a-z]*t[a-z]*$/.test(a) || a === '--list');
  if (cmd.name === 'mount') return cmd.args.length === 0;
  if (cmd.name === 'rc-status') return true;
  if (READ_ONLY.has(cmd.name)) return true;
  const subcommands = READ_SUBCOMMANDS[cmd.name];
  return !!subcommands && cmd.args.length > 0 && subcommands.includes(cmd.args[0]!) && (cmd.name !== 'ip' || !cmd.args.some((a) => ['add', 'del', 'delete', 'set', 'flush', 'change', 'replace'].includes(a)));
}

export interface CommandAssessment {
  risk: Risk;
  /** Why it is destructive (empty unless it is). */
  reasons: string[];
}

/** What a command line does, judged from the commands it runs (not from words that merely appear in it). */
export function assessCommand(line: string, depth = 0): CommandAssessment {
  const tokens = tokenize(line);
  const commands = simpleCommands(tokens);
  const reasons: string[] = [];
  let risk: Risk = 'read';
  if (/:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:/.test(line)) reasons.push('a fork bomb');
  const downloads = commands.some((c) => DOWNLOADERS.has(c.name));
  for (const cmd of commands) {
    const reason = destructiveReason(cmd);
    if (reason) reasons.push(reason);
    if (SHELLS.has(cmd.name)) {
      const script = cmd.args[cmd.args.indexOf('-c') + 1];
      if (cmd.args.includes('-c') && script !== undefined && depth < 3) {
        if (/\$\(\s*(curl|wget)\b|`\s*(curl|wget)\b/.test(script)) reasons.push(`runs a download with ${cmd.name}`);
        const inner = assessCommand(script, depth + 1);
        reasons.push(...inner.reasons);
        risk = higherRisk(risk, inner.risk);
      } else if (downloads) reasons.push(`runs a download with ${cmd.name}`);
      else risk = higherRisk(risk, 'change');
    } else if (!isReadOnly(cmd)) risk = higherRisk(risk, 'change');
  }
  return { risk: reasons.length ? 'destructive' : risk, reasons: [...new Set(reasons)] };
}

/** What a step runs: its command, or a transfer's commands on each server (a copy runs tar on both). */
export function commandLines(step: { command: string; transfer?: Transfer | null }): string[] {
  const transfer = step.transfer;
  if (!transfer) return [step.command];
  if (transfer.kind === 'copy') return [`tar -C ${shellQuote(transfer.from)} -cf - .`, `tar -C ${shellQuote(transfer.to)} -xpf -`];
  return [transfer.source_command, transfer.target_command];
}

/** How every refusal by the organization's command policy begins. */
export const POLICY_REFUSAL = "Refused by the organization's command policy: ";

export type PolicyVerdict =
  | { allowed: true; risk: Risk; needsApproval: boolean }
  | { allowed: false; risk: Risk; reason: string };

/**
 * The policy's verdict on a planned step: its risk is the higher of the planner's claim and what
 * the command is seen to do; destructive commands are refused unless the organization allows them.
 */
export function judgeStep(step: { command: string; risk: Risk; title?: string; transfer?: Transfer | null }, policy: CommandPolicy, requireApproval = false): PolicyVerdict {
  const assessment = commandLines(step)
    .map((line) => assessCommand(line))
    .reduce((a, b) => ({ risk: higherRisk(a.risk, b.risk), reasons: [...a.reasons, ...b.reasons] }), { risk: 'read' as Risk, reasons: [] as string[] });
  // A tree copied onto a system directory overwrites what the target runs on.
  if (step.transfer?.kind === 'copy' && isCritical(posix.normalize(step.transfer.to))) {
    assessment.risk = 'destructive';
    assessment.reasons.push(`a copy onto ${step.transfer.to}, a system directory`);
  }
  const risk = higherRisk(step.risk, assessment.risk);
  if (risk === 'destructive' && !policy.allow_destructive) {
    const why = assessment.reasons.length ? assessment.reasons.join('; ') : step.title ? `the planner marked "${step.title}" destructive` : 'the planner marked it destructive';
    return { allowed: false, risk, reason: `${POLICY_REFUSAL}this command is destructive (${why}). An administrator can allow destructive commands with PUT /api/v1/policy.` };
  }
  const needsApproval = policy.require_approval_for.includes(risk) || (requireApproval && riskRank(risk) >= riskRank('change'));
  return { allowed: true, risk, needsApproval };
}
