import { Types } from 'mongoose';
import { recordNotificationEvent } from '../../src/domain/notifications/event-outbox';
import { OrganizationModel } from '../../src/domain/organizations/model';
import { userWithToken } from '../support/client';
import { eventually } from '../support/eventually';
import { startReceiver } from '../support/webhook-receiver';
import { runBench } from './harness';

/*
 * Notification throughput: 1,000 events of 1,000 runs recorded in the outbox at once, delivered to
 * one webhook channel on a local receiver (answering 204 at once); then 200 events of one run, which
 * go out one after another (per subject, in order). Prints deliveries per second, end to end: from
 * the first event recorded to the last message received.
 */

const MANY = Number(process.env.BENCH_EVENTS ?? 1000);
const ONE_SUBJECT = Number(process.env.BENCH_SUBJECT_EVENTS ?? 200);

runBench({}, async (bosun) => {
  const admin = userWithToken(bosun, await bosun.token('bench-notify'));
  const organization = (await OrganizationModel.findOne({ slug: 'bench-notify' }).lean())!;
  const receiver = await startReceiver();
  try {
    await admin.request('post', '/notification-channels', { name: 'bench', type: 'webhook', url: receiver.url, events: ['run.succeeded'] });
    const distinct = () => new Set(receiver.received.map((r) => r.id)).size;
    const measure = async (label: string, subjects: (i: number) => string, count: number) => {
      const before = distinct();
      const started = Date.now();
      for (let i = 0; i < count; i += 1) {
        await recordNotificationEvent({ organizationId: organization._id, type: 'run.succeeded', subject: { kind: 'run', id: subjects(i) }, payload: { summary: `bench ${i}` } });
      }
      const recorded = Date.now() - started;
      await eventually(async () => distinct() - before, (n) => n >= count, 30 * 60_000);
      const seconds = (Date.now() - started) / 1000;
      console.log(`${label}: ${count} deliveries in ${seconds.toFixed(1)} s = ${(count / seconds).toFixed(0)}/s (recording them took ${(recorded / 1000).toFixed(1)} s)`);
    };
    await measure(`${MANY} runs, one event each`, () => new Types.ObjectId().toString(), MANY);
    const run = new Types.ObjectId().toString();
    await measure(`one run, ${ONE_SUBJECT} events in order`, () => run, ONE_SUBJECT);
  } finally {
    await receiver.stop();
  }
});
