/** How the CLI shows a moment: in a zone (as the API gives it, with its offset) and in UTC. */

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const ISO = /^(\d{4})-(\d\d)-(\d\d)T(\d\d:\d\d)(?::\d\d(?:\.\d+)?)?(Z|[+-]\d\d:\d\d)$/;

/** "2027-03-28T03:00:00+02:00" → "Sun 2027-03-28 03:00 +02:00": the wall clock of the zone, its weekday, its offset. */
export function wallClock(iso: string): string {
  const m = ISO.exec(iso);
  if (!m) return iso;
  const [, y, mo, d, hm, offset] = m;
  const day = DAYS[new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d))).getUTCDay()];
  return `${day} ${y}-${mo}-${d} ${hm} ${offset === 'Z' ? 'UTC' : offset}`;
}

/** A UTC instant ("2027-03-28T01:00:00.000Z") → "Sun 2027-03-28 01:00 UTC". */
export const utc = (iso: string | null | undefined): string => (iso ? wallClock(new Date(iso).toISOString()) : '-');
