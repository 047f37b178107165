import type { ShellWord } from '../../shell-syntax';
import { has, operands, text, type CommandRule } from './command';

// The allow-list of commands that only read.

const READ_ONLY = new Set([
  'cat', 'ls', 'df', 'du', 'free', 'uptime', 'ps', 'ss', 'netstat', 'grep', 'egrep', 'fgrep', 'zgrep', 'tail', 'head', 'less', 'more', 'journalctl',
  'uname', 'hostname', 'hostnamectl', 'date', 'timedatectl', 'who', 'w', 'id', 'whoami', 'last', 'lastlog', 'ping', 'getent', 'dig', 'host', 'nslookup',
  'lscpu', 'lsblk', 'nproc', 'findmnt', 'stat', 'file', 'which', 'type', 'printenv', 'echo', 'printf', 'wc', 'sort', 'uniq', 'cut', 'tr',
  'vmstat', 'iostat', 'top', 'pgrep', 'pidof', 'lsof', 'dpkg-query', 'rpm', 'test', '[', 'true', 'false', 'sleep', 'md5sum', 'sha1sum', 'sha256sum', 'diff',
  'comm', 'column', 'tac', 'nl', 'basename', 'dirname', 'realpath', 'readlink', 'lsmod', 'dmesg', 'sensors', 'blkid', 'xxd', 'od',
  // Builtins that only change the shell running the line, never the server.
  'cd', 'pwd', 'pushd', 'popd', 'dirs', 'read', 'set', 'shopt', 'unset', ':', 'wait', 'break', 'continue', 'return', 'exit', 'shift', 'getopts', 'umask', 'ulimit', 'hash', 'jobs',
  'seq', 'expr', 'base64', 'sha512sum', 'rev', 'fold', 'paste', 'join', 'numfmt', 'lsattr', 'getfacl', 'namei', 'zcat', 'jq', 'lspci', 'lsusb', 'arch', 'locale', 'getconf', 'whereis', 'cksum', 'strings', 'hexdump', 'mpstat', 'sar', 'tree', 'traceroute', 'tracepath',
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

const startsWithAny = (args: ShellWord[], prefixes: string[]) => args.some((a) => a.text !== null && prefixes.some((p) => a.text!.startsWith(p)));

/** Readers that write, change or remove something when given these words. */
const WRITES_WHEN: Record<string, (args: ShellWord[]) => boolean> = {
  sort: (args) => has(args, '-o') || startsWithAny(args, ['--output']),
  uniq: (args) => operands(args).length > 1,
  xxd: (args) => operands(args).length > 1,
  tree: (args) => has(args, '-o'),
  sar: (args) => has(args, '-o'),
  date: (args) => has(args, '-s') || startsWithAny(args, ['--set']),
  hostname: (args) => operands(args).length > 0 || has(args, '-F', '--file', '-b', '--boot'),
  hostnamectl: (args) => startsWithAny(args, ['set-', 'hostname']),
  timedatectl: (args) => startsWithAny(args, ['set-']),
  journalctl: (args) => startsWithAny(args, ['--vacuum', '--rotate', '--flush', '--sync', '--relinquish-var', '--setup-keys', '--update-catalog']),
  dmesg: (args) => has(args, '-c', '-C', '--clear', '--read-clear', '-n', '--console-level', '-D', '-E', '--console-off', '--console-on'),
  ss: (args) => has(args, '-K', '--kill') || args.some((a) => /^-[A-Za-z]*K/.test(a.text ?? '')),
  sensors: (args) => has(args, '-s', '--set'),
  // rpm reads only when it queries or verifies.
  rpm: (args) => !/^(-q|--query|-V|--verify)/.test(text(args[0]) ?? ''),
  git: (args) => {
    const rest = text(args[0]) === '-C' ? args.slice(2) : args;
    const [sub, ...more] = rest;
    const listing = ['-a', '-r', '-v', '-vv', '--list', '--all', '--remotes', '--show-current', '--merged', '--no-merged', '--contains', '--verbose'];
    if (sub?.text === 'branch') return more.some((a) => a.text === null || !listing.includes(a.text));
    if (sub?.text === 'remote') return more.length > 0 && !['-v', '--verbose', 'show', 'get-url'].includes(text(more[0]) ?? '');
    return startsWithAny(more, ['--output']);
  },
};

export const readOnlyCommands: CommandRule = {
  name: 'read-only-commands',
  kind: 'command',
  apply({ name, args }) {
    if (!name) return null;
    const reads = (() => {
      if (name === 'find') return !has(args, '-delete', '-exec', '-execdir', '-ok', '-okdir', '-fprint', '-fprintf', '-fls');
      if (WRITES_WHEN[name]?.(args)) return false;
      if (name === 'curl') {
        const writes = ['-o', '-O', '--output', '--remote-name', '--output-dir', '-D', '--dump-header', '-c', '--cookie-jar', '--trace', '--trace-ascii', '--stderr', '--libcurl'];
        const sends = ['-X', '--request', '-d', '--data', '--data-binary', '--data-raw', '--data-urlencode', '-F', '--form', '-T', '--upload-file', '-K', '--config', '--json'];
        // Short options may be bunched (`-sSo file`).
        return !has(args, ...writes, ...sends) && !args.some((a) => /^-[a-zA-Z]*[oODcTdFXK]$/.test(a.text ?? '')) && !startsWithAny(args, ['--output=', '--data', '--form=', '--request=', '--upload-file=', '--json=']);
      }
      if (name === 'tar') return args.some((a) => /^-?[a-z]*t[a-z]*$/.test(a.text ?? '') || a.text === '--list');
      if (name === 'mount') return args.length === 0;
      if (name === 'rc-status') return true;
      if (READ_ONLY.has(name)) return true;
      const subcommands = READ_SUBCOMMANDS[name];
      // `git -C dir status`, `service nginx status`, `rc-service nginx status`: the subcommand comes after a directory or a service name.
      const rest = name === 'git' && text(args[0]) === '-C' ? args.slice(2) : (name === 'service' || name === 'rc-service') && text(args[0]) !== '--status-all' ? args.slice(1) : args;
      const first = text(rest[0]);
      return !!subcommands && first !== null && subcommands.includes(first) && (name !== 'ip' || !has(args, 'add', 'del', 'delete', 'set', 'flush', 'change', 'replace'));
    })();
    return reads ? { reads: true } : null;
  },
};
