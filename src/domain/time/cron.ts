import { CronExpressionParser } from 'cron-parser';
import { DateTime, IANAZone } from 'luxon';

/*
 * Five-field cron expressions in a time zone, as schedules and recurring freezes use them: checked
 * field by field (so an error names its position), and their fire times around a given moment.
 * Parsing and matching are cron-parser's; time zones are luxon's (the IANA database Node carries).
 */

export const CRON_FIELDS = ['minute', 'hour', 'day of month', 'month', 'day of week'] as const;

/** Whether `name` is an IANA time zone Node knows ("Europe/Berlin", "UTC"); not an offset or an abbreviation. */
export function isTimeZone(name: string): boolean {
  return /^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/.test(name) && IANAZone.isValidZone(name);
}

const cronFields = (expression: string) => expression.trim().split(/\s+/).filter(Boolean);

/** An expression as stored: its fields one space apart ("30  2 * * *" → "30 2 * * *"). */
export const normalCron = (expression: string) => cronFields(expression).join(' ');

/**
 * What is wrong with a cron expression, naming the field (1–5) and what it allows, or null when it
 * is a valid five-field one: minute hour day-of-month month day-of-week.
 */
export function cronProblem(expression: string): string | null {
  const fields = cronFields(expression);
  if (fields.length !== 5) {
    return `a cron expression has 5 fields (minute hour day-of-month month day-of-week); this one has ${fields.length}${fields.length === 6 ? ' (seconds are not supported)' : ''}`;
  }
  for (const [index, field] of fields.entries()) {
    // The field alone, the others "*": the parser's complaint is then about this position.
    const alone = fields.map((value, i) => (i === index ? value : '*')).join(' ');
    try {
      CronExpressionParser.parse(alone, { strict: false });
    } catch (error) {
      return `field ${index + 1} (${CRON_FIELDS[index]}) "${field}": ${(error as Error).message}`;
    }
  }
  try {
    CronExpressionParser.parse(fields.join(' '));
  } catch (error) {
    return (error as Error).message;
  }
  return null;
}

const parse = (expression: string, zone: string, currentDate: Date) => CronExpressionParser.parse(expression.trim(), { tz: zone, currentDate });

/** The last fire time of `expression` in `zone` at or before `at` (within `lookBackMs`), or null. */
export function lastFireAtOrBefore(expression: string, zone: string, at: Date, lookBackMs: number): Date | null {
  const iterator = parse(expression, zone, new Date(at.getTime() + 1000));
  const previous = iterator.prev().toDate();
  return previous.getTime() >= at.getTime() - lookBackMs ? previous : null;
}

/** The next `count` fire times of `expression` in `zone` after `from`. */
export function nextFires(expression: string, zone: string, from: Date, count: number): Date[] {
  const iterator = parse(expression, zone, from);
  return Array.from({ length: count }, () => iterator.next().toDate());
}

/** `at` as an ISO 8601 time with the offset of `zone` ("2027-03-28T03:00:00+02:00"). */
export function localTime(at: Date, zone: string): string {
  return DateTime.fromJSDate(at, { zone }).toISO({ suppressMilliseconds: true })!;
}

/** Whether `expression` fires at a local wall-clock minute (the zone aside: Y-M-D h:m as written). */
function firesAtWallClock(expression: string, wall: DateTime): boolean {
  const asUtc = DateTime.fromObject({ year: wall.year, month: wall.month, day: wall.day, hour: wall.hour, minute: wall.minute }, { zone: 'UTC' });
  return parse(expression, 'UTC', asUtc.minus({ minutes: 1 }).toJSDate()).next().toDate().getTime() === asUtc.toMillis();
}

/**
 * The spring-forward gaps of `zone` between `from` and `until` (02:00–02:59 on the last Sunday of
 * March in Europe/Berlin) in which `expression` would fire at a wall-clock time that does not exist
 * that day: for each, the first local minute after the gap, when Bosun runs it instead (as cron
 * does). Only for a fixed-hour expression: one whose hour field is "*" fires at every real hour anyway.
 */
export function springForwardMakeUps(expression: string, zone: string, from: Date, until: Date): Array<{ year: number; month: number; day: number; hour: number; minute: number }> {
  if (cronFields(expression)[1] === '*') return [];
  const makeUps = [];
  for (const { lastBefore, firstAfter } of springForwardGaps(zone, from, until)) {
    const wallBefore = DateTime.fromObject({ year: lastBefore.year, month: lastBefore.month, day: lastBefore.day, hour: lastBefore.hour, minute: lastBefore.minute }, { zone: 'UTC' });
    const skipped = firstAfter.offset - lastBefore.offset;
    const missed = Array.from({ length: skipped }, (_, m) => wallBefore.plus({ minutes: m + 1 })).some((wall) => firesAtWallClock(expression, wall));
    if (missed) makeUps.push({ year: firstAfter.year, month: firstAfter.month, day: firstAfter.day, hour: firstAfter.hour, minute: firstAfter.minute });
  }
  return makeUps;
}

type Gap = { lastBefore: DateTime; firstAfter: DateTime };
const DAY = 86_400_000;
// Schedules of one zone pushed together (an apply's, a reconcile's) share their zone's gaps: reading them costs ~10 ms a zone.
const gapsByZone = new Map<string, Gap[]>();

/** The zone's spring-forward gaps from `from`'s local day, whole days on to `until`: the last minute before each and the first after. */
function springForwardGaps(zone: string, from: Date, until: Date): Gap[] {
  const start = DateTime.fromJSDate(from, { zone }).startOf('day').toMillis();
  const days = Math.ceil((until.getTime() - start) / DAY);
  const key = `${zone}\u0000${start}\u0000${days}`;
  const known = gapsByZone.get(key);
  if (known) return known;
  // The zone's offsets read at instants (luxon's DateTime arithmetic in a zone costs far more).
  const tz = IANAZone.create(zone);
  const offsetAt = (ms: number) => tz.offset(ms);
  const gaps: Gap[] = [];
  // A week at a time, then its days where the offset moved (no zone changes its offset twice within a week).
  for (let week = 0; week < days; week += 7) {
    const weekStart = start + week * DAY;
    if (offsetAt(weekStart) === offsetAt(weekStart + 7 * DAY)) continue;
    for (let day = weekStart; day < start + Math.min(week + 7, days) * DAY; day += DAY) {
      const before = offsetAt(day);
      if (offsetAt(day + DAY) <= before) continue;
      // The instant the offset grows, to the minute.
      let low = day;
      let high = day + DAY;
      while (high - low > 60_000) {
        const mid = low + Math.floor((high - low) / 120_000) * 60_000;
        if (offsetAt(mid) === before) low = mid;
        else high = mid;
      }
      gaps.push({ lastBefore: DateTime.fromMillis(low, { zone }), firstAfter: DateTime.fromMillis(high, { zone }) });
    }
  }
  if (gapsByZone.size >= 64) gapsByZone.clear();
  gapsByZone.set(key, gaps);
  return gaps;
}
