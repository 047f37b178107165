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
