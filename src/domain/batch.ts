import { mongo } from 'mongoose';

/**
 * One call's outcome in a batch: its value, or an Error for it alone (the others still succeed).
 */
export type BatchResult<O> = O | Error;

interface Waiting<I, O> {
  input: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Coalesces concurrent calls of one database operation into batches. A call made while fewer than
 * `maxInFlight` batches are in flight goes out after the I/O callbacks of the moment (setImmediate),
 * together with every call made meanwhile; otherwise it waits for a batch to return and goes out with
 * the others that waited. Idle, a call waits for nothing; under a burst, one round trip serves many
 * calls instead of one each (on a VM, each socket write to MongoDB costs a fraction of a millisecond
 * of CPU). More than one batch in flight: a round trip that hangs (a half-open connection) does not
 * hold up every later call.
 *
 * `send` answers the batch's inputs in order; if it throws, every call of the batch fails with it.
 * `atOnce`: a call with a batch free to go goes out before any I/O of the moment (only the calls made
 * in the same turn join it), for a write that must be on its way before what follows it.
 */
export function batcher<I, O>(
  send: (inputs: I[]) => Promise<BatchResult<O>[]>,
  { maxBatch = 256, maxInFlight = 2, atOnce = false }: { maxBatch?: number; maxInFlight?: number; atOnce?: boolean } = {},
): (input: I) => Promise<O> {
  let waiting: Waiting<I, O>[] = [];
  let inFlight = 0;
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    while (inFlight < maxInFlight && waiting.length > 0) {
      const batch = waiting.slice(0, maxBatch);
      waiting = waiting.slice(batch.length);
      inFlight += 1;
      Promise.resolve()
        .then(() => send(batch.map((w) => w.input)))
        .then((results) => {
          if (results.length !== batch.length) throw new Error(`batch answered ${results.length} results for ${batch.length} calls`);
          batch.forEach((w, i) => {
            const result = results[i]!;
            if (result instanceof Error) w.reject(result);
            else w.resolve(result);
          });
        })
        .catch((error: unknown) => batch.forEach((w) => w.reject(error)))
        .finally(() => {
          inFlight -= 1;
          // Those that waited for this batch have waited a round trip already: at once.
          flush();
        });
    }
  };

  return (input: I) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ input, resolve, reject });
      if (inFlight < maxInFlight && !scheduled) {
        scheduled = true;
        if (atOnce) queueMicrotask(flush);
        else setImmediate(flush);
      }
    });
}

/**
 * Inserts documents in one unordered insert and answers for each: true, or the error of its own
 * refusal (with its code: 11000 for a duplicate key) while the others are inserted. An error that is
 * not about single documents (the connection, the write concern) is thrown. `options`: the write concern.
 */
export async function insertEach(collection: mongo.Collection, docs: Record<string, unknown>[], options: mongo.BulkWriteOptions = {}): Promise<BatchResult<true>[]> {
  try {
    await collection.insertMany(docs, { ...options, ordered: false });
    return docs.map(() => true as const);
  } catch (error) {
    return eachRefusal(error, docs.length);
  }
}

/** Updates (each one document) in one unordered update command, answered as `insertEach` answers. */
export async function updateEach(collection: mongo.Collection, updates: Array<{ filter: mongo.Filter<mongo.Document>; update: mongo.UpdateFilter<mongo.Document> }>, options: mongo.BulkWriteOptions = {}): Promise<BatchResult<true>[]> {
  try {
    await collection.bulkWrite(
      updates.map(({ filter, update }) => ({ updateOne: { filter, update } })),
      { ...options, ordered: false },
    );
    return updates.map(() => true as const);
  } catch (error) {
    return eachRefusal(error, updates.length);
  }
}

/** A batch's refusals, one per operation that was refused; an error about the whole batch is thrown. */
function eachRefusal(error: unknown, count: number): BatchResult<true>[] {
  // A write concern not met is about every document (the driver reports it beside the write errors).
  if (!(error instanceof mongo.MongoBulkWriteError) || error.writeConcernError || error.result?.getWriteConcernError()) throw error;
  const writeErrors = [error.writeErrors].flat();
  if (writeErrors.length === 0) throw error;
  const failed = new Map(writeErrors.map((e) => [e.index, e]));
  return Array.from({ length: count }, (_, i) => {
    const writeError = failed.get(i);
    return writeError ? Object.assign(new Error(writeError.errmsg ?? 'write refused'), { code: writeError.code }) : (true as const);
  });
}
