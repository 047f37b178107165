/*
 * Ansible's host ranges: `web[01:20].example.com` (numbers, zero padding kept when the start has it),
 * `db-[a:c]`, a step `[1:9:2]`, and several ranges in one pattern (their product).
 */

const RANGE = /\[([^\]]*)\]/;
/** A pattern this large is a mistake, not an inventory. */
const MAX_EXPANDED = 100_000;

function expandRange(body: string): string[] {
  const parts = body.split(':');
  if (parts.length < 2 || parts.length > 3) throw new Error(`the range [${body}] is not [start:end] or [start:end:step]`);
  const [start = '', end = '', stepText] = parts;
  const step = stepText === undefined || stepText === '' ? 1 : Number(stepText);
  if (!Number.isInteger(step) || step < 1) throw new Error(`the range [${body}] has a step that is not a positive whole number`);
  if (/^\d+$/.test(start) && /^\d+$/.test(end)) {
    const [from, to] = [Number(start), Number(end)];
    if (from > to) throw new Error(`the range [${body}] ends before it starts`);
    if ((to - from) / step >= MAX_EXPANDED) throw new Error(`the range [${body}] has more than ${MAX_EXPANDED} hosts`);
    const width = start.length > 1 && start.startsWith('0') ? start.length : 0;
    const out: string[] = [];
    for (let n = from; n <= to; n += step) out.push(String(n).padStart(width, '0'));
    return out;
  }
  const sameCase = (start === start.toLowerCase()) === (end === end.toLowerCase());
  if (/^[a-z]$/i.test(start) && /^[a-z]$/i.test(end) && sameCase) {
    const [from, to] = [start.charCodeAt(0), end.charCodeAt(0)];
    if (from > to) throw new Error(`the range [${body}] ends before it starts`);
    const out: string[] = [];
    for (let c = from; c <= to; c += step) out.push(String.fromCharCode(c));
    return out;
  }
  throw new Error(`the range [${body}] is neither two numbers nor two letters of the same case`);
}

/** Every host name a pattern stands for, in order; throws naming the bad range. */
export function expandHostPattern(pattern: string): string[] {
  const match = RANGE.exec(pattern);
  if (!match) {
    if (/[[\]]/.test(pattern)) throw new Error(`"${pattern}" has an unmatched bracket`);
    return [pattern];
  }
  const head = pattern.slice(0, match.index);
  if (head.includes(']')) throw new Error(`"${pattern}" has an unmatched bracket`);
  const tails = expandHostPattern(pattern.slice(match.index + match[0].length));
  const values = expandRange(match[1] ?? '');
  if (values.length * tails.length > MAX_EXPANDED) throw new Error(`"${pattern}" stands for more than ${MAX_EXPANDED} hosts`);
  return values.flatMap((v) => tails.map((t) => `${head}${v}${t}`));
}
