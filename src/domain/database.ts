import mongoose, { type ClientSession } from 'mongoose';

/* What the stores' writes share, low enough for any store to use (connecting is database-connection.ts). */

/** A write refused by a unique index (MongoDB's duplicate key error). */
export const isDuplicateKey = (error: unknown) => (error as { code?: number } | null)?.code === 11000;

/**
 * Runs `work` in one MongoDB transaction (retried whole on a transient error, so `work` only
 * writes through the session): a change and what it becomes (a notification event, an audit entry)
 * are written together or not at all.
 */
export async function inTransaction<T>(work: (session: ClientSession) => Promise<T>): Promise<T> {
  const session = await mongoose.startSession();
  try {
    let result!: T;
    await session.withTransaction(async () => {
      result = await work(session);
    });
    return result;
  } finally {
    await session.endSession();
  }
}
