import { Composer, Lexer, Parser, type Document, type DocumentOptions, type LineCounter, type ParseOptions, type SchemaOptions } from 'yaml';

/** Flow collections (`[`, `{`) inside each other past this are refused: yaml's parser slows more than linearly with depth. */
export const CONFIG_FLOW_DEPTH_LIMIT = 100;

/** Where reading stopped: flow collections nested past CONFIG_FLOW_DEPTH_LIMIT at this offset. */
export interface TooDeep {
  tooDeepAt: number;
}

/**
 * A file's YAML documents one at a time, each parsed only when the one before is taken (a caller that
 * stops early never parses the rest); the last is TooDeep when nesting stopped the reading.
 */
export function* yamlDocuments(content: string, lines: LineCounter, options: ParseOptions & DocumentOptions & SchemaOptions): Generator<Document.Parsed | TooDeep> {
  const parser = new Parser(lines.addNewLine);
  const composer = new Composer(options);
  let tooDeepAt: number | null = null;
  function* tokens() {
    let depth = 0;
    lines.addNewLine(0);
    for (const lexeme of new Lexer().lex(content)) {
      if (lexeme === '[' || lexeme === '{') depth += 1;
      else if ((lexeme === ']' || lexeme === '}') && depth > 0) depth -= 1;
      if (depth > CONFIG_FLOW_DEPTH_LIMIT) {
        tooDeepAt = parser.offset;
        return;
      }
      yield* parser.next(lexeme);
    }
    yield* parser.end();
  }
  // forceDoc: a stream without documents still yields one, with the errors of what it holds (a stray directive).
  for (const doc of composer.compose(tokens(), true, content.length)) {
    if (tooDeepAt !== null) break;
    yield doc;
  }
  if (tooDeepAt !== null) yield { tooDeepAt };
}
