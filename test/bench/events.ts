/**
 * npm run bench:events — how long a conversation step's change takes from MongoDB to a Socket.IO
 * client: from the write's `wallTime` (the oplog's wall clock, milliseconds, carried by every change
 * event since MongoDB 6.0) to a subscribed socket.io-client receiving its ConversationStepUpdated
 * event. Baseline, in the same run and process: this bench's own change stream on the collection
 * (no post-image, no pipeline), from the same wallTime to its callback. Same machine, same clock.
 * The workload: BENCH_CONVERSATIONS conversations in a row, each an instruction of eight quick steps.
 */
import os from 'node:os';
import type { ChangeStreamUpdateDocument } from 'mongodb';
import { ConversationModel } from '../../src/domain/conversations/model';
import type { ConversationUpdatedEvent } from '../../src/domain/events';
import { bearer } from '../support/bosun';
import { userWithToken } from '../support/client';
import { runBench } from './harness';
import { connectSocket } from '../support/socket';

const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 12);
const INSTRUCTION = 'show memory usage, uptime, the hostname, the kernel version, disk usage, the time, the os version and cpu details';
const FINAL = ['completed', 'failed', 'cancelled'];
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

runBench({ rateLimitPerMinute: 1_000_000 }, async (bosun) => {
  const token = await bosun.token('bench');
  const serverId = await userWithToken(bosun, token).addServer();

  // (conversation id, seq) → the write's wallTime, and when this process's own stream saw it.
  const written = new Map<string, { wallTime: number; seenAt: number }>();
  const key = (id: string, seq: number) => `${id}:${seq}`;
  const stream = ConversationModel.collection.watch([{ $match: { operationType: 'update', 'updateDescription.updatedFields.seq': { $exists: true } } }]);
  stream.on('change', (change: ChangeStreamUpdateDocument) => {
    const seenAt = Date.now();
    if (!change.wallTime) throw new Error('change events carry no wallTime: MongoDB 6.0 or later is needed');
    written.set(key(change.documentKey._id.toString(), change.updateDescription.updatedFields!.seq as number), { wallTime: change.wallTime.getTime(), seenAt });
  });
  // The stream is open once the server answered its first getMore; a write before that would be missed.
  await new Promise((r) => setTimeout(r, 500));

  const socket = await connectSocket(bosun.url, token);
  const received: Array<{ id: string; seq: number; at: number }> = [];
  let measuring = false;
  socket.on('ConversationStepUpdated', (event) => {
    const at = Date.now();
    if (measuring) received.push({ id: event.conversation_id, seq: event.seq, at });
  });
  const ends = new Map<string, (event: ConversationUpdatedEvent) => void>();
  socket.on('ConversationUpdated', (event) => FINAL.includes(event.status) && ends.get(event.conversation_id)?.(event));

  let failed = 0;
  const converse = async () => {
    const created = await bosun.api.post('/api/v1/conversations').set(bearer(token)).send({ chatable_type: 'server', chatable_id: serverId, message: INSTRUCTION });
    if (created.status !== 201) throw new Error(`starting a conversation answered ${created.status}`);
    const id = created.body.data.id as string;
    const ended = new Promise<ConversationUpdatedEvent>((resolve) => ends.set(id, resolve));
    const answer = await socket.emitWithAck('subscribe_conversation', { conversation_id: id });
    if (!answer.ok) throw new Error(answer.error.message);
    // It may have ended before the subscription: then the snapshot says so.
    const snapshot = answer.data.conversation as { status: string };
    const status = FINAL.includes(snapshot.status) ? snapshot.status : (await ended).status;
    if (status !== 'completed') failed += 1;
    await socket.emitWithAck('unsubscribe_conversation', { conversation_id: id });
  };

  await converse(); // warm: SSH pool, workflow cache, JIT
  measuring = true;
  for (let i = 0; i < CONVERSATIONS; i += 1) await converse();
  measuring = false;
  await new Promise((r) => setTimeout(r, 500)); // the last changes reach this process's own stream too
  socket.close();
  await stream.close();

  const relay: number[] = [];
  // The same change at the client minus at this process's own stream: the relay's own cost.
  const paired: number[] = [];
  let unmatched = 0;
  for (const event of received) {
    const write = written.get(key(event.id, event.seq));
    if (!write) {
      unmatched += 1;
      continue;
    }
    relay.push(event.at - write.wallTime);
    paired.push(event.at - write.seenAt);
  }
  const measuredIds = new Set(received.map((e) => e.id));
  const baseline = [...written.entries()].filter(([k]) => measuredIds.has(k.split(':')[0]!)).map(([, w]) => w.seenAt - w.wallTime);
  if (relay.length < 200) console.warn(`only ${relay.length} events: raise BENCH_CONVERSATIONS`);

  const row = (xs: number[]) => `p50 ${percentile(xs, 50)} ms   p99 ${percentile(xs, 99)} ms   max ${Math.max(...xs)} ms   count ${xs.length}`;
  console.log(`bench:events — ${CONVERSATIONS} conversations of 8 steps in a row, ${os.cpus().length} cores, one process (API, worker, client)`);
  console.log(`(a) baseline: own change stream, wallTime → callback            ${row(baseline)}`);
  console.log(`(b) relay: wallTime → ConversationStepUpdated at socket.io client ${row(relay)}`);
  console.log(`(b)/(a): p50 ×${(percentile(relay, 50) / Math.max(1, percentile(baseline, 50))).toFixed(1)}   p99 ×${(percentile(relay, 99) / Math.max(1, percentile(baseline, 99))).toFixed(1)}` +
    `   per event, client receipt − own stream receipt: p50 ${percentile(paired, 50)} ms, p99 ${percentile(paired, 99)} ms`);
  console.log(`conversations not completed: ${failed}; events with no matching write: ${unmatched}`);
});
