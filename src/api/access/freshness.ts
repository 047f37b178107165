import { accessCache } from '../../domain/access/cache';
import { IdentityModel, RoleBindingModel, TeamModel } from '../../domain/access/model';
import type { ChangeListener } from '../../domain/change-streams';

/**
 * Lets the API process keep identities' grants between requests (see accessCache): it listens to every
 * collection that decides rights, and trusts what it keeps only while the stream is open (the API's
 * one change stream, shared with its other listeners: src/roles/api.ts).
 */
export function rightsListener(): ChangeListener {
  const collections = [IdentityModel, TeamModel, RoleBindingModel].map((model) => model.collection.collectionName);
  return {
    collections,
    // Only that something changed matters: not what.
    onChange: () => accessCache.changed(),
    opened: () => accessCache.listening(true),
    lost: () => accessCache.listening(false),
  };
}
