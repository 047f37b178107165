import type { Types } from 'mongoose';
import { NotificationDeliveryModel, type NotificationChannel } from '../../domain/notifications/model';
import type { DeliveryView } from './views';

/** Unfinished deliveries looked at for a page's pending ones: more would be a backlog the page cannot explain row by row anyway. */
const UNFINISHED_READ = 500;

type Unfinished = { _id: Types.ObjectId; event_type: string; subject: { kind: string; id: string }; status: string; queued: boolean; event_at: Date };

/** Why one pending delivery has not been tried yet, and the delivery it waits for (one subject's events go out in order). */
function whyPending(delivery: DeliveryView, channel: NotificationChannel, unfinished: Unfinished[]): Pick<DeliveryView, 'pending_reason' | 'waiting_for'> {
  const { kind } = delivery.event.subject;
  if (channel.disabled_at && delivery.event.type !== 'ping') return { pending_reason: 'the channel is disabled: it will be dropped, not sent', waiting_for: null };
  const own = unfinished.find((d) => d._id.toString() === delivery.id);
  if (own && !own.queued) return { pending_reason: `just recorded: being handed to the ${kind}’s delivery queue (the dispatcher looks every second)`, waiting_for: null };
  const sameSubject = unfinished.filter((d) => d.subject.kind === kind && d.subject.id === delivery.event.subject.id && d._id.toString() !== delivery.id);
  const ahead = sameSubject.find((d) => d.status === 'delivering') ?? sameSubject.find((d) => d.event_at.getTime() < new Date(delivery.event.at).getTime());
  if (ahead) {
    return {
      pending_reason: `waiting for the ${ahead.event_type} before it to be delivered or given up: one ${kind}’s events go out in order`,
      waiting_for: ahead._id.toString(),
    };
  }
  return { pending_reason: 'queued for its first attempt: it begins when a worker takes it (if it stays queued, no worker is running)', waiting_for: null };
}

/** A page of a channel's deliveries, each pending one saying why it waits. */
export async function withPendingReasons(channel: NotificationChannel, page: DeliveryView[]): Promise<DeliveryView[]> {
  if (!page.some((d) => d.status === 'pending')) return page;
  const unfinished = await NotificationDeliveryModel.find({ channel_id: channel._id, status: { $in: ['pending', 'delivering'] } }, { event_type: 1, subject: 1, status: 1, queued: 1, event_at: 1 })
    .sort({ event_at: 1, _id: 1 })
    .limit(UNFINISHED_READ)
    .lean<Unfinished[]>();
  return page.map((d) => (d.status === 'pending' ? { ...d, ...whyPending(d, channel, unfinished) } : d));
}
