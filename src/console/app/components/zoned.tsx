/** Times in a named zone: the browser's own, or a schedule's or freeze's. */

/** The zone this browser shows times in ("Europe/Berlin"). */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

const formats = new Map<string, Intl.DateTimeFormat>();

/** "Sun, Mar 29, 03:30 AM GMT+2" in `zone` (the browser's language decides the order; the year is on hover). */
export function inZone(iso: string, zone: string): string {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat(undefined, { timeZone: zone, weekday: 'short', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
    formats.set(zone, format);
  }
  return format.format(new Date(iso));
}

/** A moment in `zone`, with the exact instant on hover. */
export function ZonedTime({ at, zone }: { at: string; zone: string }) {
  return (
    <time dateTime={at} title={new Date(at).toISOString()}>
      {inZone(at, zone)}
    </time>
  );
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** "10h" → 36 000 000 ms (the API's durations: a number and s, m, h, d or w); null when not one. */
export function durationMs(text: string | null | undefined): number | null {
  const m = /^(\d{1,6})([smhdw])$/.exec(text ?? '');
  return m ? Number(m[1]) * UNIT_SECONDS[m[2]!]! * 1000 : null;
}
