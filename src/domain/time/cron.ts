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
  let cursor = DateTime.fromJSDate(from, { zone }).startOf('day');
  const end = DateTime.fromJSDate(until, { zone });
  // A day at a time: an offset that grows between two local midnights is a gap that day.
  while (cursor < end) {
    const next = cursor.plus({ days: 1 }).startOf('day');
    if (next.offset > cursor.offset) {
      // The instant the offset changes, to the minute.
      let low = cursor.toMillis();
      let high = next.toMillis();
      while (high - low > 60_000) {
        const mid = low + Math.floor((high - low) / 120_000) * 60_000;
        if (DateTime.fromMillis(mid, { zone }).offset === cursor.offset) low = mid;
        else high = mid;
      }
      const lastBefore = DateTime.fromMillis(low, { zone });
      const firstAfter = DateTime.fromMillis(high, { zone });
      const wallBefore = DateTime.fromObject({ year: lastBefore.year, month: lastBefore.month, day: lastBefore.day, hour: lastBefore.hour, minute: lastBefore.minute }, { zone: 'UTC' });
      const skipped = firstAfter.offset - lastBefore.offset;
      const missed = Array.from({ length: skipped }, (_, m) => wallBefore.plus({ minutes: m + 1 })).some((wall) => firesAtWallClock(expression, wall));
      if (missed) makeUps.push({ year: firstAfter.year, month: firstAfter.month, day: firstAfter.day, hour: firstAfter.hour, minute: firstAfter.minute });
    }
    cursor = next;
  }
  return makeUps;
}
