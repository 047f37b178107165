import type { Grant } from './grants';

/**
 * The grants of identities, kept between requests while every change to identities, teams and role
 * bindings is being heard (the API's change streams, see src/api/access/freshness.ts): the API then
 * spends no query and no compiling on them per request. A write in this process clears it at once
 * (the models' hooks), one in another process when its change arrives; a lookup a change overtook is
 * not kept; nothing is kept longer than KEEP_MS.
 */
export const KEEP_MS = 60_000;
export const kept = new Map<string, { at: number; teams: { id: string; name: string }[]; grants: Grant[] }>();
export const keptState = { generation: 0, listening: false };

export const accessCache = {
  /** Whether changes are being heard (every stream open): only then is anything kept. */
  listening(on: boolean) {
    keptState.listening = on;
    this.changed();
  },
  /** Something that decides rights changed: nothing kept is trusted any more. */
  changed() {
    keptState.generation += 1;
    kept.clear();
  },
};
