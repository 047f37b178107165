import { useEffect, useState } from 'preact/hooks';
import type { NotificationDelivery } from '../api-types';
import { Status, When } from './common';

/** Seconds as a person says them: "16 s", "4 min 5 s", "1 h 2 min". */
const span = (s: number) => (s < 60 ? `${s} s` : s < 3600 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`);

/** How long until `at`, counting down every second ("in 16 s"; "due now" once it has passed). */
export function Until({ at }: { at: string }) {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [at]);
  const left = Math.round((Date.parse(at) - now) / 1000);
  return <>{left > 0 ? `in ${span(left)}` : 'due now'}</>;
}

/** "5 of 35": this round's attempts out of the retry policy's maximum (the maximum unknown for deliveries made before it was recorded). */
export const attemptsOf = (d: NotificationDelivery) => (d.max_attempts ? `${d.round_attempts} of ${d.max_attempts}` : String(d.round_attempts));

/** A failed delivery that will be tried again reads "retrying": "delivering" alone reads as if it were being sent. */
const shownStatus = (d: NotificationDelivery) => (d.status === 'delivering' && d.next_attempt_at ? 'retrying' : d.status);

/** Whether this round's attempts reached the policy's maximum. */
const lastSpent = (d: NotificationDelivery) => d.max_attempts !== null && d.round_attempts >= d.max_attempts;

/** The status, and in words what happened and what happens next. */
export function DeliveryState({ delivery: d }: { delivery: NotificationDelivery }) {
  const failedAttempts = d.max_attempts ? `${d.round_attempts} of ${d.max_attempts} attempts failed` : `${d.round_attempts} attempts failed`;
  const line =
    d.status === 'pending'
      ? d.pending_reason
      : d.status === 'delivering' && d.round_attempts > 0
          ? `${failedAttempts}: ${d.reason ?? ''}${!d.next_attempt_at && lastSpent(d) ? ' — none left: it is being given up' : ''}`
          : d.reason;
  return (
    <>
      <Status value={shownStatus(d)} />
      {line ? (
        <div class="muted small" data-delivery-state>
          {line}
        </div>
      ) : null}
    </>
  );
}

/** When the next attempt is due (in how long, and at what time), or why there is none. */
export function NextAttempt({ delivery: d }: { delivery: NotificationDelivery }) {
  if (d.next_attempt_at) {
    return (
      <span data-next-attempt>
        <strong>
          <Until at={d.next_attempt_at} />
        </strong>
        <div class="muted small">
          at <When at={d.next_attempt_at} />
          {d.max_attempts ? ` · attempt ${d.round_attempts + 1} of ${d.max_attempts}${d.round_attempts + 1 === d.max_attempts ? ', the last: dead if it fails' : ''}` : ''}
        </div>
      </span>
    );
  }
  if (d.status === 'pending') return <span class="muted">{d.waiting_for ? 'after the one before it' : 'first attempt soon'}</span>;
  if (d.status === 'delivering') return <span class="muted">{lastSpent(d) ? 'none: the last attempt failed' : `being sent${d.max_attempts ? ` (attempt ${d.round_attempts + 1} of ${d.max_attempts})` : ''}`}</span>;
  return <span class="muted">none</span>;
}
