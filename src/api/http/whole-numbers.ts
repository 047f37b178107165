import { z } from 'zod';

/**
 * A whole number in a query or a path, as the OpenAPI document states it (an integer from `min` to
 * `max`): its plain digits, so `1.0`, `+1`, `01`, ` 1`, `1e1` and `0x1` are refused rather than read as numbers.
 */
export const wholeNumber = (name: string, { min, max = Number.MAX_SAFE_INTEGER }: { min: number; max?: number }) =>
  z
    .string()
    .regex(/^(?:0|[1-9][0-9]*)$/, `${name} must be a whole number`)
    .transform(Number)
    .pipe(
      z
        .number()
        .int(`${name} must be at most ${max}`)
        .min(min, `${name} must be at least ${min}`)
        .max(max, `${name} must be at most ${max}`),
    );
