import { has, text, type CommandRule } from './command';

// The allow-list of commands that only read.

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

export const readOnlyCommands: CommandRule = {
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
      // `git -C dir status`, `service nginx status`, `rc-service nginx status`: the subcommand comes after a directory or a service name.
      const rest = name === 'git' && text(args[0]) === '-C' ? args.slice(2) : (name === 'service' || name === 'rc-service') && text(args[0]) !== '--status-all' ? args.slice(1) : args;
      const first = text(rest[0]);
      return !!subcommands && first !== null && subcommands.includes(first) && (name !== 'ip' || !has(args, 'add', 'del', 'delete', 'set', 'flush', 'change', 'replace'));
    })();
    return reads ? { reads: true } : null;
  },
};
