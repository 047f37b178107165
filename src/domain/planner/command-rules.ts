import { posix } from 'node:path';
import { parseShell, type ShellCommand, type ShellWord } from '../shell-syntax';
import { higherRisk, type Risk } from './types';

/**
 * The command policy's classification rules, each named so that a test can take any one away and
 * see a corpus case fail. A line is parsed (mvdan/sh), every simple command in its tree is judged
 * by every command rule, and the whole line by the line rules; the highest risk found wins.
 */

/** One simple command as the rules see it. */
export interface Command extends ShellCommand {
  /** The command's name without its directory; null when it is an expansion or a pattern (known only when it runs). */
  name: string | null;
  args: ShellWord[];
  /** It also gets operands the line does not show (xargs feeds them from standard input). */
  hiddenOperands: boolean;
}

export interface RuleResult {
  risk?: Risk;
  /** Why (said for a destructive finding). */
  reason?: string;
  /** The command only reads. */
  reads?: true;
  /** The commands it runs in its place (a wrapper: `sudo X`, `xargs X`, `find -exec X`). */
  runs?: Command[];
  /** Shell code it runs (`bash -c CODE`, `eval CODE`): parsed and judged like the line itself. */
  code?: string[];
}

export interface CommandRule {
  name: string;
  kind: 'command';
  apply(cmd: Command): RuleResult | null;
}

export interface LineFacts {
  /** Why the parser rejected the line, or null. */
  parseError: string | null;
  /** Every command the line runs, at every depth, wrappers' inner commands included. */
  commands: Command[];
}

export interface LineRule {
  name: string;
  kind: 'line';
  apply(facts: LineFacts): RuleResult | null;
}

export type Rule = CommandRule | LineRule;

export interface Classification {
  risk: Risk;
  reasons: string[];
}

// ── words and paths ────────────────────────────────────────────────────────────────────────────

const text = (w: ShellWord | undefined) => w?.text ?? null;
const basename = (word: string) => word.slice(word.lastIndexOf('/') + 1);
const isOption = (w: ShellWord) => !!w.text && w.text.startsWith('-') && w.text !== '-';
const operands = (args: ShellWord[]) => {
  const end = args.findIndex((a) => a.text === '--');
  return end === -1 ? args.filter((a) => !isOption(a)) : [...args.slice(0, end).filter((a) => !isOption(a)), ...args.slice(end + 1)];
};
const hasFlag = (args: ShellWord[], short: string, long?: string) =>
  args.some((a) => !!a.text && ((/^-[^-]/.test(a.text) && a.text.slice(1).includes(short)) || (long !== undefined && a.text === long)));
const has = (args: ShellWord[], ...values: string[]) => args.some((a) => a.text !== null && values.includes(a.text));

const CRITICAL_DIRS = new Set(['/', '/bin', '/boot', '/dev', '/etc', '/home', '/lib', '/lib32', '/lib64', '/opt', '/proc', '/root', '/sbin', '/srv', '/sys', '/usr', '/usr/bin', '/usr/sbin', '/usr/lib', '/usr/local', '/var', '/var/lib']);
/** Files whose loss or rewrite breaks the server or hands it to someone else. */
const CRITICAL_FILE = /^(\/etc\/(passwd|shadow|group|gshadow|sudoers|sudoers\.d(\/.*)?|fstab|crontab|ld\.so\.preload|ld\.so\.conf|pam\.d(\/.*)?|ssh\/sshd_config|hosts|resolv\.conf|profile|bash\.bashrc|environment)|\/boot\/.*|\/(usr\/)?s?bin\/.*|\/(usr\/)?lib(32|64)?\/.*|.*\/\.ssh\/authorized_keys2?|\/root\/\.(bashrc|profile)|\/proc\/sysrq-trigger)$/;
const BLOCK_DEVICE = /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|dm-\d|md\d|loop\d|mapper\/|disk\/|mem$|kmem$|port$)/;
const SINKS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty']);

