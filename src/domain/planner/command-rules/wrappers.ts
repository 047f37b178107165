import { after, has, hasFlag, isCriticalDir, isCriticalFile, isOption, describe, stdinProgram, toCommand, type Command, type CommandRule } from './command';
import type { Risk } from '../types';

// Commands that run other commands: wrappers, xargs, find's actions, remote and scheduled commands, commands hidden in options.

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

export const wrappers: CommandRule = {
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

export const xargs: CommandRule = {
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
    const inner = after(cmd, ['-I', '-d', '-n', '-L', '-l', '-P', '-s', '-E', '-e', '-a', '--arg-file', '--delimiter', '--max-args', '--max-procs'], 0, true);
    // With no command xargs echoes its input.
    if (!inner.length) return { reads: true };
    // `-I R` (`-i`, `--replace`): every word holding R is made of the input, known only when it runs.
    const at = cmd.args.findIndex((a) => a.text === '-I');
    const replace = at !== -1 ? cmd.args[at + 1]?.text : cmd.args.map((a) => /^-I(.+)$|^--replace=(.+)$/.exec(a.text ?? '')).find(Boolean)?.slice(1).find(Boolean) ?? (has(cmd.args, '-i', '--replace') ? '{}' : undefined);
    if (replace === null) return { risk: 'destructive', reason: 'xargs replaces a string known only when it runs' };
    if (!replace) return { runs: inner };
    const words = inner[0]!.words.map((w) => (w.text?.includes(replace) ? { ...w, text: null } : w));
    return { runs: [toCommand(inner[0]!, words, true)] };
  },
};

export const findActions: CommandRule = {
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

export const remoteShell: CommandRule = {
  name: 'remote-commands',
  kind: 'command',
  apply(cmd) {
    if (cmd.name === 'su' || cmd.name === 'runuser' || cmd.name === 'script') {
      const at = cmd.args.findIndex((a) => a.text === '--command' || /^-[A-Za-z]*c$/.test(a.text ?? ''));
      const attached = cmd.args.find((a) => a.text?.startsWith('--command='));
      if (attached) return { code: [attached.text!.slice('--command='.length)] };
      if (at === -1) return cmd.name === 'script' ? null : stdinProgram(cmd);
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

/** Options whose value is a command the program runs (GTFOBins): `tar --to-command=…`, `ssh -o ProxyCommand=…`, `git -c core.pager=…`. */
const COMMAND_OPTION = /^(?:--to-command|--checkpoint-action=exec|--use-compress-program|--compress-program|--rsh|--unzip-command|--upload-pack|--receive-pack|--info-script|--new-volume-script|-oProxyCommand|-oLocalCommand|ProxyCommand|LocalCommand|KnownHostsCommand|core\.(?:pager|sshCommand|editor|fsmonitor|askPass|hooksPath)|(?:sequence|diff|credential|gpg)\.[A-Za-z.]*(?:command|program|helper|editor)|[A-Za-z:]*(?:Pre|Post)-Invoke(?:-Success)?::?|DPkg::Pre-Install-Pkgs::?)=(.*)$/s;

/** Options whose next word is such a command, per program. */
const COMMAND_OPTION_NEXT: Record<string, string[]> = { tar: ['-I', '--use-compress-program', '--to-command', '-F', '--info-script'], rsync: ['-e', '--rsh'], zip: ['-TT', '--unzip-command'], vim: ['-c', '--cmd'], vi: ['-c', '--cmd'], nvim: ['-c', '--cmd'], ex: ['-c'], less: ['+!'] };

export const commandsInOptions: CommandRule = {
  name: 'commands-in-options',
  kind: 'command',
  apply({ name, args }) {
    // A program handed to the network: whoever connects runs it (a reverse or bind shell).
    if ((name === 'nc' || name === 'ncat' || name === 'netcat') && args.some((a) => a.text === null || /^-[A-Za-z]*[ec]$|^--(sh-|lua-)?exec\b/.test(a.text))) {
      return { risk: 'destructive', reason: `${name} hands a program to the network` };
    }
    if (name === 'socat' && args.some((a) => a.text === null || /^(exec|system):/i.test(a.text))) return { risk: 'destructive', reason: 'socat hands a program to the network' };
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
