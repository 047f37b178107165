import { posix } from 'node:path';
import type { ShellCommand, ShellWord } from '../../shell-syntax';
import type { Risk } from '../types';

// What the classification rules see and say, and the word and path helpers they share.

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

export const text = (w: ShellWord | undefined) => w?.text ?? null;

export const basename = (word: string) => word.slice(word.lastIndexOf('/') + 1);

export const isOption = (w: ShellWord) => !!w.text && w.text.startsWith('-') && w.text !== '-';

export const operands = (args: ShellWord[]) => {
  const end = args.findIndex((a) => a.text === '--');
  return end === -1 ? args.filter((a) => !isOption(a)) : [...args.slice(0, end).filter((a) => !isOption(a)), ...args.slice(end + 1)];
};

export const hasFlag = (args: ShellWord[], short: string, long?: string) =>
  args.some((a) => !!a.text && ((/^-[^-]/.test(a.text) && a.text.slice(1).includes(short)) || (long !== undefined && a.text === long)));

export const has = (args: ShellWord[], ...values: string[]) => args.some((a) => a.text !== null && values.includes(a.text));

const CRITICAL_DIRS = new Set(['/', '/bin', '/boot', '/dev', '/etc', '/home', '/lib', '/lib32', '/lib64', '/opt', '/proc', '/root', '/sbin', '/srv', '/sys', '/usr', '/usr/bin', '/usr/sbin', '/usr/lib', '/usr/local', '/var', '/var/lib']);

/** Files whose loss or rewrite breaks the server or hands it to someone else. */
export const CRITICAL_FILE = /^(\/etc\/(passwd|shadow|group|gshadow|sudoers|sudoers\.d(\/.*)?|fstab|crontab|ld\.so\.preload|ld\.so\.conf|pam\.d(\/.*)?|ssh\/sshd_config|hosts|resolv\.conf|profile|bash\.bashrc|environment)|\/boot\/.*|\/(usr\/)?s?bin\/.*|\/(usr\/)?lib(32|64)?\/.*|.*\/\.ssh\/authorized_keys2?|\/root\/\.(bashrc|profile)|\/proc\/sysrq-trigger)$/;

export const BLOCK_DEVICE = /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|dm-\d|md\d|loop\d|mapper\/|disk\/|mem$|kmem$|port$)/;

export const SINKS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty']);

/** A directory whose recursive removal (or permission change) breaks the server; unknown paths count. */
export function isCriticalDir(w: ShellWord): boolean {
  if (w.text === null) return true;
  let p = w.text;
  if (w.pattern) {
    // A pattern can match a system directory only if what precedes its first wildcard is one (or the
    // root); a bare pattern of wildcards alone (`*`, `.*`) matches whatever the working directory holds.
    const fixed = p.slice(0, p.search(/[*?[{]/));
    if (!fixed.includes('/')) return /^[*?.[\]{},]*$/.test(p);
    p = fixed.slice(0, fixed.lastIndexOf('/') + 1) || '/';
  }
  if (/^~[^/]*\/?$/.test(p)) return true;
  if (!p.startsWith('/')) return p === '.' || p === '*' || p === '..' || p.startsWith('../');
  const normal = posix.normalize(p).replace(/\/+$/, '') || '/';
  return CRITICAL_DIRS.has(normal);
}

export const isCriticalFile = (w: ShellWord) => w.text === null || w.pattern || CRITICAL_FILE.test(posix.normalize(w.text)) || BLOCK_DEVICE.test(w.text) || isCriticalDir(w);

/** A directory a copy must not land on (a transfer's target). */
export const isSystemDirectory = (path: string) => isCriticalDir({ text: path, pattern: false, processSubstitution: false });

export const describe = (w: ShellWord) => w.text ?? 'a path known only when it runs';

export function toCommand(base: ShellCommand, words: ShellWord[] = base.words, hiddenOperands = false): Command {
  const first = words[0];
  const name = !first ? '' : first.text === null || first.pattern ? null : basename(first.text);
  return { ...base, words, name, args: words.slice(1), hiddenOperands };
}

/** A wrapper's inner command: the words after its options (and the values some options take) and `skip` positionals. */
export function after(cmd: Command, valued: string[], skip = 0, hiddenOperands = cmd.hiddenOperands): Command[] {
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

/** Shells, versioned names included (`bash5`, `ksh93`, `zsh-5.9`). */
export const SHELL = /^(sh|bash|rbash|zsh|dash|ksh|mksh|oksh|loksh|pdksh|ash|hush|posh|fish|csh|tcsh|yash|elvish|nu|xonsh)[0-9.-]*$/;

export const INTERPRETER = /^(python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|irb|node[0-9.]*|nodejs|deno|bun|php[0-9.]*|lua[0-9.]*|luajit|tclsh|wish|pwsh|powershell|Rscript|julia|guile|expect)$/;

/** Where a command's standard input comes from, when that is what it runs as a program. */
export function stdinProgram(cmd: Command): RuleResult | null {
  const input = [...cmd.redirects].reverse().find((r) => (['<', '<<', '<<-', '<<<', '<>', '<&'].includes(r.op) && (r.fd === null || r.fd === '0')) || (r.op === '>&' && r.fd === '0'));
  const what = cmd.name ?? 'a shell';
  // `bash <&5`, `bash -i 0>&1`, `bash < /dev/tcp/host/port`: a program from another descriptor or the network.
  if (input && (input.op === '<&' || input.op === '>&' || /^\/dev\/(tcp|udp)\//.test(input.target.text ?? ''))) {
    return input.target.text === '0' ? null : { risk: 'destructive', reason: `${what} runs whatever another descriptor or the network sends` };
  }
  if (input && (input.op === '<<' || input.op === '<<-' || input.op === '<<<')) {
    const body = input.op === '<<<' ? input.target : input.heredoc;
    return body?.text != null ? { code: [body.text] } : { risk: 'destructive', reason: `${what} runs a here-document known only when it runs` };
  }
  if (input) return input.target.processSubstitution || input.target.text === null ? { risk: 'destructive', reason: `${what} runs a program another command writes` } : null;
  if (cmd.piped) return { risk: 'destructive', reason: `a pipe into ${what} runs whatever the pipe carries` };
  return null;
}
