import type { ChangeStream, ChangeStreamDocument, Collection, Db, Document, ResumeToken } from 'mongodb';
import type { Logger } from '../logger';

/*
 * MongoDB change streams that outlive a lost connection: what the API's relays, its rights cache and
 * its ending of sessions listen with. Every write to the database wakes every open stream, whatever
 * collection it watches (about 0.1 ms of mongod's CPU per stream per write on 6.0: `npm run
 * bench:change-streams`): so an API process opens one, a database's stream its listeners share
 * (watchTogether), each asking for its changes by `ns.coll`.
 */

/**
 * Watches a collection with post-images and hands every change to `onChange`; a broken stream
 * reopens after a second where it stopped (from now, if the oplog no longer reaches back that far:
 * clients see the gap in `seq` and re-read).
 */
export function watchWithResume<T extends Document>(
  /** One collection's changes, or a database's (with a `$match` on `ns.coll` in `pipeline`). */
  collection: Collection | Db,
  pipeline: Document[],
  onChange: (change: ChangeStreamDocument<T> & { changedKeys?: string[] }) => void,
  log: Logger,
  what: string,
  // 'required' fails on an update whose document is gone by the time the change is read: say 'default' when that is expected.
  fullDocument: 'required' | 'default' | 'whenAvailable' = 'required',
  /** Told when the stream is open on the server (every later change will be heard), and when it is lost. */
  lifecycle: { opened?: () => void; lost?: () => void } = {},
): { close(): Promise<void> } {
  let stream: ChangeStream<T> | undefined;
  let resumeAfter: ResumeToken | undefined;
  let closed = false;
  const open = () => {
    if (closed) return;
    const options = { fullDocument, ...(resumeAfter ? { resumeAfter } : {}) };
    stream = 'collectionName' in collection ? collection.watch<T>(pipeline, options) : collection.watch<T>(pipeline, options);
    // The first resume token comes with the server's answer to the stream's opening.
    if (lifecycle.opened) stream.once('resumeTokenChanged', lifecycle.opened);
    stream.on('change', (change) => {
      resumeAfter = change._id;
      onChange(change);
    });
    stream.on('error', (err: Error & { codeName?: string }) => {
      lifecycle.lost?.();
      if (closed) return;
      if (err.codeName === 'ChangeStreamHistoryLost' || err.codeName === 'InvalidResumeToken') resumeAfter = undefined;
      log.warn({ err: err.message }, `${what} change stream failed; reopening`);
      void stream?.close().catch(() => undefined);
      setTimeout(open, 1000).unref();
    });
  };
  open();
  return {
    async close() {
      closed = true;
      lifecycle.lost?.();
      await stream?.close();
    },
  };
}

/** The names of the fields an update set, as `changedKeys`: what tells one change's events from another's. */
export const CHANGED_KEYS = {
  $addFields: { changedKeys: { $map: { input: { $objectToArray: { $ifNull: ['$updateDescription.updatedFields', {}] } }, in: '$$this.k' } } },
};

/** An aggregation expression: `document` (an object) with only the fields named. */
export const pickFields = (document: string, fields: string[]) => ({
  $arrayToObject: { $filter: { input: { $objectToArray: document }, cond: { $in: ['$$this.k', fields] } } },
});

/** An aggregation expression: `document` (an object) without the fields named. */
export const omitFields = (document: string, fields: string[]) => ({
  $arrayToObject: { $filter: { input: { $objectToArray: document }, cond: { $not: [{ $in: ['$$this.k', fields] }] } } },
});

/**
 * A listener's shape of a change (ChangeListener's `shape`): what tells it which document
 * changed, how and when, and `fullDocument` as `document` makes it of the post-image (left out where
 * the change has none).
 */
export const changeShaped = (document: Document) => ({
  _id: '$_id',
  ns: '$ns',
  operationType: '$operationType',
  documentKey: '$documentKey',
  clusterTime: '$clusterTime',
  wallTime: '$wallTime',
  changedKeys: '$changedKeys',
  fullDocument: { $cond: [{ $eq: [{ $type: '$fullDocument' }, 'object'] }, document, '$$REMOVE'] },
});

/** What every listener is given of a change it did not shape: which document changed, how. */
const KEY_SHAPE = { _id: '$_id', ns: '$ns', operationType: '$operationType', documentKey: '$documentKey', updateDescription: '$updateDescription', changedKeys: '$changedKeys' };

/** One of the listeners sharing a stream: the changes it asks for and what it does with one. */
export interface ChangeListener {
  /** The collections whose changes it is given. */
  collections: string[];
  /** Of those, the changes it asks for (all where absent): a `$match` on the change as MongoDB writes it. */
  match?: Document;
  /**
   * A listener of one collection may shape what it is given of that collection's changes (one
   * shaping listener per collection): an aggregation expression of the change (with `changedKeys`),
   * keeping `_id` (the resume token) and `ns` (changeShaped). Otherwise changes come as `ns`,
   * `operationType`, `documentKey`, `updateDescription`, `changedKeys`.
   */
  shape?: Document;
  /**
   * Given the changes of its collections that the stream carries: those it asked for, and those
   * another listener of the same collection asked for.
   */
  onChange: (change: SharedChange) => void;
  opened?: () => void;
  lost?: () => void;
}

export type SharedChange = ChangeStreamDocument & { ns?: { coll?: string }; updateDescription?: { updatedFields?: Document }; changedKeys?: string[] };

/**
 * One database stream for listeners of several collections: each asks for its changes, each is given
 * all that any asked for and keeps its own. Post-images where the collection keeps them (runs,
 * conversations, tokens: enableChangeStreamImages); a change whose image is gone (expired) comes
 * without `fullDocument`, and its relay sends nothing: clients see the gap in `seq` and re-read.
 */
export function watchTogether(db: Db, listeners: ChangeListener[], log: Logger, what: string): { close(): Promise<void> } {
  const branches = listeners.flatMap(({ collections, shape }) => {
    if (!shape) return [];
    if (collections.length !== 1) throw new Error(`a listener that shapes its changes listens to one collection (not ${collections.join(', ')})`);
    return [{ case: { $eq: ['$ns.coll', collections[0]] }, then: shape }];
  });
  return watchWithResume(
    db,
    [
      { $match: { $or: listeners.map(({ collections, match }) => ({ 'ns.coll': { $in: collections }, ...match })) } },
      CHANGED_KEYS,
      { $replaceWith: branches.length ? { $switch: { branches, default: KEY_SHAPE } } : KEY_SHAPE },
    ],
    (change) => {
      const collection = (change as SharedChange).ns?.coll ?? '';
      for (const listener of listeners) if (listener.collections.includes(collection)) listener.onChange(change as SharedChange);
    },
    log,
    what,
    'whenAvailable',
    { opened: () => listeners.forEach((listener) => listener.opened?.()), lost: () => listeners.forEach((listener) => listener.lost?.()) },
  );
}
