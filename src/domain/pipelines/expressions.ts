/*
 * A stage's parameter values: text with `${{ … }}` expressions, each only `pipeline.parameters.X`
 * or `stages.S.outputs.Y`. An expression is replaced by its value as text, once: the value is never
 * read for expressions again, and never by a shell (a step sees it as BOSUN_PARAM_<NAME>).
 */

export type Reference = { kind: 'parameter'; name: string } | { kind: 'output'; stage: string; name: string };

export interface ExpressionProblem {
  /** Where in the text, from 0. */
  at: number;
  message: string;
}

const EXPRESSION = /\$\{\{([\s\S]*?)\}\}/g;
const PARAMETER_REFERENCE = /^pipeline\.parameters\.([a-z][a-z0-9_]{0,62})$/;
/** Stage names and output names as pipelines and BOSUN_OUTPUT allow them. */
const OUTPUT_REFERENCE = /^stages\.([A-Za-z0-9][A-Za-z0-9_-]{0,62})\.outputs\.([A-Za-z_][A-Za-z0-9_-]{0,127})$/;

/** The references in a value, and what is not an expression Bosun knows (each with where it is). */
export function referencesIn(text: string): { references: Reference[]; problems: ExpressionProblem[] } {
  const references: Reference[] = [];
  const problems: ExpressionProblem[] = [];
  for (const match of text.matchAll(EXPRESSION)) {
    const inside = match[1]!.trim();
    const parameter = PARAMETER_REFERENCE.exec(inside);
    const output = OUTPUT_REFERENCE.exec(inside);
    if (parameter) references.push({ kind: 'parameter', name: parameter[1]! });
    else if (output) references.push({ kind: 'output', stage: output[1]!, name: output[2]! });
    else problems.push({ at: match.index, message: `"\${{ ${inside} }}" is not an expression Bosun knows: only pipeline.parameters.NAME and stages.STAGE.outputs.NAME` });
  }
  const unclosed = text.replace(EXPRESSION, '').indexOf('${{');
  if (unclosed >= 0) problems.push({ at: unclosed, message: 'An expression "${{" is not closed by "}}"' });
  return { references, problems };
}

/** A value's text with each expression replaced by what `valueOf` gives it (the text of its value, substituted once). */
export function substitute(text: string, valueOf: (reference: Reference) => string): string {
  return text.replace(EXPRESSION, (_whole, inside: string) => {
    const { references } = referencesIn(`\${{${inside}}}`);
    const reference = references[0];
    if (!reference) throw new Error(`Not an expression: ${inside}`);
    return valueOf(reference);
  });
}

export const describeReference = (reference: Reference) =>
  reference.kind === 'parameter' ? `pipeline.parameters.${reference.name}` : `stages.${reference.stage}.outputs.${reference.name}`;
