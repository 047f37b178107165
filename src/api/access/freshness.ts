import type { Logger } from '../../logger';
import { accessCache } from '../../domain/access/cache';
import { IdentityModel, RoleBindingModel, TeamModel } from '../../domain/access/model';
import { inCollections, watchWithResume } from '../../domain/change-streams';

/**
 * Lets the API process keep identities' grants between requests (see accessCache): it watches every
 * collection that decides rights (one stream for the three), and trusts what it keeps only while
 * that stream is open.
 */
export function keepAccessFresh(log: Logger): { close(): Promise<void> } {
  return watchWithResume(
    IdentityModel.db.db!,
    // Only that something changed matters: not what.
    [{ $match: inCollections(IdentityModel.collection, TeamModel.collection, RoleBindingModel.collection) }, { $project: { _id: 1 } }],
    () => accessCache.changed(),
    log,
    'rights',
    'default',
    { opened: () => accessCache.listening(true), lost: () => accessCache.listening(false) },
  );
}
