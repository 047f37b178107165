import { posix } from 'node:path';
import { basename, INTERPRETER, operands, SHELL, type Command, type LineRule } from './command';

// Rules about a whole line: what the parser rejected, and what one command prepares for another.

export const unparseable: LineRule = {
  name: 'unparseable',
  kind: 'line',
  apply: (facts) => (facts.parseError !== null ? { risk: 'destructive', reason: `the shell parser cannot read it (${facts.parseError})` } : null),
};

const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'aria2c', 'scp', 'rsync', 'ftp', 'tftp', 'nc', 'ncat', 'socat']);

export const downloadThenRun: LineRule = {
  name: 'download-then-run',
  kind: 'line',
  apply({ commands }) {
    const download = commands.find((c) => c.name && DOWNLOADERS.has(c.name));
    const run = commands.find((c) => c.name && (SHELL.test(c.name) || INTERPRETER.test(c.name) || c.name === 'source' || c.name === '.' || (c.words[0]?.text ?? '').startsWith('./')));
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
  if (cmd.name && (SHELL.test(cmd.name) || INTERPRETER.test(cmd.name))) return operands(cmd.args)[0]?.text ?? null;
  const path = cmd.words[0]?.text;
  return path && path.includes('/') ? path : null;
}

export const writeThenRun: LineRule = {
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
