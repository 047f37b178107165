/**
 * What a shell line runs, read from mvdan/sh's syntax tree (the `mvdan-sh` build: synchronous, so
 * the command policy stays a plain function). Every simple command anywhere in the tree is found:
 * in pipelines, lists, subshells, blocks, loops, conditionals, function bodies, command and process
 * substitutions, here-documents, assignments and redirection targets.
 */

/**
 * The parser's library, loaded on the first line parsed: it is a large GopherJS build (about a
 * second of CPU to load and set up), and a process that never judges a shell line (an API that
 * only reads, a worker running steps) never pays for it.
 */
let loaded: { syntax: MvdanSyntax; parser: ReturnType<MvdanSyntax['NewParser']> } | undefined;
function mvdan() {
  if (!loaded) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { syntax } = require('mvdan-sh') as { syntax: MvdanSyntax };
    // One parser for the process: Parse resets it, and JavaScript runs one Parse at a time.
    loaded = { syntax, parser: syntax.NewParser() };
  }
  return loaded;
}

/** The slice of the GopherJS API used here (nodes are Go structs seen from JavaScript). */
interface MvdanSyntax {
  NewParser(): { Parse(src: string, name: string): MvdanNode };
  Walk(node: MvdanNode, visit: (node: MvdanNode | null) => boolean): void;
  NodeType(node: MvdanNode): string;
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type MvdanNode = any;

/** One shell word as the command will see it, or `null` text where only running it would tell. */
export interface ShellWord {
  /** The word after quote removal; null when it holds an expansion ($x, $(…), `…`, $((…)), <(…)). */
  text: string | null;
  /** An unquoted glob (`*`, `?`, `[`) or brace expansion (`{a,b}`, `{1..3}`): the shell may turn it into other words. */
  pattern: boolean;
  /** The word is a process substitution (`<(…)`, `>(…)`): a file whose content another command writes. */
  processSubstitution: boolean;
  /** It expands a variable as a prompt (`${x@P}`), which runs the `$(…)` the variable holds. */
  evaluates?: boolean;
}

export interface ShellRedirect {
  op: '>' | '>>' | '<' | '<>' | '<&' | '>&' | '>|' | '<<' | '<<-' | '<<<' | '&>' | '&>>';
  /** The fd number written before the operator (`2>`), if any. */
  fd: string | null;
  target: ShellWord;
  /** A here-document's body. */
  heredoc: ShellWord | null;
}

export interface ShellCommand {
  /** Every word, the command name first; empty for a statement that only redirects (`> file`, `{ …; } > file`). */
  words: ShellWord[];
  redirects: ShellRedirect[];
  /** Its standard input comes from a pipe (it is on the right of a `|`, at any depth). */
  piped: boolean;
  /** Variables it assigns (`X=1 cmd`, `export X=1`). */
  assigns: string[];
  /** The values it assigns, array elements included. */
  assignedValues: ShellWord[];
  /** Names of the functions whose body this command is in, innermost last. */
  inFunctions: string[];
}

export type ParsedLine = { ok: true; commands: ShellCommand[] } | { ok: false; error: string };

const REDIRECT_OPS: Record<number, ShellRedirect['op']> = {
  54: '>', 55: '>>', 56: '<', 57: '<>', 58: '<&', 59: '>&', 60: '>|', 61: '<<', 62: '<<-', 63: '<<<', 64: '&>', 65: '&>>',
};
/** The ParamExp operator of `${x@P}` (and its siblings `@Q`, `@E`…; only P runs code). */
const PROMPT_EXPANSION = 84;
/** BinaryCmd operators `|` and `|&`. */
const PIPE_OPS = new Set([12, 13]);

const ANSI_C_ESCAPES: Record<string, string> = { a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };

/** The value of `$'…'` (bash's ANSI-C quoting). */
export function ansiC(raw: string): string {
  return raw.replace(/\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)/gs, (whole, esc: string) => {
    if (/^[xuU]/.test(esc)) return String.fromCodePoint(parseInt(esc.slice(1), 16));
    if (/^[0-7]/.test(esc)) return String.fromCharCode(parseInt(esc, 8));
    if (esc[0] === 'c') return String.fromCharCode(esc.charCodeAt(1) & 31);
    return ANSI_C_ESCAPES[esc] ?? whole;
  });
}

