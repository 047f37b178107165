/** Quotes a value for a POSIX shell: it reaches the command as one word, whatever it contains. */
export const shellQuote = (value: string) => (/^[A-Za-z0-9@%+=:,./_-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`);

/** One shell word, with the operators that separate commands kept as their own tokens. */
export interface ShellToken {
  kind: 'word' | 'op';
  value: string;
  /** The word was quoted in whole or in part (so `*` or `/` in it are literal). */
  quoted?: boolean;
}

const OPERATORS = ['&&', '||', ';;', '$(', '<(', '>(', '>>', '&>', '2>', '|', ';', '&', '(', ')', '{', '}', '`', '>', '<', '\n'];

/**
 * A small POSIX-ish lexer, enough to find the commands a line runs: quotes and escapes are honoured,
 * operators (`;`, `&&`, `|`, `$(`, redirections...) become their own tokens.
 */
export function tokenize(line: string): ShellToken[] {
  const tokens: ShellToken[] = [];
  let word = '';
  let inWord = false;
  let quoted = false;
  const end = () => {
    if (inWord) tokens.push({ kind: 'word', value: word, quoted });
    word = '';
    inWord = false;
    quoted = false;
  };
  for (let i = 0; i < line.length; ) {
    const c = line[i]!;
    if (c === '\\' && i + 1 < line.length) {
      word += line[i + 1];
      inWord = true;
      quoted = true;
      i += 2;
      continue;
    }
    if (c === "'") {
      const close = line.indexOf("'", i + 1);
      const stop = close === -1 ? line.length : close;
      word += line.slice(i + 1, stop);
      inWord = true;
      quoted = true;
      i = stop + 1;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      while (j < line.length && line[j] !== '"') {
        if (line[j] === '\\' && j + 1 < line.length) j += 1;
        j += 1;
      }
      word += line.slice(i + 1, j).replace(/\\(.)/g, '$1');
      inWord = true;
      quoted = true;
      i = j + 1;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      end();
      i += 1;
      continue;
    }
    if (c === '#' && !inWord) {
      const nl = line.indexOf('\n', i);
      i = nl === -1 ? line.length : nl;
      continue;
    }
    const op = OPERATORS.find((o) => line.startsWith(o, i));
    // `2>` is an operator only at the start of a word; `>` after `2` inside a word ends it anyway.
    if (op && !(op === '2>' && inWord)) {
      end();
      tokens.push({ kind: 'op', value: op });
      i += op.length;
      continue;
    }
    word += c;
    inWord = true;
    i += 1;
  }
  end();
  return tokens;
}