/** A directory whose recursive removal (or permission change) breaks the server; unknown paths count. */
function isCriticalDir(w: ShellWord): boolean {
  if (w.text === null) return true;
  let p = w.text;
  if (/^~[^/]*\/?$/.test(p)) return true;
  if (w.pattern) {
    // A pattern can match a system directory only if what precedes its first wildcard is one (or the root).
    const fixed = p.slice(0, p.search(/[*?[{]/));
    if (!fixed.includes('/')) return true;
    p = fixed.slice(0, fixed.lastIndexOf('/') + 1) || '/';
  }
  if (!p.startsWith('/')) return p === '.' || p === '*' || p === '..' || p.startsWith('../') || p.startsWith('~');
  const normal = posix.normalize(p).replace(/\/+$/, '') || '/';
  return CRITICAL_DIRS.has(normal);
}
const isCriticalFile = (w: ShellWord) => w.text === null || w.pattern || CRITICAL_FILE.test(posix.normalize(w.text)) || BLOCK_DEVICE.test(w.text) || isCriticalDir(w);
/** A directory a copy must not land on (a transfer's target). */
export const isSystemDirectory = (path: string) => isCriticalDir({ text: path, pattern: false, processSubstitution: false });
const describe = (w: ShellWord) => w.text ?? 'a path known only when it runs';

export function toCommand(base: ShellCommand, words: ShellWord[] = base.words, hiddenOperands = false): Command {
  const first = words[0];
  const name = !first ? '' : first.text === null || first.pattern ? null : basename(first.text);
  return { ...base, words, name, args: words.slice(1), hiddenOperands };
}

/** A wrapper's inner command: the words after its options (and the values some options take) and `skip` positionals. */
function after(cmd: Command, valued: string[], skip = 0, hiddenOperands = cmd.hiddenOperands): Command[] {
  let i = 0;
  const args = cmd.args;
  while (i < args.length && args[i]!.text !== null && /^-|^[A-Za-z_][A-Za-z0-9_]*=/.test(args[i]!.text!)) {
    if (args[i]!.text === '--') {
      i += 1;
      break;
    }
    const option = args[i]!.text!;
    // A value follows the option, or a cluster of short options ending in one (`-dmS name`, `-iu root`).
    if (valued.includes(option) || (/^-[A-Za-z]{2,}$/.test(option) && valued.includes(`-${option.slice(-1)}`))) i += 1;
    i += 1;
  }
  i += skip;
  return i < args.length ? [toCommand(cmd, args.slice(i), hiddenOperands)] : [];
}

// ── command rules ──────────────────────────────────────────────────────────────────────────────

const READ_ONLY = new Set([
  'cat', 'ls', 'df', 'du', 'free', 'uptime', 'ps', 'ss', 'netstat', 'grep', 'egrep', 'fgrep', 'zgrep', 'tail', 'head', 'less', 'more', 'journalctl',
  'uname', 'hostname', 'hostnamectl', 'date', 'timedatectl', 'who', 'w', 'id', 'whoami', 'last', 'lastlog', 'ping', 'getent', 'dig', 'host', 'nslookup',
  'lscpu', 'lsblk', 'nproc', 'findmnt', 'stat', 'file', 'which', 'type', 'printenv', 'echo', 'printf', 'wc', 'sort', 'uniq', 'cut', 'tr',
  'vmstat', 'iostat', 'top', 'pgrep', 'pidof', 'lsof', 'dpkg-query', 'rpm', 'test', '[', 'true', 'false', 'sleep', 'md5sum', 'sha1sum', 'sha256sum', 'diff',
  'comm', 'column', 'tac', 'nl', 'basename', 'dirname', 'realpath', 'readlink', 'lsmod', 'dmesg', 'sensors', 'blkid', 'xxd', 'od',
  'cd', 'pwd', 'zcat', 'jq', 'lspci', 'lsusb', 'arch', 'locale', 'getconf', 'whereis', 'cksum', 'strings', 'hexdump', 'mpstat', 'sar', 'tree', 'traceroute', 'tracepath',
]);
const READ_SUBCOMMANDS: Record<string, string[]> = {
  systemctl: ['status', 'is-active', 'is-enabled', 'is-failed', 'list-units', 'list-unit-files', 'list-timers', 'show', 'cat', '--failed'],
  service: ['status', '--status-all'],
  'rc-service': ['status'],
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

const readOnlyCommands: CommandRule = {
  name: 'read-only-commands',
  kind: 'command',
  apply({ name, args }) {
    if (!name) return null;
    const reads = (() => {
      if (name === 'find') return !has(args, '-delete', '-exec', '-execdir', '-ok', '-okdir', '-fprint', '-fprintf', '-fls');
      if (name === 'curl') return !has(args, '-o', '-O', '--output', '--remote-name', '-X', '--request', '-d', '--data', '--data-binary', '-F', '--form', '-T', '--upload-file', '-K', '--config');
      if (name === 'tar') return args.some((a) => /^-?[a-z]*t[a-z]*$/.test(a.text ?? '') || a.text === '--list');
      if (name === 'mount') return args.length === 0;
      if (name === 'rc-status') return true;
      if (READ_ONLY.has(name)) return true;
      const subcommands = READ_SUBCOMMANDS[name];
      // `git -C dir status`, `service nginx status`: the subcommand comes after a directory or a service name.
      const rest = name === 'git' && text(args[0]) === '-C' ? args.slice(2) : name === 'service' && text(args[0]) !== '--status-all' ? args.slice(1) : args;
      const first = text(rest[0]);
      return !!subcommands && first !== null && subcommands.includes(first) && (name !== 'ip' || !has(args, 'add', 'del', 'delete', 'set', 'flush', 'change', 'replace'));
    })();
    return reads ? { reads: true } : null;
  },
};

const dynamicCommandName: CommandRule = {
  name: 'dynamic-command-name',
  kind: 'command',
  apply: (cmd) => (cmd.name === null ? { risk: 'destructive', reason: 'the command name is an expansion or a pattern, known only when it runs' } : null),
};

/** Options that take a value, per wrapper, and how many positionals come before the command. */
const WRAPPERS: Record<string, { valued: string[]; skip?: number }> = {
  sudo: { valued: ['-u', '-g', '-C', '-p', '-h', '-D', '-r', '-t', '-U', '-T', '--user', '--group'] },
  doas: { valued: ['-u', '-C'] },
  env: { valued: ['-u', '-C', '--unset', '--chdir'] },
  nohup: { valued: [] },
  nice: { valued: ['-n', '--adjustment'] },
  ionice: { valued: ['-c', '-n', '-p', '--class', '--classdata'] },
  time: { valued: ['-f', '-o', '--format', '--output'] },
  timeout: { valued: ['-s', '-k', '--signal', '--kill-after'], skip: 1 },
  exec: { valued: ['-a'] },
  command: { valued: [] },
  builtin: { valued: [] },
  stdbuf: { valued: ['-i', '-o', '-e'] },
  busybox: { valued: [] },
  toybox: { valued: [] },
  setsid: { valued: [] },
  unbuffer: { valued: [] },
  chroot: { valued: ['--userspec', '--groups'], skip: 1 },
  runuser: { valued: ['-u', '-g', '-G', '--user', '--group'] },
  chrt: { valued: [], skip: 1 },
  taskset: { valued: [], skip: 1 },
  strace: { valued: ['-o', '-e', '-p', '-s', '-u'] },
  flock: { valued: ['-w', '-E', '--timeout'], skip: 1 },
  'systemd-run': { valued: ['-u', '--unit', '-p', '--property', '-M', '--machine', '--uid', '--gid', '-E', '--setenv', '--description', '--slice', '--on-calendar', '--on-active', '-H', '--host'] },
  nsenter: { valued: ['-t', '--target', '-S', '--setuid', '-G', '--setgid', '-w', '--wd', '-r', '--root'] },
  unshare: { valued: ['--propagation', '--setgroups', '-S', '--setuid', '-G', '--setgid'] },
  screen: { valued: ['-S', '-c', '-p', '-t', '-L', '-Logfile', '-e', '-h', '-s', '-T'] },
};

const wrappers: CommandRule = {
  name: 'wrappers',
  kind: 'command',
  apply(cmd) {
    const spec = cmd.name ? WRAPPERS[cmd.name] : undefined;
    if (!spec) return null;
    if (cmd.name === 'command' && hasFlag(cmd.args, 'v')) return { reads: true };
    if (cmd.name === 'command' && hasFlag(cmd.args, 'V')) return { reads: true };
    // `env -S 'a b'` splits its string into the command.
    const split = cmd.name === 'env' ? cmd.args.findIndex((a) => a.text === '-S' || a.text === '--split-string') : -1;
    if (split !== -1) return { code: [cmd.args[split + 1]?.text ?? ''], ...(cmd.args[split + 1]?.text == null ? { risk: 'destructive' as Risk, reason: 'env -S runs a string known only when it runs' } : {}) };
    const inner = after(cmd, spec.valued, spec.skip ?? 0);
    if (inner.length) return { runs: inner };
    if (cmd.hiddenOperands) return { risk: 'destructive', reason: `${cmd.name} runs a command named by its input` };
    // `sudo -s` / `sudo -i` without a command start a shell, which reads its program from standard input.
    if ((cmd.name === 'sudo' || cmd.name === 'doas') && (hasFlag(cmd.args, 's') || hasFlag(cmd.args, 'i'))) return stdinProgram(cmd);
    // Without a command: env and printenv print, exec only redirects, the others do nothing here.
    return ['env', 'exec', 'time', 'command', 'builtin'].includes(cmd.name!) ? { reads: true } : null;
  },
};

const xargs: CommandRule = {
  name: 'xargs',
  kind: 'command',
  apply(cmd) {
    if (cmd.name === 'parallel') {
      // GNU parallel: the command, then `:::` and the arguments it is run with.
      const end = cmd.args.findIndex((a) => a.text !== null && /^:::+$/.test(a.text));
      const inner = after(toCommand(cmd, [cmd.words[0]!, ...(end === -1 ? cmd.args : cmd.args.slice(0, end))]), ['-j', '--jobs', '-S', '--sshlogin', '--delay', '--joblog', '-a', '--arg-file'], 0, true);
      if (!inner.length) return null;
      if (inner[0]!.words.some((w) => w.text === null)) return { risk: 'destructive', reason: 'parallel runs a command known only when it runs' };
      // It runs the words through a shell, with each argument in place of `{}` (or after them).
      const line = inner[0]!.words.map((w) => w.text!).join(' ');
      return { code: [/\{[^}]*\}/.test(line) ? line.replace(/\{[^}]*\}/g, '"$x"') : `${line} "$x"`] };
    }
    if (cmd.name !== 'xargs') return null;
    const inner = after(cmd, ['-I', '-i', '-d', '-n', '-L', '-l', '-P', '-s', '-E', '-e', '-a', '--arg-file', '--delimiter', '--max-args', '--max-procs'], 0, true);
    // With no command xargs echoes its input.
    return inner.length ? { runs: inner } : { reads: true };
  },
};

const findActions: CommandRule = {
  name: 'find-actions',
  kind: 'command',
  apply(cmd) {
    if (cmd.name !== 'find') return null;
    const roots = cmd.args.slice(0, Math.max(0, cmd.args.findIndex((a) => a.text !== null && /^[-(!]/.test(a.text)))) ;
    const starts = roots.length ? roots : cmd.args.findIndex((a) => a.text !== null && /^[-(!]/.test(a.text)) === -1 ? cmd.args : [{ text: '.', pattern: false, processSubstitution: false }];
    if (has(cmd.args, '-delete') && starts.some(isCriticalDir)) return { risk: 'destructive', reason: `find deleting under ${starts.map(describe).join(' ')}` };
    const printed = cmd.args.filter((a, i) => i > 0 && ['-fprint', '-fprint0', '-fprintf', '-fls'].includes(cmd.args[i - 1]!.text ?? ''));
    const overwritten = printed.find(isCriticalFile);
    if (overwritten) return { risk: 'destructive', reason: `find writing onto ${describe(overwritten)}` };
    const runs: Command[] = [];
    cmd.args.forEach((a, i) => {
      if (!a.text || !['-exec', '-execdir', '-ok', '-okdir'].includes(a.text)) return;
      const end = cmd.args.findIndex((b, j) => j > i && (b.text === ';' || b.text === '+'));
      const words = cmd.args.slice(i + 1, end === -1 ? undefined : end);
      // `{}` stands for every path found: the starting points themselves among them.
      const expanded = words.flatMap((w) => (w.text === '{}' ? starts.flatMap((s) => [s, { text: s.text === null ? null : `${s.text.replace(/\/+$/, '')}/*`, pattern: true, processSubstitution: false }]) : [w]));
      if (expanded.length) runs.push(toCommand(cmd, expanded, true));
    });
    return runs.length ? { runs } : null;
  },
};

const SHELLS = new Set(['sh', 'bash', 'rbash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'csh', 'tcsh', 'yash']);

/** Where a command's standard input comes from, when that is what it runs as a program. */
function stdinProgram(cmd: Command): RuleResult | null {
  const input = [...cmd.redirects].reverse().find((r) => ['<', '<<', '<<-', '<<<', '<>'].includes(r.op) && (r.fd === null || r.fd === '0'));
  const what = cmd.name ?? 'a shell';
  if (input && (input.op === '<<' || input.op === '<<-' || input.op === '<<<')) {
    const body = input.op === '<<<' ? input.target : input.heredoc;
    return body?.text != null ? { code: [body.text] } : { risk: 'destructive', reason: `${what} runs a here-document known only when it runs` };
  }
  if (input) return input.target.processSubstitution || input.target.text === null ? { risk: 'destructive', reason: `${what} runs a program another command writes` } : null;
  if (cmd.piped) return { risk: 'destructive', reason: `a pipe into ${what} runs whatever the pipe carries` };
  return null;
}

const shellCode: CommandRule = {
  name: 'shell-code',
  kind: 'command',
  apply(cmd) {
    if (!cmd.name || !SHELLS.has(cmd.name)) return null;
    let i = 0;
    let inline = false;
    let fromStdin = false;
    for (; i < cmd.args.length; i += 1) {
      const a = cmd.args[i]!.text;
      if (a === null || !/^[-+]/.test(a)) break;
      if (a === '--' || a === '-') {
        i += 1;
        break;
      }
      if (/^[-+][A-Za-z]*[oO]$/.test(a)) i += 1;
      if (!a.startsWith('--') && a.slice(1).includes('c')) inline = true;
      if (!a.startsWith('--') && a.slice(1).includes('s')) fromStdin = true;
    }
    const first = cmd.args[i];
    if (inline) {
      return first?.text != null ? { code: [first.text] } : { risk: 'destructive', reason: `${cmd.name} -c runs code known only when it runs` };
    }
    if (first && !fromStdin) {
      if (first.processSubstitution || first.text === null || first.text.startsWith('/dev/fd/') || first.text === '/dev/stdin') {
        return { risk: 'destructive', reason: `${cmd.name} runs a script another command writes` };
      }
      return null;
    }
    return stdinProgram(cmd);
  },
};

const INTERPRETER = /^(python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby|irb|node|nodejs|deno|bun|php[0-9.]*|lua[0-9.]*|luajit|tclsh|wish|pwsh|powershell|Rscript|julia|guile|expect)$/;
const INLINE_FLAGS = /^-(c|e|E|r|p|x|-eval|-command|-exec|-print)$|^-[a-zA-Z]*[ceE]$/;

const interpreterCode: CommandRule = {
  name: 'interpreter-code',
  kind: 'command',
  apply(cmd) {
    if (!cmd.name || !INTERPRETER.test(cmd.name)) return null;
    const language = cmd.name.replace(/[0-9.]+$/, '');
    if (cmd.args.some((a) => a.text !== null && INLINE_FLAGS.test(a.text)) || (cmd.name === 'deno' || cmd.name === 'bun') && has(cmd.args, 'eval')) {
      return { risk: 'destructive', reason: `runs ${language} code, which the policy cannot read` };
    }
    const script = cmd.args.find((a) => !isOption(a));
    if (script && script.text !== '-') {
      return script.processSubstitution || script.text === null ? { risk: 'destructive', reason: `${language} runs a script another command writes` } : null;
    }
    const stdin = stdinProgram(cmd);
    return stdin ? { risk: 'destructive', reason: stdin.reason ?? `${language} runs code from standard input, which the policy cannot read` } : null;
  },
};

const evalAndTrap: CommandRule = {
  name: 'eval-and-trap',
  kind: 'command',
  apply(cmd) {
    if (cmd.name !== 'eval' && cmd.name !== 'trap') return null;
    const words = cmd.name === 'eval' ? cmd.args : cmd.args.filter((a) => !isOption(a)).slice(0, 1);
    if (cmd.name === 'trap' && (!words.length || has(cmd.args, '-l', '-p'))) return { reads: true };
    if (words.some((w) => w.text === null)) return { risk: 'destructive', reason: `${cmd.name} runs code known only when it runs` };
    return { code: [words.map((w) => w.text).join(' ')] };
  },
};

/** Files that only set variables (the OS-detection idiom). */
const DATA_FILES = new Set(['/etc/os-release', '/usr/lib/os-release', '/etc/lsb-release']);

const sourceFile: CommandRule = {
  name: 'source',
  kind: 'command',
  apply(cmd) {
    if (cmd.name !== 'source' && cmd.name !== '.') return null;
    const file = cmd.args[0];
    if (!file) return null;
    if (file.processSubstitution || file.text === null || file.text === '/dev/stdin' || file.text.startsWith('/dev/fd/')) {
      return { risk: 'destructive', reason: `${cmd.name} runs a script another command writes` };
    }
    return DATA_FILES.has(file.text) ? { reads: true } : null;
  },
};

const aliases: CommandRule = {
  name: 'aliases',
  kind: 'command',
  apply(cmd) {
    if (cmd.name !== 'alias') return null;
    const definitions = cmd.args.filter((a) => !isOption(a));
    if (definitions.some((a) => a.text === null)) return { risk: 'destructive', reason: 'an alias defined as something known only when it runs' };
    const code = definitions.filter((a) => a.text!.includes('=')).map((a) => a.text!.slice(a.text!.indexOf('=') + 1));
    return code.length ? { code } : { reads: true };
  },
};

const remoteShell: CommandRule = {
  name: 'remote-commands',
  kind: 'command',
  apply(cmd) {
    if (cmd.name === 'su' || cmd.name === 'runuser') {
      const at = cmd.args.findIndex((a) => a.text === '-c' || a.text === '--command');
      if (at === -1) return stdinProgram(cmd);
      const code = cmd.args[at + 1];
      return code?.text != null ? { code: [code.text] } : { risk: 'destructive', reason: `${cmd.name} -c runs code known only when it runs` };
    }
    if (cmd.name === 'watch') {
      const inner = after(cmd, ['-n', '-d', '--interval', '--differences'])[0];
      if (!inner) return null;
      return inner.words.some((w) => w.text === null) ? { risk: 'destructive', reason: 'watch runs code known only when it runs' } : { code: [inner.words.map((w) => w.text).join(' ')] };
    }
    if (cmd.name === 'flock') {
      const at = cmd.args.findIndex((a) => a.text === '-c' || a.text === '--command');
      if (at === -1) return null;
      const code = cmd.args[at + 1];
      return code?.text != null ? { code: [code.text] } : { risk: 'destructive', reason: 'flock -c runs code known only when it runs' };
    }
    if (cmd.name === 'at' || cmd.name === 'batch') {
      if (has(cmd.args, '-l', '-c', '-r', '-d') || cmd.name === 'at' && !cmd.args.length) return { reads: true };
      return has(cmd.args, '-f') ? null : stdinProgram(cmd) ?? { risk: 'change' };
    }
    if (cmd.name === 'tmux') {
      // A session's command is given as one word or as the words after the subcommand's options.
      const at = cmd.args.findIndex((a) => ['new', 'new-session', 'new-window', 'neww', 'split-window', 'splitw', 'respawn-pane', 'respawn-window', 'run-shell', 'run', 'send-keys', 'send', 'pipe-pane'].includes(a.text ?? ''));
      if (at === -1) return null;
      const words = after(toCommand(cmd, cmd.args.slice(at)), ['-s', '-n', '-t', '-c', '-x', '-y', '-F', '-e', '-l', '-S'])[0]?.words ?? [];
      const literal = words.filter((w) => !isOption(w));
      if (literal.some((w) => w.text === null)) return { risk: 'destructive', reason: 'tmux runs a command known only when it runs' };
      return literal.length ? { code: [literal.map((w) => w.text!).join(' '), ...literal.map((w) => w.text!)] } : null;
    }
    if (cmd.name === 'ssh') {
      const host = after(cmd, ['-b', '-c', '-D', '-E', '-e', '-F', '-I', '-i', '-J', '-L', '-l', '-m', '-O', '-o', '-p', '-Q', '-R', '-S', '-W', '-w'])[0];
      const remote = (host?.args ?? []).filter((w, i) => i > 0 || w.text !== '--');
      if (!remote.length) return null;
      return remote.some((w) => w.text === null) ? { risk: 'destructive', reason: 'ssh runs a remote command known only when it runs' } : { code: [remote.map((w) => w.text).join(' ')] };
    }
    return null;
  },
};

const awkProgram: CommandRule = {
  name: 'awk-program',
  kind: 'command',
  apply(cmd) {
    if (!cmd.name || !/^[gmn]?awk$/.test(cmd.name)) return null;
    if (has(cmd.args, '-f', '--file') || cmd.args.some((a) => /^-f./.test(a.text ?? ''))) return null;
    let i = 0;
    while (i < cmd.args.length && isOption(cmd.args[i]!)) i += ['-F', '-v', '--assign', '--field-separator'].includes(cmd.args[i]!.text!) ? 2 : 1;
    const program = cmd.args[i];
    if (!program) return { reads: true };
    if (program.text === null) return { risk: 'destructive', reason: 'awk runs a program known only when it runs' };
    const p = program.text;
    if (/\bsystem\s*\(|\|\s*getline|\|&|\bprintf?\b[^;}]*\|/.test(p)) return { risk: 'destructive', reason: 'awk runs a command of its own' };
    const target = /\bprintf?\b[^;}]*>>?\s*"([^"]*)"/.exec(p)?.[1];
    if (target !== undefined && isCriticalFile({ text: target, pattern: false, processSubstitution: false })) return { risk: 'destructive', reason: `awk writes to ${target}` };
    return /\bprintf?\b[^;}]*>/.test(p) ? null : { reads: true };
  },
};

const sedProgram: CommandRule = {
  name: 'sed-program',
  kind: 'command',
  apply(cmd) {
    if (cmd.name !== 'sed' && cmd.name !== 'gsed') return null;
    const scripts = cmd.args.filter((a, i) => i > 0 && ['-e', '--expression'].includes(cmd.args[i - 1]!.text ?? ''));
    const program = scripts.length ? scripts : operands(cmd.args).slice(0, 1);
    if (program.some((w) => w.text === null)) return { risk: 'destructive', reason: 'sed runs a script known only when it runs' };
    const source = program.map((w) => w.text).join('\n');
    if (/(^|[;\n{}]|^\s*[0-9$,]+\s*|\/\s*)e(\s|;|$)/.test(source) || /s([^\w\s\\])(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1[gpiImM0-9w]*e/.test(source)) {
      return { risk: 'destructive', reason: 'sed runs a command of its own (the e command)' };
    }
    if (hasFlag(cmd.args, 'i', '--in-place') || cmd.args.some((a) => a.text?.startsWith('--in-place')) || has(cmd.args, '-f', '--file')) return null;
    return /(^|[;\n{}]|\/[gpiImM0-9]*)\s*[wW]\s*\S/.test(source) ? null : { reads: true };
  },
};

const redirectWrites: CommandRule = {
  name: 'redirect-writes',
  kind: 'command',
  apply(cmd) {
    let result: RuleResult | null = null;
    for (const r of cmd.redirects) {
      const writes = ['>', '>>', '<>', '>|', '&>', '&>>'].includes(r.op) || (r.op === '>&' && !/^(\d+|-)$/.test(r.target.text ?? ''));
      if (!writes || (r.target.text !== null && (SINKS.has(r.target.text) || r.target.text.startsWith('/dev/fd/')))) continue;
      if (r.target.text === null || r.target.pattern) return { risk: 'destructive', reason: 'writes to a file known only when it runs' };
      if (isCriticalFile(r.target)) return { risk: 'destructive', reason: `writes onto ${r.target.text}` };
      result = { risk: 'change' };
    }
    return result;
  },
};

const recursiveDelete: CommandRule = {
  name: 'recursive-delete',
  kind: 'command',
  apply({ name, args, hiddenOperands }) {
    if (name !== 'rm' && name !== 'rmdir' && name !== 'unlink') return null;
    if (has(args, '--no-preserve-root')) return { risk: 'destructive', reason: 'rm with --no-preserve-root' };
    const targets = operands(args);
    const recursive = name === 'rm' && (hasFlag(args, 'r', '--recursive') || hasFlag(args, 'R'));
    if (recursive && hiddenOperands) return { risk: 'destructive', reason: 'recursive rm of paths known only when it runs' };
    const critical = targets.filter((t) => (recursive || t.pattern ? isCriticalDir(t) : t.text !== null && CRITICAL_FILE.test(posix.normalize(t.text))));
    if (critical.length) return { risk: 'destructive', reason: `${recursive ? 'recursive rm' : name} of a system path (${critical.map(describe).join(' ')})` };
    return null;
  },
};

const recursivePermissions: CommandRule = {
  name: 'recursive-permissions',
  kind: 'command',
  apply({ name, args, hiddenOperands }) {
    if (name !== 'chmod' && name !== 'chown' && name !== 'chgrp' && name !== 'chattr' && name !== 'setfacl') return null;
    // chmod's mode may look like an option (`-x`); chown's and chgrp's first operand is the owner.
    const targets = name === 'chmod' ? args.filter((a) => a.text === null || !/^[-+=]?[ugoa]*([-+=][rwxXst]*)+$|^[0-7]{3,4}$|^--?[A-Za-z]/.test(a.text)) : operands(args).slice(1);
    const recursive = hasFlag(args, 'R', '--recursive');
    if (recursive && (hiddenOperands || targets.some(isCriticalDir))) return { risk: 'destructive', reason: `recursive ${name} of a system path` };
    const files = targets.filter((t) => t.text !== null && CRITICAL_FILE.test(posix.normalize(t.text)));
    return files.length ? { risk: 'destructive', reason: `${name} of ${files.map(describe).join(' ')}` } : null;
  },
};

const diskTools: CommandRule = {
  name: 'disk-tools',
  kind: 'command',
  apply({ name, args, hiddenOperands }) {
    if (!name) return null;
    if (name === 'tar') {
      const file = args.find((a, i) => i > 0 && /^(-[A-Za-z]*f|--file|[a-eg-zA-Z]*f)$/.test(args[i - 1]!.text ?? '') && args[i - 1]!.text !== '-f-') ?? args.find((a) => a.text?.startsWith('--file='));
      const target = file?.text?.replace(/^--file=/, '');
      return target && BLOCK_DEVICE.test(target) ? { risk: 'destructive', reason: `tar writing to ${target}` } : null;
    }
    if (name.startsWith('mkfs') || ['mkswap', 'wipefs', 'mke2fs', 'fdisk', 'sfdisk', 'cfdisk', 'gdisk', 'sgdisk', 'parted', 'blkdiscard', 'badblocks'].includes(name)) {
      return { risk: 'destructive', reason: `${name} rewrites a disk` };
    }
    if (name === 'dd') {
      const of = args.find((a) => a.text === null || a.text.startsWith('of='));
      if (of && (of.text === null || /\$/.test(of.text))) return { risk: 'destructive', reason: 'dd writing to a file known only when it runs' };
      const target = of?.text?.slice(3);
      if (target && ((target.startsWith('/dev/') && !SINKS.has(target) && target !== '/dev/zero') || CRITICAL_FILE.test(posix.normalize(target)))) return { risk: 'destructive', reason: `dd writing to ${target}` };
      return null;
    }
    if (name === 'shred') {
      const lost = hiddenOperands || operands(args).some((a) => a.text === null || a.text.startsWith('/dev/') || CRITICAL_FILE.test(a.text));
      return lost ? { risk: 'destructive', reason: 'shred of a device, a system file or files known only when it runs' } : null;
    }
    return null;
  },
};

const criticalFileWrites: CommandRule = {
  name: 'critical-file-writes',
  kind: 'command',
  apply({ name, args }) {
    if (!name) return null;
    const targets = operands(args);
    const write = (() => {
      if (name === 'tee') return targets;
      if (name === 'truncate') return targets;
      if (['cp', 'mv', 'install', 'ln', 'rsync'].includes(name)) {
        const t = args.findIndex((a) => a.text === '-t' || a.text === '--target-directory');
        if (t !== -1 && args[t + 1]) return [args[t + 1]!];
        // mv also removes its sources.
        return name === 'mv' ? targets : targets.slice(-1);
      }
      return [];
    })();
    if (name === 'rsync' && args.some((a) => a.text?.startsWith('--delete')) && write.some(isCriticalDir)) return { risk: 'destructive', reason: `rsync --delete onto ${describe(write[0]!)}` };
    const hit = write.find((w) => (w.text === null ? true : w.pattern ? isCriticalDir(w) : CRITICAL_FILE.test(posix.normalize(w.text)) || BLOCK_DEVICE.test(w.text) || (name === 'mv' && isCriticalDir(w))));
    return hit ? { risk: 'destructive', reason: `${name} onto ${describe(hit)}` } : null;
  },
};

const power: CommandRule = {
  name: 'power',
  kind: 'command',
  apply({ name, args }) {
    if (name === 'shutdown' || name === 'reboot' || name === 'halt' || name === 'poweroff' || name === 'kexec') return { risk: 'destructive', reason: `${name} takes the server down` };
    if ((name === 'init' || name === 'telinit') && ['0', '6', 'S', 's', '1'].includes(text(args[0]) ?? '')) return { risk: 'destructive', reason: `${name} ${text(args[0])} takes the server down` };
    if (name === 'systemctl' && has(args, 'reboot', 'poweroff', 'halt', 'kexec', 'rescue', 'emergency', 'soft-reboot', 'isolate')) return { risk: 'destructive', reason: 'systemctl takes the server down' };
    if (name === 'systemctl' && has(args, 'stop', 'disable', 'mask', 'kill') && has(args, 'sshd', 'ssh', 'sshd.service', 'ssh.service', 'systemd-networkd', 'NetworkManager', 'networking')) {
      return { risk: 'destructive', reason: 'systemctl cuts the server off (ssh or the network)' };
    }
    return null;
  },
};

const firewall: CommandRule = {
  name: 'firewall',
  kind: 'command',
  apply({ name, args }) {
    if (name && /^ip6?tables(-legacy|-nft)?$/.test(name)) {
      if (hasFlag(args, 'F', '--flush') || hasFlag(args, 'X', '--delete-chain')) return { risk: 'destructive', reason: 'flushes the firewall' };
      if ((hasFlag(args, 'P', '--policy')) && has(args, 'DROP', 'REJECT')) return { risk: 'destructive', reason: 'a firewall policy that drops everything' };
      return null;
    }
    if (name === 'nft' && has(args, 'flush')) return { risk: 'destructive', reason: 'flushes the firewall' };
    if (name === 'ufw' && ['disable', 'reset'].includes(text(args[0]) ?? '')) return { risk: 'destructive', reason: `ufw ${text(args[0])} drops the firewall` };
    return null;
  },
};

const accounts: CommandRule = {
  name: 'accounts',
  kind: 'command',
  apply({ name, args }) {
    if (name === 'userdel' || name === 'deluser' || name === 'delgroup' || name === 'groupdel') return { risk: 'destructive', reason: `${name} deletes accounts` };
    if (name === 'passwd' && hasFlag(args, 'd', '--delete')) return { risk: 'destructive', reason: 'passwd -d removes a password' };
    if (name === 'crontab' && has(args, '-r')) return { risk: 'destructive', reason: 'crontab -r deletes every cron job' };
    return null;
  },
};

const killEverything: CommandRule = {
  name: 'kill-everything',
  kind: 'command',
  apply({ name, args }) {
    if (name === 'kill' && operands(args).concat(args.filter((a) => a.text === '-1')).some((a) => a.text === '-1' || a.text === '1')) return { risk: 'destructive', reason: 'kill of every process (or of init)' };
    if (name === 'killall5') return { risk: 'destructive', reason: 'killall5 stops every process' };
    if ((name === 'pkill' || name === 'killall') && has(args, 'sshd', 'init', 'systemd')) return { risk: 'destructive', reason: `${name} of ${args.map((a) => a.text).join(' ')}` };
    return null;
  },
};

const databases: CommandRule = {
  name: 'databases',
  kind: 'command',
  apply({ name, args }) {
    if (name === 'dropdb') return { risk: 'destructive', reason: 'drops a database' };
    if ((name === 'mysql' || name === 'mariadb' || name === 'psql' || name === 'sqlite3' || name === 'mongosh' || name === 'mongo') && args.some((a) => a.text === null || /\bdrop\s+(database|schema|table)\b|dropDatabase\s*\(/i.test(a.text))) {
      return { risk: 'destructive', reason: 'drops a database' };
    }
    if (name === 'redis-cli' && has(args, 'flushall', 'FLUSHALL', 'flushdb', 'FLUSHDB')) return { risk: 'destructive', reason: 'empties redis' };
    return null;
  },
};

const recursiveFunction: CommandRule = {
  name: 'recursive-function',
  kind: 'command',
  apply: (cmd) => (cmd.name && cmd.inFunctions.includes(cmd.name) ? { risk: 'destructive', reason: `the function ${cmd.name} calls itself (a fork bomb)` } : null),
};

/** Options whose value is a command the program runs (GTFOBins): `tar --to-command=…`, `ssh -o ProxyCommand=…`, `git -c core.pager=…`. */
const COMMAND_OPTION = /^(?:--to-command|--checkpoint-action=exec|--use-compress-program|--compress-program|--rsh|--unzip-command|--upload-pack|--receive-pack|--info-script|--new-volume-script|-oProxyCommand|-oLocalCommand|ProxyCommand|LocalCommand|KnownHostsCommand|core\.(?:pager|sshCommand|editor|fsmonitor|askPass|hooksPath)|(?:sequence|diff|credential|gpg)\.[A-Za-z.]*(?:command|program|helper|editor)|[A-Za-z:]*(?:Pre|Post)-Invoke(?:-Success)?::?|DPkg::Pre-Install-Pkgs::?)=(.*)$/s;
/** Options whose next word is such a command, per program. */
const COMMAND_OPTION_NEXT: Record<string, string[]> = { tar: ['-I', '--use-compress-program', '--to-command', '-F', '--info-script'], rsync: ['-e', '--rsh'], zip: ['-TT', '--unzip-command'], vim: ['-c', '--cmd'], vi: ['-c', '--cmd'], nvim: ['-c', '--cmd'], ex: ['-c'], less: ['+!'] };

const commandsInOptions: CommandRule = {
  name: 'commands-in-options',
  kind: 'command',
  apply({ name, args }) {
    const code: string[] = [];
    for (let i = 0; i < args.length; i += 1) {
      const a = args[i]!;
      if (a.text === null) continue;
      const value = COMMAND_OPTION.exec(a.text)?.[1] ?? ((name && COMMAND_OPTION_NEXT[name]?.includes(a.text)) ? args[i + 1]?.text ?? null : undefined);
      if (value === undefined) continue;
      if (value === null) return { risk: 'destructive', reason: `${name} runs a command known only when it runs` };
      // vim's `-c` takes an ex command: only `!cmd` runs a shell.
      if (name && ['vim', 'vi', 'nvim', 'ex'].includes(name)) {
        if (/^\s*:?\s*!/.test(value)) code.push(value.replace(/^\s*:?\s*!/, ''));
        continue;
      }
      code.push(value);
    }
    return code.length ? { code } : null;
  },
};

/** Variables that make every later command load or run code of someone's choosing. */
const CODE_VARIABLES = new Set(['LD_PRELOAD', 'LD_AUDIT', 'LD_LIBRARY_PATH', 'BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'PS4', 'SHELLOPTS', 'BASHOPTS', 'GCONV_PATH', 'PYTHONSTARTUP', 'PERL5OPT', 'NODE_OPTIONS']);

const environmentHijack: CommandRule = {
  name: 'environment-hijack',
  kind: 'command',
  apply({ assigns, name, args }) {
    const variables = [...assigns, ...(name === 'env' ? args.filter((a) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(a.text ?? '')).map((a) => a.text!.split('=')[0]!) : [])];
    const code = variables.find((v) => CODE_VARIABLES.has(v));
    if (code) return { risk: 'destructive', reason: `sets ${code}, which loads code into the commands that follow` };
    return variables.includes('PATH') || variables.includes('IFS') ? { risk: 'change' } : null;
  },
};

// ── line rules ─────────────────────────────────────────────────────────────────────────────────

const unparseable: LineRule = {
  name: 'unparseable',
  kind: 'line',
  apply: (facts) => (facts.parseError !== null ? { risk: 'destructive', reason: `the shell parser cannot read it (${facts.parseError})` } : null),
};

const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'aria2c', 'scp', 'rsync', 'ftp', 'tftp', 'nc', 'ncat', 'socat']);

const downloadThenRun: LineRule = {
  name: 'download-then-run',
  kind: 'line',
  apply({ commands }) {
    const download = commands.find((c) => c.name && DOWNLOADERS.has(c.name));
    const run = commands.find((c) => c.name && (SHELLS.has(c.name) || INTERPRETER.test(c.name) || c.name === 'source' || c.name === '.' || (c.words[0]?.text ?? '').startsWith('./')));
    return download && run ? { risk: 'destructive', reason: `runs a download (${download.name}) with ${run.name}` } : null;
  },
};

/** The paths a command writes, with what it writes there when the line shows it (a here-document). */
function writtenFiles(cmd: Command): Array<{ path: string | null; content: string | null }> {
  const body = cmd.redirects.find((r) => ['<<', '<<-', '<<<'].includes(r.op));
  const content = body ? (body.op === '<<<' ? body.target.text : body.heredoc?.text ?? null) : null;
  const redirected = cmd.redirects.filter((r) => ['>', '>>', '>|', '&>', '&>>'].includes(r.op)).map((r) => r.target.text);
  const copied = cmd.name && ['tee', 'cp', 'mv', 'install', 'curl', 'wget', 'dd'].includes(cmd.name) ? cmd.args.map((a) => a.text?.replace(/^of=/, '') ?? null) : [];
  return [...redirected.map((path) => ({ path, content: cmd.name === 'cat' || cmd.name === 'tee' || !cmd.name ? content : null })), ...copied.map((path) => ({ path, content: null }))];
}

/** The script file a command runs, if it runs one: `bash f`, `. f`, `./f`, `/tmp/f`. */
function scriptRun(cmd: Command): string | null {
  if (cmd.name === 'source' || cmd.name === '.') return cmd.args[0]?.text ?? null;
  if (cmd.name && (SHELLS.has(cmd.name) || INTERPRETER.test(cmd.name))) return operands(cmd.args)[0]?.text ?? null;
  const path = cmd.words[0]?.text;
  return path && path.includes('/') ? path : null;
}

const writeThenRun: LineRule = {
  name: 'write-then-run',
  kind: 'line',
  apply({ commands }) {
    const written = commands.flatMap(writtenFiles);
    const code: string[] = [];
    for (const cmd of commands) {
      const script = scriptRun(cmd);
      if (script === null) continue;
      const file = posix.normalize(script);
      const writes = written.filter((w) => w.path === null || posix.normalize(w.path) === file || basename(w.path) === basename(file));
      if (!writes.length) continue;
      if (writes.some((w) => w.content === null)) return { risk: 'destructive', reason: `runs ${script}, a script written by the same line` };
      code.push(...writes.map((w) => w.content!));
    }
    return code.length ? { code } : null;
  },
};

/** Every rule, in no particular order: each one's findings are combined, the highest risk wins. */
export const RULES: readonly Rule[] = [
  unparseable,
  downloadThenRun,
  writeThenRun,
  dynamicCommandName,
  environmentHijack,
  commandsInOptions,
  readOnlyCommands,
  wrappers,
  xargs,
  findActions,
  shellCode,
  interpreterCode,
  evalAndTrap,
  sourceFile,
  aliases,
  remoteShell,
  awkProgram,
  sedProgram,
  redirectWrites,
  recursiveDelete,
  recursivePermissions,
  diskTools,
  criticalFileWrites,
  power,
  firewall,
  accounts,
  killEverything,
  databases,
  recursiveFunction,
];

/** How deep code inside code (`bash -c "eval 'sh -c …'"`) is followed; deeper is destructive. */
const MAX_DEPTH = 4;

/** Classifies one line with the given rules (the policy uses RULES; the mutation test leaves one out). */
export function classify(line: string, rules: readonly Rule[] = RULES, depth = 0): Classification & { commands: Command[] } {
  const parsed = parseShell(line);
  const commandRules = rules.filter((r): r is CommandRule => r.kind === 'command');
  const lineRules = rules.filter((r): r is LineRule => r.kind === 'line');
  const all: Command[] = [];
  let risk: Risk = 'read';
  const reasons: string[] = [];
  const note = (result: RuleResult) => {
    if (!result.risk) return;
    risk = higherRisk(risk, result.risk);
    if (result.risk === 'destructive' && result.reason) reasons.push(result.reason);
  };
  const visit = (cmd: Command, hops: number) => {
    all.push(cmd);
    if (hops > 16) return note({ risk: 'destructive', reason: 'wrappers nested too deep to follow' });
    let known = cmd.words.length === 0;
    for (const rule of commandRules) {
      const result = rule.apply(cmd);
      if (!result) continue;
      note(result);
      if (result.reads) known = true;
      for (const inner of result.runs ?? []) {
        known = true;
        visit(inner, hops + 1);
      }
      for (const code of result.code ?? []) {
        known = true;
        if (depth >= MAX_DEPTH) {
          note({ risk: 'destructive', reason: 'code inside code nested too deep to follow' });
          continue;
        }
        const inner = classify(code, rules, depth + 1);
        all.push(...inner.commands);
        note({ risk: inner.risk });
        reasons.push(...inner.reasons);
      }
    }
    // A command no rule recognises may change anything (but is not known to destroy).
    if (!known) note({ risk: 'change' });
  };
  if (parsed.ok) for (const cmd of parsed.commands) visit(toCommand(cmd), 0);
  const facts: LineFacts = { parseError: parsed.ok ? null : parsed.error, commands: all };
  for (const rule of lineRules) {
    const result = rule.apply(facts);
    if (!result) continue;
    note(result);
    for (const code of result.code ?? []) {
      const inner = depth >= MAX_DEPTH ? { risk: 'destructive' as Risk, reasons: ['code inside code nested too deep to follow'] } : classify(code, rules, depth + 1);
      note({ risk: inner.risk });
      reasons.push(...inner.reasons);
    }
  }
  return { risk, reasons: [...new Set(reasons)], commands: all };
}
