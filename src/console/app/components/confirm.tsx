// A row's action that cannot be undone, asked twice.
import type { ComponentChildren } from 'preact';

/** The row waiting for its "are you sure" (one at a time), as `useChanges` keeps it. */
export interface Asking {
  confirm: string | null;
  setConfirm: (id: string | null) => void;
}

/**
 * A row's action that cannot be undone, behind an "are you sure": its button; once pressed, the
 * confirming button beside Keep, with what it does below them.
 */
export function Confirmed({
  asking,
  id,
  ask,
  askLabel,
  yes,
  onYes,
  warning,
}: {
  asking: Asking;
  /** The row's id. */
  id: string;
  ask: string;
  askLabel?: string;
  yes: string;
  onYes: () => void;
  warning?: ComponentChildren;
}) {
  if (asking.confirm !== id) {
    return (
      <button type="button" onClick={() => asking.setConfirm(id)} aria-label={askLabel}>
        {ask}
      </button>
    );
  }
  return (
    <>
      <button type="button" class="danger" onClick={onYes}>
        {yes}
      </button>{' '}
      <button type="button" onClick={() => asking.setConfirm(null)}>
        Keep
      </button>
      {warning ? <div class="warning small">{warning}</div> : null}
    </>
  );
}
