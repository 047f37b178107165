/**
 * npm run bench:change-streams — what an API process's open change streams cost MongoDB on every
 * write, whatever the write: each open stream is woken by each new oplog entry and looks at it. The
 * workload: BENCH_WRITES inserts, one after another, into a collection no stream watches, on the test
 * run's mongod (a single-node replica set, as Bosun runs on). Measured: mongod's CPU time (from
 * /proc) per write. Baseline, in the same run: the same writes with no stream open. Then the same
 * writes with one Bosun API process up (its streams as shipped), and with BENCH_STREAMS plain streams
 * opened by this bench on one collection (the price of one stream). Each case BENCH_ROUNDS times,
 * taking turns, so the machine's drift falls on all of them.
 */
import { readFileSync } from 'node:fs';
import { MongoClient, type ChangeStream } from 'mongodb';
import { startBosun } from '../support/bosun';
import { embeddedMongoUri } from '../../src/embedded/mongod';
import globalSetup from '../support/global-setup';
import globalTeardown from '../support/global-teardown';
import { sharedServices } from '../support/shared';
import { runMain } from './harness';
import { changeStreamsOn } from '../support/change-streams';
import { eventually } from '../support/eventually';

const WRITES = Number(process.env.BENCH_WRITES ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 8);

/** A process's user + system CPU time so far, in milliseconds. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  process.env.TEST_LOG_LEVEL ??= 'silent';
  await globalSetup();
  const services = sharedServices();
  const mongodPid = (globalThis as unknown as { __bosunServices: { mongo: { process: { child: { pid: number } } } } }).__bosunServices.mongo.process.child.pid;
  const client = await new MongoClient(embeddedMongoUri(services.mongoPort, 'bosun_bench_change_streams')).connect();
  const writes = client.db().collection('writes');
  const watched = client.db().collection('watched');
  await watched.insertOne({ created: true });

  /** mongod's CPU per write (ms) for WRITES inserts. */
  const measure = async () => {
    const before = cpuMs(mongodPid);
    for (let i = 0; i < WRITES; i += 1) await writes.insertOne({ i, pad: 'x'.repeat(200) });
    return (cpuMs(mongodPid) - before) / WRITES;
  };
  /** Streams are open once the server answered their first getMore: their first resume token. */
  const openStreams = async (count: number): Promise<ChangeStream[]> =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const stream = watched.watch([]);
        const opened = new Promise((resolve) => stream.once('resumeTokenChanged', resolve));
        stream.on('change', () => undefined);
        await opened;
        return stream;
      }),
    );

  const cases: Record<string, () => Promise<number>> = {
    'no stream open (baseline)': measure,
    'one Bosun API process up': async () => {
      const bosun = await startBosun({ worker: false });
      try {
        // Its streams open as it starts: measured once mongod has them.
        const database = new URL(bosun.mongoUri!).pathname.slice(1);
        await eventually(() => changeStreamsOn(client, database), (count) => count > 0, 15_000);
        return await measure();
      } finally {
        await bosun.stop();
      }
    },
    [`${STREAMS} plain streams open`]: async () => {
      const streams = await openStreams(STREAMS);
      try {
        return await measure();
      } finally {
        await Promise.all(streams.map((stream) => stream.close()));
      }
    },
  };
  const results = new Map<string, number[]>(Object.keys(cases).map((name) => [name, []]));
  await measure(); // warm-up
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [name, run] of Object.entries(cases)) results.get(name)!.push(await run());
  }
  const baseline = median(results.get('no stream open (baseline)')!);
  console.log(`mongod CPU per write, ${WRITES} inserts, ${ROUNDS} rounds (median; every round)`);
  for (const [name, values] of results) {
    console.log(
      `  ${name.padEnd(30)} ${median(values).toFixed(3)} ms  ×${(median(values) / baseline).toFixed(2)}  (${values.map((v) => v.toFixed(3)).join(', ')})`,
    );
  }
  const perStream = (median(results.get(`${STREAMS} plain streams open`)!) - baseline) / STREAMS;
  console.log(`  one open stream: +${perStream.toFixed(3)} ms of mongod per write`);
  await client.db().dropDatabase();
  await client.close();
  await globalTeardown();
}

runMain(main);
