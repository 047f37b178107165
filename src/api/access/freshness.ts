import type { Logger } from '../../logger';
import { accessCache } from '../../domain/access/cache';
import { IdentityModel, RoleBindingModel, TeamModel } from '../../domain/access/model';
import { watchWithResume } from '../../domain/change-streams';

/**
 * Lets the API process keep identities' grants between requests (see accessCache): it watches every
 * collection that decides rights, and trusts what it keeps only while all three streams are open.
 */
export function keepAccessFresh(log: Logger): { close(): Promise<void> } {
  const open = new Set<string>();
  const watchers = [IdentityModel, TeamModel, RoleBindingModel].map((model) => {
    const name = model.collection.collectionName;
    return watchWithResume(model.collection, [], () => accessCache.changed(), log, `${name} (rights)`, 'default', {
      opened: () => {
        open.add(name);
        accessCache.listening(open.size === 3);
      },
      lost: () => {
        open.delete(name);
        accessCache.listening(false);
      },
    });
  });
  return {
    async close() {
      await Promise.all(watchers.map((w) => w.close()));
    },
  };
}
