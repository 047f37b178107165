import { Redactor } from './output';

/*
 * The outputs a step wrote to the file named by $BOSUN_OUTPUT (as GitHub Actions' $GITHUB_OUTPUT):
 * `name=value` lines, and `name<<DELIMITER` … `DELIMITER` for a value of several lines. Read as
 * text, never by a shell; values redacted as step output is.
 */

/** An output's name (pipelines' `stages.S.outputs.NAME` uses the same pattern). */
export const OUTPUT_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,127}$/;
export const OUTPUT_VALUE_LIMIT_BYTES = 65_536;
export const OUTPUTS_PER_RUN = 100;
/** What the server sends of the file at most: the limits above with room for names and delimiters. */
export const OUTPUT_FILE_LIMIT_BYTES = 8 * 1024 * 1024;

export interface StepOutput {
  name: string;
  value: string;
}

/** The file as the wrapper sent it: its text, cut at OUTPUT_FILE_LIMIT_BYTES (`overflow`). */
export interface OutputFile {
  text: string;
  overflow: boolean;
}

/** A step's outputs in the order first written (a name written again keeps its last value), or why the file is refused. */
export type ParsedOutputs = { outputs: StepOutput[]; error: null } | { outputs: null; error: string };

const refused = (error: string): ParsedOutputs => ({ outputs: null, error });

/** A name as an error quotes it: redacted, and cut short. */
const quoted = (name: string, redactor: Redactor) => {
  const shown = redactor.push(name) + redactor.flush();
  return JSON.stringify(shown.length > 64 ? `${shown.slice(0, 64)}…` : shown);
};

/**
 * Parses the file a step wrote against the limits: names OUTPUT_NAME and holding no secret, values
 * of at most OUTPUT_VALUE_LIMIT_BYTES, and with `earlierNames` (the names earlier steps of the run
 * recorded) at most OUTPUTS_PER_RUN names. Values come back redacted.
 */
export function parseOutputFile(file: OutputFile, secrets: string[], earlierNames: readonly string[]): ParsedOutputs {
  if (file.overflow) return refused(`BOSUN_OUTPUT holds more than ${OUTPUT_FILE_LIMIT_BYTES} bytes: at most ${OUTPUTS_PER_RUN} outputs of ${OUTPUT_VALUE_LIMIT_BYTES} bytes each`);
  const redactor = new Redactor(secrets);
  const values = new Map<string, string>();
  const lines = file.text.split('\n');
  // The file's last newline ends its last line: no empty line after it.
  if (lines[lines.length - 1] === '') lines.pop();
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    const number = index + 1;
    if (line === '') continue;
    const equals = line.indexOf('=');
    const heredoc = line.indexOf('<<');
    const isHeredoc = heredoc >= 0 && (equals < 0 || heredoc < equals);
    if (!isHeredoc && equals < 0) return refused(`BOSUN_OUTPUT line ${number}: expected name=value or name<<DELIMITER`);
    const name = line.slice(0, isHeredoc ? heredoc : equals);
    if (!OUTPUT_NAME.test(name)) return refused(`BOSUN_OUTPUT line ${number}: ${quoted(name, redactor)} is not an output name (${OUTPUT_NAME.source})`);
    if (redactor.push(name) + redactor.flush() !== name) return refused(`BOSUN_OUTPUT line ${number}: an output's name may not hold a secret's value`);
    let value: string;
    if (isHeredoc) {
      const delimiter = line.slice(heredoc + 2);
      if (!delimiter) return refused(`BOSUN_OUTPUT line ${number}: expected name=value or name<<DELIMITER`);
      const end = lines.indexOf(delimiter, index + 1);
      if (end < 0) return refused(`BOSUN_OUTPUT line ${number}: the value of "${name}" never ends (no line ${quoted(delimiter, redactor)} after it)`);
      value = lines.slice(index + 1, end).join('\n');
      index = end;
    } else value = line.slice(equals + 1);
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > OUTPUT_VALUE_LIMIT_BYTES) return refused(`output "${name}" is ${bytes} bytes: at most ${OUTPUT_VALUE_LIMIT_BYTES}`);
    // Written again: the last value, in the place the name was first written.
    values.set(name, redactor.push(value) + redactor.flush());
  }
  const names = new Set([...earlierNames, ...values.keys()]);
  if (names.size > OUTPUTS_PER_RUN) return refused(`the run would have ${names.size} outputs: at most ${OUTPUTS_PER_RUN}`);
  return { outputs: [...values].map(([name, value]) => ({ name, value })), error: null };
}
