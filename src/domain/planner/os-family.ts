import { shellQuote } from '../shell';
import type { OsFamily, ServerContext } from './types';

/** The package and service tooling a server's OS name implies. */
export function osFamily(server: ServerContext): OsFamily {
  const name = (server.os?.name ?? '').toLowerCase();
  if (/debian|ubuntu|mint|raspbian|pop!?_os|kali/.test(name)) return 'debian';
  if (/red hat|rhel|centos|rocky|alma|fedora|oracle|amazon/.test(name)) return 'rhel';
  if (/alpine/.test(name)) return 'alpine';
  return 'unknown';
}

/** Commands that change a system run through `sudo -n` for a login other than root (never prompting). */
export const privileged = (server: ServerContext, command: string) => (server.username === 'root' ? command : `sudo -n ${command}`);

type PackageAction = 'install' | 'remove' | 'upgrade' | 'upgradable' | 'installed';

const PACKAGE_COMMANDS: Record<Exclude<OsFamily, 'unknown'>, Record<PackageAction, (pkg: string) => string>> = {
  debian: {
    install: (p) => `env DEBIAN_FRONTEND=noninteractive apt-get install -y ${p}`,
    remove: (p) => `env DEBIAN_FRONTEND=noninteractive apt-get remove -y ${p}`,
    upgrade: () => 'apt-get update && env DEBIAN_FRONTEND=noninteractive apt-get upgrade -y',
    upgradable: () => 'apt list --upgradable 2>/dev/null',
    installed: (p) => `dpkg-query -W -f='\${Package} \${Version} \${Status}\\n' ${p}`,
  },
  rhel: {
    install: (p) => `dnf install -y ${p}`,
    remove: (p) => `dnf remove -y ${p}`,
    upgrade: () => 'dnf upgrade -y',
    upgradable: () => 'dnf check-update; test $? -ne 1',
    installed: (p) => `rpm -q ${p}`,
  },
  alpine: {
    install: (p) => `apk add ${p}`,
    remove: (p) => `apk del ${p}`,
    upgrade: () => 'apk update && apk upgrade',
    upgradable: () => "apk version -l '<'",
    installed: (p) => `apk info -e ${p}`,
  },
};

/** The package command for the server's family; for an unknown OS, the first package manager found. */
export function packageCommand(server: ServerContext, action: PackageAction, pkg = ''): string {
  const family = osFamily(server);
  const changes = action === 'install' || action === 'remove' || action === 'upgrade';
  const wrap = (command: string) => (changes ? privileged(server, command.includes('&&') ? `sh -c ${JSON.stringify(command)}` : command) : command);
  if (family !== 'unknown') return wrap(PACKAGE_COMMANDS[family][action](pkg));
  const branches = (['debian', 'rhel', 'alpine'] as const).map((f, i) => {
    const tool = { debian: 'apt-get', rhel: 'dnf', alpine: 'apk' }[f];
    return `${i === 0 ? 'if' : 'elif'} command -v ${tool} >/dev/null 2>&1; then ${wrap(PACKAGE_COMMANDS[f][action](pkg))}`;
  });
  return `${branches.join('; ')}; else echo 'no supported package manager (apt, dnf, apk) found' >&2; exit 1; fi`;
}

type ServiceAction = 'start' | 'stop' | 'restart' | 'reload' | 'status' | 'enable' | 'disable' | 'is-active';

/** systemd everywhere but Alpine, which uses OpenRC. */
export function serviceCommand(server: ServerContext, action: ServiceAction, service: string): string {
  const readOnly = action === 'status' || action === 'is-active';
  if (osFamily(server) === 'alpine') {
    const command =
      action === 'enable' ? `rc-update add ${service}` : action === 'disable' ? `rc-update del ${service}` : action === 'is-active' ? `rc-service ${service} status` : `rc-service ${service} ${action}`;
    return readOnly ? command : privileged(server, command);
  }
  if (action === 'status') return `systemctl status ${service} --no-pager --lines=20`;
  if (action === 'is-active') return `systemctl is-active ${service}`;
  return privileged(server, `systemctl ${action} ${service}`);
}

/** Whether a server's log can be read from a point in time (the journal can; OpenRC's plain /var/log/messages cannot). */
export const logsHaveTimes = (server: ServerContext) => osFamily(server) !== 'alpine';

/**
 * A service's recent log: the journal (from `since`, a journalctl time such as "2 hours ago" or
 * "yesterday", and to `until` when given), or on OpenRC the system log filtered by name (no time filter: see logsHaveTimes).
 */
export function serviceLogCommand(server: ServerContext, service: string | null, { errorsOnly, lines, since = null, until = null }: { errorsOnly: boolean; lines: number; since?: string | null; until?: string | null }): string {
  if (osFamily(server) === 'alpine') {
    const filter = service ? ` | grep -i -- ${service}` : '';
    return `tail -n 2000 /var/log/messages${filter}${errorsOnly ? ' | grep -iE "err|crit|fail"' : ''} | tail -n ${lines}`;
  }
  return `journalctl${service ? ` -u ${service}` : ''}${errorsOnly ? ' -p err' : ''}${since ? ` --since ${shellQuote(since)}` : ''}${until ? ` --until ${shellQuote(until)}` : ''} -n ${lines} --no-pager`;
}

/** The names of the installed packages, one per line, sorted: what two servers' package lists are compared by. */
export function packageListCommand(server: ServerContext): string {
  const commands = { debian: "dpkg-query -W -f='${Package}\\n'", rhel: "rpm -qa --qf '%{NAME}\\n'", alpine: 'apk info' };
  const family = osFamily(server);
  if (family !== 'unknown') return `${commands[family]} | sort`;
  return `{ ${commands.debian} 2>/dev/null || ${commands.rhel} 2>/dev/null || ${commands.alpine}; } | sort`;
}

/** A command run as another system user (a database's own account): runuser for root, else sudo without a prompt. */
export const asUser = (server: ServerContext, user: string, command: string) =>
  server.username === 'root' ? `runuser -u ${user} -- ${command}` : `sudo -n -u ${user} ${command}`;
