/*
 * A rolling window's targets in groups: what a window run keeps of batches. A group is at most
 * `window` targets in order, and a gate's target starts a new one; groups do not wait for each other
 * (a finished target's slot is taken by the next at once), but a freeze is checked, a gate opened and
 * a rollback ordered group by group, and a target's `batch` is its group.
 */

/** The group (1-based) of each of `total` targets, in order: `window` at most per group, a new group at each gate's target (1-based). */
export function windowGroups(total: number, window: number, gateTargets: readonly number[]): number[] {
  const gated = new Set(gateTargets);
  const groups: number[] = [];
  let group = 1;
  let inGroup = 0;
  for (let position = 1; position <= total; position += 1) {
    if (inGroup === window || (inGroup > 0 && gated.has(position))) {
      group += 1;
      inGroup = 0;
    }
    groups.push(group);
    inGroup += 1;
  }
  return groups;
}
