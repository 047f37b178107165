/* Durations as Bosun's settings spell them ("90d", "12h", "30m"): tokens' lifetimes, gates' waits, schedules, freezes. */

/** A positive duration: 1 to 6 digits, not all zero, then s, m, h, d or w. */
export const DURATION_PATTERN = /^(?=\d*[1-9])(\d{1,6})([smhdw])$/;
const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 } as const;

/** "90d", "12h", "30m", "3600s", "2w" → seconds. */
export function parseDuration(text: string): number {
  const match = DURATION_PATTERN.exec(text.trim());
  if (!match) throw new Error(`Invalid duration "${text}": a positive number followed by s, m, h, d or w (e.g. 90d)`);
  return Number(match[1]) * UNIT_SECONDS[match[2] as keyof typeof UNIT_SECONDS];
}
