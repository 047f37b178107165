import { posix } from 'node:path';
import { BLOCK_DEVICE, CRITICAL_FILE, describe, has, hasFlag, isCriticalDir, isCriticalFile, operands, SINKS, text, type CommandRule, type RuleResult } from './command';

// What destroys a server, or opens it up: deletions, disks, power, firewall, accounts, processes, databases, writes.

export const redirectWrites: CommandRule = {
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

export const recursiveDelete: CommandRule = {
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

export const recursivePermissions: CommandRule = {
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

export const diskTools: CommandRule = {
  name: 'disk-tools',
  kind: 'command',
  apply({ name, args, hiddenOperands }) {
    if (!name) return null;
    if (name === 'tar') {
      const file = args.find((a, i) => i > 0 && /^(-[A-Za-z]*f|--file|[a-eg-zA-Z]*f)$/.test(args[i - 1]!.text ?? '') && args[i - 1]!.text !== '-f-') ?? args.find((a) => a.text?.startsWith('--file='));
      const target = file?.text?.replace(/^--file=/, '');
      return target && BLOCK_DEVICE.test(target) ? { risk: 'destructive', reason: `tar writing to ${target}` } : null;
    }
    const sub = text(args[0]);
    if (((name === 'zfs' || name === 'zpool') && sub === 'destroy') || ['lvremove', 'vgremove', 'pvremove'].includes(name)) return { risk: 'destructive', reason: `${name} ${name.startsWith('z') ? 'destroy ' : ''}deletes storage` };
    if ((name === 'mdadm' && has(args, '--zero-superblock')) || (name === 'cryptsetup' && ['luksErase', 'erase', 'luksKillSlot'].includes(sub ?? ''))) return { risk: 'destructive', reason: `${name} erases a disk's metadata` };
    if (name === 'umount' && operands(args).some(isCriticalDir)) return { risk: 'destructive', reason: 'umount of a system directory' };
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

export const criticalFileWrites: CommandRule = {
  name: 'critical-file-writes',
  kind: 'command',
  apply({ name, args }) {
    if (!name) return null;
    const targets = operands(args);
    const write = (() => {
      if (name === 'tee') return targets;
      if (name === 'truncate') return targets;
      if (name === 'sort') return [...args.filter((a, i) => i > 0 && args[i - 1]!.text === '-o'), ...args.filter((a) => a.text?.startsWith('--output=')).map((a) => ({ ...a, text: a.text!.slice('--output='.length) }))];
      if (['cp', 'mv', 'install', 'ln', 'rsync'].includes(name)) {
        const t = args.findIndex((a) => a.text === '-t' || a.text === '--target-directory');
        if (t !== -1 && args[t + 1]) return [args[t + 1]!];
        // mv also removes its sources (those the line names: a source known only when it runs is not counted).
        return name === 'mv' ? [...targets.slice(0, -1).filter((w) => w.text !== null), ...targets.slice(-1)] : targets.slice(-1);
      }
      return [];
    })();
    if (name === 'rsync' && args.some((a) => a.text?.startsWith('--delete')) && write.some(isCriticalDir)) return { risk: 'destructive', reason: `rsync --delete onto ${describe(write[0]!)}` };
    const hit = write.find((w) => (w.text === null ? true : w.pattern ? isCriticalDir(w) : CRITICAL_FILE.test(posix.normalize(w.text)) || BLOCK_DEVICE.test(w.text) || (name === 'mv' && isCriticalDir(w))));
    return hit ? { risk: 'destructive', reason: `${name} onto ${describe(hit)}` } : null;
  },
};

export const power: CommandRule = {
  name: 'power',
  kind: 'command',
  apply({ name, args }) {
    if (name === 'shutdown' || name === 'reboot' || name === 'halt' || name === 'poweroff' || name === 'kexec') return { risk: 'destructive', reason: `${name} takes the server down` };
    if ((name === 'init' || name === 'telinit') && ['0', '6', 'S', 's', '1'].includes(text(args[0]) ?? '')) return { risk: 'destructive', reason: `${name} ${text(args[0])} takes the server down` };
    if (name === 'systemctl' && has(args, 'reboot', 'poweroff', 'halt', 'kexec', 'rescue', 'emergency', 'soft-reboot', 'isolate')) return { risk: 'destructive', reason: 'systemctl takes the server down' };
    if (name === 'systemctl' && has(args, 'stop', 'disable', 'mask', 'kill') && has(args, 'sshd', 'ssh', 'sshd.service', 'ssh.service', 'systemd-networkd', 'NetworkManager', 'networking')) {
      return { risk: 'destructive', reason: 'systemctl cuts the server off (ssh or the network)' };
    }
    const down = (name === 'ip' && has(args, 'link') && has(args, 'down')) || ((name === 'ifconfig' || name === 'ifdown') && (name === 'ifdown' || has(args, 'down'))) || (name === 'nmcli' && has(args, 'networking') && has(args, 'off'));
    return down ? { risk: 'destructive', reason: `${name} takes a network interface down (and the server off the network)` } : null;
  },
};

export const firewall: CommandRule = {
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

export const accounts: CommandRule = {
  name: 'accounts',
  kind: 'command',
  apply({ name, args }) {
    if (name === 'userdel' || name === 'deluser' || name === 'delgroup' || name === 'groupdel') return { risk: 'destructive', reason: `${name} deletes accounts` };
    if ((name === 'useradd' || name === 'usermod' || name === 'adduser') && args.some((a, i) => (a.text === '0' && ['-u', '--uid'].includes(args[i - 1]?.text ?? '')) || a.text === '--uid=0')) {
      return { risk: 'destructive', reason: `${name} gives an account uid 0 (a second root)` };
    }
    if (name === 'passwd' && hasFlag(args, 'd', '--delete')) return { risk: 'destructive', reason: 'passwd -d removes a password' };
    if (name === 'crontab' && has(args, '-r')) return { risk: 'destructive', reason: 'crontab -r deletes every cron job' };
    return null;
  },
};

export const killEverything: CommandRule = {
  name: 'kill-everything',
  kind: 'command',
  apply({ name, args }) {
    if (name === 'kill' && operands(args).concat(args.filter((a) => a.text === '-1')).some((a) => a.text === '-1' || a.text === '1')) return { risk: 'destructive', reason: 'kill of every process (or of init)' };
    if (name === 'killall5') return { risk: 'destructive', reason: 'killall5 stops every process' };
    if ((name === 'pkill' || name === 'killall') && has(args, 'sshd', 'init', 'systemd')) return { risk: 'destructive', reason: `${name} of ${args.map((a) => a.text).join(' ')}` };
    return null;
  },
};

export const databases: CommandRule = {
  name: 'databases',
  kind: 'command',
  apply({ name, args }) {
    if (name === 'dropdb') return { risk: 'destructive', reason: 'drops a database' };
    if (name === 'mysql' || name === 'mariadb' || name === 'psql' || name === 'sqlite3' || name === 'mongosh' || name === 'mongo') {
      if (args.some((a) => a.text !== null && /\bdrop\s+(database|schema|table)\b|dropDatabase\s*\(/i.test(a.text))) return { risk: 'destructive', reason: 'drops a database' };
      // SQL given on the command line but known only when it runs.
      const sql = args.filter((a, i) => i > 0 && ['-e', '-c', '--execute', '--command', '--eval', '-cmd'].includes(args[i - 1]!.text ?? ''));
      if (sql.some((a) => a.text === null)) return { risk: 'destructive', reason: `${name} runs SQL known only when it runs` };
    }
    if (name === 'redis-cli' && has(args, 'flushall', 'FLUSHALL', 'flushdb', 'FLUSHDB')) return { risk: 'destructive', reason: 'empties redis' };
    return null;
  },
};

/** Packages without which the server does not boot, cannot be reached, or cannot be administered. */
const ESSENTIAL_PACKAGE = /^(openssh(-server|-client)?|ssh|sshd|systemd|systemd-sysv|init|linux-image.*|linux-generic|kernel(-core)?|grub.*|sudo|bash|coreutils|libc6|glibc|util-linux|login|passwd|dpkg|apt|rpm|yum|dnf|apk-tools|busybox|openrc|network-manager|netplan\.io|ifupdown|iproute2)$/;

export const essentialPackages: CommandRule = {
  name: 'essential-packages',
  kind: 'command',
  apply({ name, args }) {
    const removes: Record<string, string[]> = { apt: ['remove', 'purge', 'autoremove'], 'apt-get': ['remove', 'purge', 'autoremove'], aptitude: ['remove', 'purge'], dpkg: ['-r', '-P', '--remove', '--purge'], yum: ['remove', 'erase'], dnf: ['remove', 'erase'], zypper: ['remove', 'rm'], apk: ['del'], pacman: ['-R', '-Rs', '-Rns', '-Rdd'], rpm: ['-e', '--erase'] };
    const verbs = name ? removes[name] : undefined;
    if (!verbs || !args.some((a) => a.text !== null && verbs.includes(a.text))) return null;
    const packages = operands(args).filter((a) => !verbs.includes(a.text ?? ''));
    const essential = packages.find((p) => p.text === null || p.pattern || ESSENTIAL_PACKAGE.test(p.text.replace(/[:=].*$/, '')));
    return essential ? { risk: 'destructive', reason: `${name} removes ${essential.text ?? 'packages known only when it runs'}, which the server needs` } : null;
  },
};

export const recursiveFunction: CommandRule = {
  name: 'recursive-function',
  kind: 'command',
  apply: (cmd) => (cmd.name && cmd.inFunctions.includes(cmd.name) ? { risk: 'destructive', reason: `the function ${cmd.name} calls itself (a fork bomb)` } : null),
};
