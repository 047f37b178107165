import { z } from 'zod';

/*
 * The words of a bound that zod's own messages leave as symbols ("Too big: expected number to be
 * <=86400"): `must be at most 86400`, as the API's and the config files' problems say them. A
 * schema's own message wins; every other issue keeps zod's.
 */

type Bound = { code: string; origin?: string; maximum?: unknown; minimum?: unknown; inclusive?: boolean };

const UNITS: Record<string, string> = { string: ' characters', array: ' items', set: ' items', file: ' bytes' };

function boundMessage(issue: Bound): string | undefined {
  const plural = UNITS[issue.origin ?? ''] ?? '';
  if (issue.origin !== 'number' && issue.origin !== 'int' && issue.origin !== 'bigint' && !plural) return undefined;
  if (issue.code === 'too_small' && issue.origin === 'string' && issue.minimum === 1) return 'must not be empty';
  const count = issue.code === 'too_big' ? issue.maximum : issue.minimum;
  const unit = count === 1 ? plural.replace(/s$/, '') : plural;
  if (issue.code === 'too_big') return issue.inclusive === false ? `must be less than ${String(issue.maximum)}${unit}` : `must be at most ${String(issue.maximum)}${unit}`;
  if (issue.code === 'too_small') return issue.inclusive === false ? `must be more than ${String(issue.minimum)}${unit}` : `must be at least ${String(issue.minimum)}${unit}`;
  return undefined;
}

z.config({ customError: (issue) => boundMessage(issue as Bound) });
