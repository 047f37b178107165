import { springForwardMakeUps } from '../../src/domain/time/cron';

/*
 * The wall-clock times a cron schedule would lose to a spring-forward gap, and when Bosun runs them
 * instead (the first minute after the gap), as the Temporal Schedule of each schedule carries them.
 */
describe('spring-forward make-ups', () => {
  const from = new Date('2026-11-30T10:00:00Z');
  const until = new Date(from.getTime() + 3 * 365 * 86_400_000);
  const at = (year: number, month: number, day: number) => ({ year, month, day, hour: 3, minute: 0 });

  test('a daily time inside the gap is made up right after it, each year, in each zone', () => {
    expect(springForwardMakeUps('30 2 * * *', 'Europe/Berlin', from, until)).toEqual([at(2027, 3, 28), at(2028, 3, 26), at(2029, 3, 25)]);
    expect(springForwardMakeUps('30 2 * * *', 'America/New_York', from, until)).toEqual([at(2027, 3, 14), at(2028, 3, 12), at(2029, 3, 11)]);
    expect(springForwardMakeUps('0 2 * * 0', 'Europe/Berlin', from, until)).toEqual([at(2027, 3, 28), at(2028, 3, 26), at(2029, 3, 25)]);
  });

  test('no make-up for a time outside the gap, a weekday-only time (the gap is on a Sunday), an hourly expression, or a zone without one', () => {
    expect(springForwardMakeUps('0 3 * * *', 'Europe/Berlin', from, until)).toEqual([]);
    expect(springForwardMakeUps('30 2 * * 1-5', 'Europe/Berlin', from, until)).toEqual([]);
    expect(springForwardMakeUps('30 * * * *', 'Europe/Berlin', from, until)).toEqual([]);
    expect(springForwardMakeUps('30 2 * * *', 'UTC', from, until)).toEqual([]);
  });

  test('schedules of one zone asked one after another get each its own make-ups (the zone’s gaps are read once)', () => {
    expect(springForwardMakeUps('15 2 28 3 *', 'Europe/Berlin', from, until)).toEqual([at(2027, 3, 28)]);
    expect(springForwardMakeUps('15 2 26 3 *', 'Europe/Berlin', from, until)).toEqual([at(2028, 3, 26)]);
    expect(springForwardMakeUps('15 1 * * *', 'Europe/Berlin', from, until)).toEqual([]);
  });
});
