/** Pieces of the rules planner's patterns: a name (service, package, database), an absolute or home path. */
export const NAME = '([a-z0-9][a-z0-9@._+-]*)';
export const PATH = '((?:~|/)[^\\s,;"\'`]*)';

/** A sentence's full stop, or the ")" closing a remark, is not part of a path or URL. */
export const trimSentenceEnd = (value: string) => {
  let trimmed = value.replace(/\.+$/, '');
  while (trimmed.endsWith(')') && trimmed.split('(').length < trimmed.split(')').length) trimmed = trimmed.slice(0, -1);
  return trimmed;
};
