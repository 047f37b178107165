import mongoose, { type ClientSession } from 'mongoose';
import './organizations/model';
import './tokens/model';
import { RETIRED_SERVER_INDEXES, ServerModel } from './servers/model';
import './deployments/model';
import './secrets/model';
import './freezes/model';

/** Connects and waits for every model's indexes, so unique constraints hold from the first request. */
export async function connectDatabase(uri: string): Promise<typeof mongoose> {
  await mongoose.connect(uri, { serverSelectionTimeoutMS: 30_000 });
  for (const name of RETIRED_SERVER_INDEXES) await ServerModel.collection.dropIndex(name).catch(() => undefined);
  await Promise.all(mongoose.modelNames().map((name) => mongoose.model(name).init()));
  return mongoose;
}

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
