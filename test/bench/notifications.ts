import { Types } from 'mongoose';
import { recordNotificationEvent } from '../../src/domain/notifications/event-outbox';
import { OrganizationModel } from '../../src/domain/organizations/model';
import { userWithToken } from '../support/client';
import { eventually } from '../support/eventually';
import { startReceiver } from '../support/webhook-receiver';
import { runBench } from './harness';

/*
 * Notification throughput: 1,000 events of 1,000 runs recorded in the outbox at once (RECORDING at a
 * time: recorded one after another, the recording alone took longer than their delivery), delivered
 * to one webhook channel on a local receiver (answering 204 at once); then 200 events of one run,
 * which go out one after another (per subject, in order). Prints deliveries per second, end to end
 * (from the first event recorded to the last message received: the dispatcher's poll, up to 1 s, is
 * in it) and from the first message received to the last.
 */

const MANY = Number(process.env.BENCH_EVENTS ?? 1000);
const ONE_SUBJECT = Number(process.env.BENCH_SUBJECT_EVENTS ?? 200);
/** Events recorded at once; one subject's are recorded one after another (their order is the test). */
const RECORDING = 32;

runBench({}, async (bosun) => {
  const admin = userWithToken(bosun, await bosun.token('bench-notify'));
  const organization = (await OrganizationModel.findOne({ slug: 'bench-notify' }).lean())!;
  const receiver = await startReceiver();
  try {
    await admin.request('post', '/notification-channels', { name: 'bench', type: 'webhook', url: receiver.url, events: ['run.succeeded'] });
    const distinct = () => new Set(receiver.received.map((r) => r.id)).size;
    const measure = async (label: string, subjects: (i: number) => string, count: number, atOnce: number) => {
      const [before, receivedBefore] = [distinct(), receiver.received.length];
      const started = Date.now();
      let next = 0;
      const record = async () => {
        for (let i = next++; i < count; i = next++) {
          await recordNotificationEvent({ organizationId: organization._id, type: 'run.succeeded', subject: { kind: 'run', id: subjects(i) }, payload: { summary: `bench ${i}` } });
        }
      };
      await Promise.all(Array.from({ length: atOnce }, record));
      const recorded = Date.now() - started;
      await eventually(async () => distinct() - before, (n) => n >= count, 30 * 60_000);
      const seconds = (Date.now() - started) / 1000;
      const arrivals = receiver.received.slice(receivedBefore).map((r) => r.at);
      const sending = (Math.max(...arrivals) - Math.min(...arrivals)) / 1000;
      console.log(
        `${label}: ${count} deliveries in ${seconds.toFixed(1)} s = ${(count / seconds).toFixed(0)}/s end to end; first to last received ${sending.toFixed(2)} s = ${(count / Math.max(sending, 0.001)).toFixed(0)}/s (recording them took ${(recorded / 1000).toFixed(1)} s)`,
      );
    };
    await measure(`${MANY} runs, one event each`, () => new Types.ObjectId().toString(), MANY, RECORDING);
    const run = new Types.ObjectId().toString();
    await measure(`one run, ${ONE_SUBJECT} events in order`, () => run, ONE_SUBJECT, 1);
  } finally {
    await receiver.stop();
  }
});
