// A row's action that cannot be undone, asked twice.
import type { ComponentChildren } from 'preact';
import type { ManagedByView } from '../../../api/ownership/views';
import { ChangeButton } from './managed';

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
  managedBy = null,
}: {
  asking: Asking;
  /** The row's id. */
  id: string;
  ask: string;
  askLabel?: string;
  yes: string;
  onYes: () => void;
  warning?: ComponentChildren;
  /** A Git source manages the row: its button is disabled, saying why. */
  managedBy?: ManagedByView;
}) {
  if (asking.confirm !== id) {
    return (
      <ChangeButton managedBy={managedBy} onClick={() => asking.setConfirm(id)} label={askLabel}>
        {ask}
      </ChangeButton>
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
