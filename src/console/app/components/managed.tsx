// Definitions a Git source manages (issue 38): where they come from, and why their edit and delete buttons are off.
import type { ComponentChildren } from 'preact';
import type { ManagedByView } from '../../../api/ownership/views';

export type ManagedBy = NonNullable<ManagedByView>;

/** "Managed in Git: platform-repo @ 3f2a1c0, deploy/web.yaml": the revision shortened to 7, as Git shows it. */
export const managedText = (m: ManagedBy) => `Managed in Git: ${m.source}${m.revision ? ` @ ${m.revision.slice(0, 7)}` : ''}, ${m.path}`;

/** Why a button that would change a managed object is disabled: its tooltip and accessible description. */
export const managedReason = (m: ManagedBy) => `${managedText(m)}: change it there`;

/** The note under a managed object's name: its source, revision and file (a link when the source has a web URL); drifted when forced since. */
export function ManagedNote({ managedBy, id }: { managedBy: ManagedByView; id?: string }) {
  if (!managedBy) return null;
  const revision = managedBy.revision ? ` @ ${managedBy.revision.slice(0, 7)}` : '';
  return (
    <p class="notice managed" id={id} data-managed-by={managedBy.source}>
      Managed in Git: {managedBy.source}
      {revision}, {managedBy.url ? <a href={managedBy.url}>{managedBy.path}</a> : managedBy.path}
      {managedBy.drifted ? <span class="warning small"> changed here since (drifted): the next apply puts the file’s version back</span> : null}
    </p>
  );
}

/** A button that changes a definition: disabled, saying why, while a Git source manages it. */
export function ChangeButton({ managedBy, describedBy, onClick, label, children, danger }: {
  managedBy: ManagedByView;
  /** The id of the note that says the same, for screen readers. */
  describedBy?: string;
  onClick: () => void;
  label?: string;
  children: ComponentChildren;
  danger?: boolean;
}) {
  return (
    <button
      type="button"
      class={danger ? 'danger' : undefined}
      onClick={onClick}
      aria-label={label}
      disabled={!!managedBy}
      title={managedBy ? managedReason(managedBy) : undefined}
      aria-describedby={managedBy ? describedBy : undefined}
    >
      {children}
    </button>
  );
}