/** Quote removal of an unquoted literal: a backslash keeps the next character as it is. */
const unescapeBare = (raw: string) => raw.replace(/\\\n/g, '').replace(/\\(.)/gs, '$1');
/** Inside double quotes a backslash only escapes `$`, `` ` ``, `"`, `\` and a newline. */
const unescapeDouble = (raw: string) => raw.replace(/\\\n/g, '').replace(/\\([$`"\\])/g, '$1');

const PATTERN = /[*?]|\[[^\]]*\]|\{[^{}]*(,|\.\.)[^{}]*\}/;

function wordOf(node: MvdanNode): ShellWord {
  const word: ShellWord = { text: '', pattern: false, processSubstitution: false };
  const append = (part: MvdanNode, quoted: boolean) => {
    const type = mvdan().syntax.NodeType(part);
    if (type === 'Lit') {
      const raw = String(part.Value);
      if (!quoted && PATTERN.test(raw.replace(/\\./gs, ''))) word.pattern = true;
      if (word.text !== null) word.text += quoted ? unescapeDouble(raw) : unescapeBare(raw);
    } else if (type === 'SglQuoted') {
      if (word.text !== null) word.text += part.Dollar ? ansiC(String(part.Value)) : String(part.Value);
    } else if (type === 'DblQuoted') {
      // `$"…"` is a translated string: its text is the same unless a message catalogue says otherwise.
      for (let i = 0; i < part.Parts.length; i += 1) append(part.Parts[i], true);
    } else {
      if (type === 'ProcSubst') word.processSubstitution = true;
      if (type === 'ParamExp' && part.Exp && Number(part.Exp.Op) === PROMPT_EXPANSION && part.Exp.Word && String(part.Exp.Word.Lit()) === 'P') word.evaluates = true;
      if (type === 'ExtGlob') word.pattern = true;
      word.text = null;
    }
  };
  for (let i = 0; i < node.Parts.length; i += 1) append(node.Parts[i], false);
  return word;
}

const offset = (node: MvdanNode): number => node.Pos().Offset();
const endOffset = (node: MvdanNode): number => node.End().Offset();

/** Lines parsed lately: a planned step is judged more than once (when planned, again when it is recorded). */
const recent = new Map<string, ParsedLine>();
const RECENT_LINES = 1000;

/** Parses a line as bash; a line the parser rejects is reported as such (the policy fails closed on it). */
export function parseShell(line: string): ParsedLine {
  const known = recent.get(line);
  if (known) return known;
  // Frozen: a parse is shared by every later judgement of the same line, so no rule may alter it.
  const parsed = deepFreeze(parse(line));
  if (recent.size >= RECENT_LINES) recent.delete(recent.keys().next().value!);
  recent.set(line, parsed);
  return parsed;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function parse(line: string): ParsedLine {
  const { syntax, parser } = mvdan();
  let file: MvdanNode;
  try {
    file = parser.Parse(line, '');
  } catch (error) {
    const message = error && typeof (error as MvdanNode).Error === 'function' ? (error as MvdanNode).Error() : String(error);
    return { ok: false, error: String(message) };
  }
  const commands: ShellCommand[] = [];
  const pipedRanges: Array<[number, number]> = [];
  const functions: Array<{ name: string; from: number; to: number }> = [];
  syntax.Walk(file, (node) => {
    if (!node) return true;
    const type = syntax.NodeType(node);
    if (type === 'BinaryCmd' && PIPE_OPS.has(Number(node.Op))) pipedRanges.push([offset(node.Y), endOffset(node.Y)]);
    if (type === 'FuncDecl') functions.push({ name: String(node.Name.Value), from: offset(node), to: endOffset(node) });
    if (type !== 'Stmt') return true;
    const at = offset(node);
    const redirects: ShellRedirect[] = [];
    for (let i = 0; i < node.Redirs.length; i += 1) {
      const r = node.Redirs[i];
      const op = REDIRECT_OPS[Number(r.Op)];
      // An operator this table does not know is treated as the widest write.
      redirects.push({ op: op ?? '<>', fd: r.N ? String(r.N.Value) : null, target: wordOf(r.Word), heredoc: r.Hdoc ? wordOf(r.Hdoc) : null });
    }
    const cmd = node.Cmd;
    const words: ShellWord[] = [];
    const assigns: string[] = [];
    const cmdType = cmd ? syntax.NodeType(cmd) : '';
    if (cmdType === 'CallExpr') for (let i = 0; i < cmd.Args.length; i += 1) words.push(wordOf(cmd.Args[i]));
    const assignNodes = cmdType === 'CallExpr' ? cmd.Assigns : cmdType === 'DeclClause' ? cmd.Args : [];
    const assignedValues: ShellWord[] = [];
    for (let i = 0; i < assignNodes.length; i += 1) {
      const assign = assignNodes[i];
      if (!assign.Name) continue;
      assigns.push(String(assign.Name.Value));
      if (assign.Value) assignedValues.push(wordOf(assign.Value));
      const elems = assign.Array ? assign.Array.Elems : [];
      for (let j = 0; j < elems.length; j += 1) if (elems[j].Value) assignedValues.push(wordOf(elems[j].Value));
    }
    if (words.length || redirects.length || assigns.length) {
      commands.push({
        words,
        redirects,
        assigns,
        assignedValues,
        piped: pipedRanges.some(([from, to]) => at >= from && at < to),
        inFunctions: functions.filter((f) => at > f.from && at < f.to).map((f) => f.name),
      });
    }
    return true;
  });
  return { ok: true, commands };
}
