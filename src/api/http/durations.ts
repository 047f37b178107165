import { z } from 'zod';
import { DURATION_PATTERN } from '../../domain/time/durations';

/** "24h": 1 to 6 digits, then s, m, h, d or w. */
export const durationSchema = z.string().regex(DURATION_PATTERN, 'a duration: a positive number followed by s, m, h, d or w, such as "24h"');
