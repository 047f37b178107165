import type { Server } from '../api-types';
import { When } from './common';

type FreezeNotice = Server['freezes'][number];

/** When the last of the freezes open now lifts, or null when none is open. */
export const frozenUntil = (freezes: readonly FreezeNotice[]) => {
  const open = freezes.filter((f) => f.active_now);
  return open.length ? new Date(Math.max(...open.map((f) => Date.parse(f.ends_at)))).toISOString() : null;
};

/** One freeze as the API answered it for this page: open now (until when), or opening soon (when). */
export function FreezeLine({ freeze, covers }: { freeze: FreezeNotice; covers?: string }) {
  return (
    <span data-freeze-notice={freeze.active_now ? 'now' : 'soon'}>
      {freeze.active_now ? 'Frozen now' : 'Change freeze'} by <a href="/freezes">{freeze.name}</a>
      {freeze.active_now ? null : (
        <>
          {' '}
          from <When at={freeze.starts_at} />
        </>
      )}{' '}
      until <When at={freeze.ends_at} />
      {covers ? ` (${covers})` : ''}
    </span>
  );
}

/** The change freezes covering a server or a deployment now or within 7 days, as a note above the page's facts. */
export function FreezeNotices<F extends FreezeNotice>({ freezes, covers }: { freezes: readonly F[]; covers?: (freeze: F) => string | undefined }) {
  if (!freezes.length) return null;
  return (
    <ul class="freeze-notices" aria-label="Change freezes">
      {freezes.map((f) => (
        <li key={`${f.id}-${f.starts_at}`} class={f.active_now ? 'warning' : 'notice'}>
          <FreezeLine freeze={f} covers={covers?.(f)} />
        </li>
      ))}
    </ul>
  );
}
