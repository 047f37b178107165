import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { mongo } from 'mongoose';
import { batcher, insertEach } from '../../src/domain/batch';
import { embeddedMongoUri } from '../../src/embedded/mongod';
import { sharedServices } from '../support/shared';

const tick = () => new Promise((r) => setImmediate(r));

describe('batcher: concurrent calls share one round trip', () => {
  function recording(maxInFlight = 1) {
    const batches: number[][] = [];
    const releases: (() => void)[] = [];
    const send = batcher(async (inputs: number[]) => {
      batches.push(inputs);
      // Held until released: the calls made meanwhile must wait for it, then go out together.
      await new Promise<void>((resolve) => releases.push(resolve));
      return inputs.map((n) => (n < 0 ? new Error(`negative ${n}`) : n * 10));
    }, { maxInFlight });
    // Releases the batch sent n-th (0: the first), or the oldest still held.
    const released = new Set<number>();
    const release = (n?: number) => {
      const index = n ?? releases.findIndex((_, i) => !released.has(i));
      released.add(index);
      releases[index]!();
    };
    return { batches, send, release };
  }

  test('calls made together go out as one batch, each answered with its own result or error', async () => {
    const { batches, send, release } = recording();
    const calls = [send(1), send(-2), send(3)].map((p) => p.then((v) => ({ v }), (e: Error) => ({ e: e.message })));
    await tick();
    expect(batches).toEqual([[1, -2, 3]]);
    release();
    expect(await Promise.all(calls)).toEqual([{ v: 10 }, { e: 'negative -2' }, { v: 30 }]);
  });

  test('calls made while a batch is in flight wait for it and go out together next, in the order made', async () => {
    const { batches, send, release } = recording();
    const first = send(1);
    await tick();
    const later = [send(2), send(3), send(4)];
    await tick();
    expect(batches).toEqual([[1]]);
    release();
    expect(await first).toBe(10);
    await tick();
    expect(batches).toEqual([[1], [2, 3, 4]]);
    release();
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
  });

  test('with two batches in flight, one that hangs does not hold up the calls after it', async () => {
    const { batches, send, release } = recording(2);
    let stuckDone = false;
    void send(1).then(() => (stuckDone = true));
    await tick();
    const second = send(2);
    await tick();
    const later = [send(3), send(4)];
    await tick();
    expect(batches).toEqual([[1], [2]]);
    release(1);
    expect(await second).toBe(20);
    await tick();
    expect(batches).toEqual([[1], [2], [3, 4]]);
    release(2);
    expect(await Promise.all(later)).toEqual([30, 40]);
    expect(stuckDone).toBe(false);
    release(0);
  });

  test('a failed batch fails each of its calls, and the next batch still goes', async () => {
    let fail = true;
    const send = batcher(async (inputs: string[]) => {
      if (fail) throw new Error('connection reset');
      return inputs.map((s) => s.toUpperCase());
    });
    const failed = await Promise.allSettled([send('a'), send('b')]);
    expect(failed.map((r) => r.status === 'rejected' && (r.reason as Error).message)).toEqual(['connection reset', 'connection reset']);
    fail = false;
    expect(await Promise.all([send('c'), send('d')])).toEqual(['C', 'D']);
  });

  test('a batch answered with the wrong number of results fails rather than mixing answers up', async () => {
    const send = batcher(async (inputs: number[]) => inputs.slice(1));
    await expect(Promise.all([send(1), send(2)])).rejects.toThrow('batch answered 1 results for 2 calls');
  });

  test('at most maxBatch calls per batch', async () => {
    const sizes: number[] = [];
    const send = batcher(async (inputs: number[]) => {
      sizes.push(inputs.length);
      return inputs;
    }, { maxBatch: 2 });
    expect(await Promise.all([1, 2, 3, 4, 5].map(send))).toEqual([1, 2, 3, 4, 5]);
    expect(sizes).toEqual([2, 2, 1]);
  });
});

describe('insertEach: one unordered insert, an answer per document (real mongod)', () => {
  let client: MongoClient;
  let collection: mongo.Collection;

  beforeAll(async () => {
    client = await MongoClient.connect(embeddedMongoUri(sharedServices().mongoPort, `bosun_batch_${randomBytes(4).toString('hex')}`));
    collection = client.db().collection('things') as unknown as mongo.Collection;
    await collection.createIndex({ key: 1 }, { unique: true });
  });
  afterAll(async () => {
    await client.db().dropDatabase();
    await client.close();
  });

  test('a duplicate fails alone with code 11000; the others are inserted', async () => {
    await collection.insertOne({ key: 'taken' });
    const results = await insertEach(collection, [{ key: 'a' }, { key: 'taken' }, { key: 'b' }, { key: 'a' }]);
    expect(results[0]).toBe(true);
    expect(results[2]).toBe(true);
    expect((results[1] as Error & { code: number }).code).toBe(11000);
    expect((results[3] as Error & { code: number }).code).toBe(11000);
    expect((await collection.find({}, { projection: { _id: 0 } }).sort({ key: 1 }).toArray()).map((d) => d.key)).toEqual(['a', 'b', 'taken']);
  });

  test('an error that is not about one document (here, a closed client) is thrown', async () => {
    const closed = await MongoClient.connect(embeddedMongoUri(sharedServices().mongoPort, client.db().databaseName));
    await closed.close();
    await expect(insertEach(closed.db().collection('things') as unknown as mongo.Collection, [{ key: 'c' }])).rejects.toThrow();
    expect(await collection.countDocuments({ key: 'c' })).toBe(0);
  });
});
