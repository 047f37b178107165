import { z } from 'zod';

/*
 * Strings in requests, checked exactly as the OpenAPI document states them: lengths count characters
 * (code points), as JSON Schema's minLength and maxLength do, where zod's .min and .max count UTF-16
 * units (an emoji is one character but two units); and "not blank" is a pattern the document carries.
 */

const characters = (text: string) => {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
};

/** A string of `min` to `max` characters. */
export function text(field: string, { min = 0, max }: { min?: number; max: number }) {
  return z
    .string()
    .refine((value) => characters(value) >= min, { message: min === 1 ? `${field} must not be empty` : `${field} must be at least ${min} characters`, abort: true })
    .refine((value) => characters(value) <= max, `${field} must be at most ${max} characters`)
    .meta({ ...(min > 0 ? { minLength: min } : {}), maxLength: max });
}

// The characters String.prototype.trim removes (ECMAScript's WhiteSpace and LineTerminator), spelled
// out: `\s` means other sets in other regular-expression engines (Python's, Rust's).
const SPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const NOT_BLANK = new RegExp(`[^${SPACE}]`);

/** Text that must not be blank (at most `max` characters as sent), stored without the spaces around it. */
export const requiredText = (field: string, max: number) =>
  text(field, { min: 1, max })
    .regex(NOT_BLANK, `${field} must not be empty`)
    .overwrite((value) => value.trim());
