// The one table of the console's lists: columns, rows, a row's actions, the empty text.
import type { ComponentChildren } from 'preact';

/** One column: its header, and what each row shows in it. */
export interface Column<T> {
  head: ComponentChildren;
  cell: (row: T) => ComponentChildren;
  /** The class of its cells (`row-actions` keeps a row's buttons on one line). */
  class?: string;
}

/**
 * A list as a table: a header per column, a row per item (found by its `data-*` marks), and, once
 * loaded (`rows` no longer undefined) with nothing in it, the empty text below it.
 */
export function Table<T>({
  columns,
  actions,
  rows,
  rowKey,
  mark,
  caption,
  label,
  class: className,
  empty,
}: {
  columns: Column<T>[];
  /** A row's buttons, in a last column headed for screen readers only (`null` for whom may not use them). */
  actions?: Omit<Column<T>, 'head'> | null;
  rows: T[] | undefined;
  rowKey: (row: T) => string | number;
  mark?: (row: T) => Record<`data-${string}`, string>;
  /** Read by screen readers only. */
  caption?: string;
  label?: string;
  class?: string;
  empty?: ComponentChildren;
}) {
  const shown = actions ? [...columns, { head: <span class="visually-hidden">Actions</span>, ...actions }] : columns;
  return (
    <>
      <table class={className} aria-label={label}>
        {caption ? <caption class="visually-hidden">{caption}</caption> : null}
        <thead>
          <tr>
            {shown.map((column, i) => (
              <th key={i} scope="col">
                {column.head}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {(rows ?? []).map((row) => (
            <tr key={rowKey(row)} {...mark?.(row)}>
              {shown.map((column, i) => (
                <td key={i} class={column.class}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {empty && rows?.length === 0 ? <p class="muted">{empty}</p> : null}
    </>
  );
}
