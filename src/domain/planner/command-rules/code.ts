import type { ShellWord } from '../../shell-syntax';
import { has, hasFlag, isCriticalFile, isOption, operands, INTERPRETER, SHELL, stdinProgram, type CommandRule } from './command';

// Code handed to a shell or another interpreter, and what the policy cannot read of it.

export const dynamicCommandName: CommandRule = {
  name: 'dynamic-command-name',
  kind: 'command',
  apply: (cmd) => (cmd.name === null ? { risk: 'destructive', reason: 'the command name is an expansion or a pattern, known only when it runs' } : null),
};

/**
 * `sh -c 'CODE' name a b`: CODE's `$0`, `$1`, `${2}`… are the words after it. Those the line shows
 * plainly (no quoting needed) are put in place, so `rm "$1"` is judged with its real operand; the
 * others stay expansions (known only when it runs).
 */
function withPositionals(code: string, words: ShellWord[]): string {
  return code.replace(/\$\{([0-9]+)\}|\$([0-9])/g, (whole, braced: string | undefined, bare: string | undefined) => {
    const value = words[Number(braced ?? bare)]?.text;
    return value != null && /^[A-Za-z0-9@%+=:,./_-]+$/.test(value) ? value : whole;
  });
}

export const shellCode: CommandRule = {
  name: 'shell-code',
  kind: 'command',
  apply(cmd) {
    if (!cmd.name || !SHELL.test(cmd.name)) return null;
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
      if (first?.text == null) return { risk: 'destructive', reason: `${cmd.name} -c runs code known only when it runs` };
      return { code: [withPositionals(first.text, cmd.args.slice(i + 1))] };
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

const INLINE_FLAGS = /^-(c|e|E|r|p|x|-eval|-command|-exec|-print)$|^-[a-zA-Z]*[ceE]$/;

export const interpreterCode: CommandRule = {
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

export const evalAndTrap: CommandRule = {
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

export const sourceFile: CommandRule = {
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

export const aliases: CommandRule = {
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

export const awkProgram: CommandRule = {
  name: 'awk-program',
  kind: 'command',
  apply(cmd) {
    if (!cmd.name || !/^[gmn]?awk$/.test(cmd.name)) return null;
    if (has(cmd.args, '-f', '--file') || cmd.args.some((a) => /^-f./.test(a.text ?? ''))) return null;
    let i = 0;
    while (i < cmd.args.length && isOption(cmd.args[i]!)) i += ['-F', '-v', '--assign', '--field-separator'].includes(cmd.args[i]!.text!) ? 2 : 1;
    // Every word is looked at: gawk also takes its program as `-e`/`--source=` options.
    if (cmd.args.some((a) => a.text !== null && /\bsystem\s*\(|\|\s*getline|\|&|\bprintf?\b[^;}]*\|/.test(a.text))) return { risk: 'destructive', reason: 'awk runs a command of its own' };
    const program = cmd.args[i];
    if (!program) return { reads: true };
    if (program.text === null) return { risk: 'destructive', reason: 'awk runs a program known only when it runs' };
    const p = program.text;
    const target = /\bprintf?\b[^;}]*>>?\s*"([^"]*)"/.exec(p)?.[1];
    if (target !== undefined && isCriticalFile({ text: target, pattern: false, processSubstitution: false })) return { risk: 'destructive', reason: `awk writes to ${target}` };
    return /\bprintf?\b[^;}]*>/.test(p) ? null : { reads: true };
  },
};

export const sedProgram: CommandRule = {
  name: 'sed-program',
  kind: 'command',
  apply(cmd) {
    if (cmd.name !== 'sed' && cmd.name !== 'gsed') return null;
    const scripts = [
      ...cmd.args.filter((a, i) => i > 0 && ['-e', '--expression'].includes(cmd.args[i - 1]!.text ?? '')),
      ...cmd.args.filter((a) => a.text?.startsWith('--expression=')).map((a) => ({ ...a, text: a.text!.slice('--expression='.length) })),
    ];
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

/** Variables that make every later command load or run code of someone's choosing. */
const CODE_VARIABLES = new Set(['BASH_ALIASES', 'BASH_CMDS', 'LD_PRELOAD', 'LD_AUDIT', 'LD_LIBRARY_PATH', 'BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'PS4', 'SHELLOPTS', 'BASHOPTS', 'GCONV_PATH', 'PYTHONSTARTUP', 'PERL5OPT', 'NODE_OPTIONS']);

/** Code kept in a variable for later (`x='$(reboot)'`), run by `${x@P}`, arithmetic on `a[$(…)]`, `[[ $x -eq 1 ]]`… */
export const storedCode: CommandRule = {
  name: 'stored-code',
  kind: 'command',
  apply({ words, redirects, assignedValues }) {
    if ([...words, ...assignedValues, ...redirects.map((r) => r.target)].some((w) => w.evaluates)) {
      return { risk: 'destructive', reason: 'a prompt expansion (${x@P}) runs the code a variable holds' };
    }
    const code = assignedValues.map((w) => w.text).filter((t): t is string => t !== null && /\$\(|`|[<>]\(/.test(t));
    return code.length ? { code } : null;
  },
};

export const environmentHijack: CommandRule = {
  name: 'environment-hijack',
  kind: 'command',
  apply({ assigns, name, args }) {
    // (`BASH_ALIASES[ls]=reboot` assigns BASH_ALIASES.)
    const variables = [...assigns, ...(name === 'env' ? args.filter((a) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(a.text ?? '')).map((a) => a.text!.split('=')[0]!) : [])];
    const code = variables.find((v) => CODE_VARIABLES.has(v));
    if (code) return { risk: 'destructive', reason: `sets ${code}, which loads code into the commands that follow` };
    if ((name === 'enable' && hasFlag(args, 'f')) || (name === 'hash' && hasFlag(args, 'p'))) return { risk: 'destructive', reason: `${name} makes a command name run other code` };
    return variables.includes('PATH') || variables.includes('IFS') ? { risk: 'change' } : null;
  },
};
