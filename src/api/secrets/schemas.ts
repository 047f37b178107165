import { z } from 'zod';
import { text } from '../http/text';
import { SECRET_NAME } from '../../domain/secrets/names';

export const secretNameSchema = z.string().regex(SECRET_NAME, 'a name: letters, digits and underscores, at most 64');
// Redaction matches values of 4 characters or more; shorter ones would shred ordinary output.
export const secretBodySchema = z.strictObject({ value: text('value', { min: 4, max: 16 * 1024 }) });
