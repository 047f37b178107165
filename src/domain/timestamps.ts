/** Timestamps in responses and events: ISO 8601 UTC, null when unset. */
export const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
