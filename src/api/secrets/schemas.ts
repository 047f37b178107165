import { z } from 'zod';
import { text } from '../http/text';

export const secretNameSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'a name: letters, digits and underscores, at most 64');
// Redaction matches values of 4 characters or more; shorter ones would shred ordinary output.
export const secretBodySchema = z.strictObject({ value: text('value', { min: 4, max: 16 * 1024 }) });
