import { z } from 'zod';

/** Timestamps in responses and events: ISO 8601 UTC, null when unset. */
export const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** A timestamp in a response, as iso() writes it. */
export const timestampSchema = z.iso.datetime();
