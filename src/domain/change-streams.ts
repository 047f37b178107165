import type { ChangeStream, ChangeStreamDocument, Collection, Db, Document, ResumeToken } from 'mongodb';
import type { Logger } from '../logger';

/*
 * MongoDB change streams that outlive a lost connection: what the API's relays, its rights cache and
 * its ending of sessions listen with. Every write to the database wakes every open stream, whatever
 * collection it watches (about 0.1 ms of mongod's CPU per stream per write, measured on 6.0): so an
 * API process keeps few, one for several collections where the listener needs only which document
 * changed (a database's stream, filtered on `ns.coll`).
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
  fullDocument: 'required' | 'default' = 'required',
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

/** One of the listeners sharing a stream: the changes it asks for (a `$match` on the change) and what it does with one. */
export interface ChangeListener {
  match: Document;
  /** Given every change the shared stream carries (`ns`, `operationType`, `documentKey`, `updateDescription`): it keeps its own. */
  onChange: (change: ChangeStreamDocument & { ns?: { coll?: string }; updateDescription?: { updatedFields?: Document } }) => void;
  opened?: () => void;
  lost?: () => void;
}

/**
 * One database stream for listeners that read only which document changed, how: each asks for its
 * changes, each is given all that any asked for and keeps its own.
 */
export function watchTogether(db: Db, listeners: ChangeListener[], log: Logger, what: string): { close(): Promise<void> } {
  return watchWithResume(
    db,
    [{ $match: { $or: listeners.map((listener) => listener.match) } }, { $project: { ns: 1, operationType: 1, documentKey: 1, updateDescription: 1 } }],
    (change) => {
      for (const listener of listeners) listener.onChange(change);
    },
    log,
    what,
    'default',
    { opened: () => listeners.forEach((listener) => listener.opened?.()), lost: () => listeners.forEach((listener) => listener.lost?.()) },
  );
}

