import type { Types } from 'mongoose';
import { batcher, type BatchResult } from '../batch';
import { takePlaces } from './run-turn';

/** At trigger time: the server is gone or has no pinned host key. */
export class ServerNotRunnable extends Error {}

/** A trigger's place in its server's queue, and the server's title (for the run's workflow). */
export interface TriggerPlace {
  place: number;
  serverTitle: string;
}

/**
 * A place in its server's queue for each trigger: the server's counter advanced once per server by
 * the number of its triggers in the batch, which take the numbers in the order they were made (see
 * batcher: under a burst, one write serves many triggers). Only a verified server of the
 * organization (its host key pinned) takes runs: ServerNotRunnable otherwise. One per API service.
 */
export const triggerPlaces = () =>
  batcher(async (items: { serverId: Types.ObjectId; organizationId: string }[]) => {
    const groups = new Map<string, number[]>();
    items.forEach((item, index) => {
      const key = `${item.organizationId}/${item.serverId.toString()}`;
      groups.set(key, [...(groups.get(key) ?? []), index]);
    });
    const results: BatchResult<TriggerPlace>[] = new Array(items.length);
    // One server's failure fails its own triggers only.
    await Promise.all(
      [...groups.values()].map(async (indexes) => {
        const { serverId, organizationId } = items[indexes[0]!]!;
        try {
          const taken = await takePlaces(serverId, organizationId, indexes.length);
          indexes.forEach((index, k) => {
            results[index] = taken === null ? new ServerNotRunnable() : { place: taken.first + k, serverTitle: taken.title };
          });
        } catch (error) {
          for (const index of indexes) results[index] = error instanceof Error ? error : new Error(String(error));
        }
      }),
    );
    return results;
  });

/** One run's place in a verified server's queue, taken now (a rollback run's): null when the server is gone or not runnable. */
export async function placeOne(serverId: Types.ObjectId, organizationId: string): Promise<number | null> {
  return (await takePlaces(serverId, organizationId, 1))?.first ?? null;
}
