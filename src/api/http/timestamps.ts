import { z } from 'zod';

/** A timestamp in a response, as iso() (src/domain/timestamps.ts) writes it. */
export const timestampSchema = z.iso.datetime();
