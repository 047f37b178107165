import { z } from 'zod';
import { coveringNowOrBy, coversServer, freezesOf, windowAt, type FreezableServer } from '../../domain/freezes/coverage';
import { timestampSchema } from '../http/timestamps';

/*
 * What a server's, a deployment's or a schedule's view says of the change freezes covering it: the
 * server-side answer of coverage.ts, so that no client decides by itself which freeze covers what.
 */

/** How far ahead a view warns of a freeze about to open. */
export const FREEZE_NOTICE_DAYS = 7;

export const freezeNoticeSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    starts_at: timestampSchema.describe('When its window opens (or opened)'),
    ends_at: timestampSchema.describe('When its window lifts'),
    active_now: z.boolean().describe('Open now: a trigger is refused (409 frozen) unless a person with role admin overrides it'),
  })
  .meta({ id: 'FreezeNotice', description: `A change freeze covering it now, or whose next window opens within ${FREEZE_NOTICE_DAYS} days` });

export const freezeNoticesSchema = z.array(freezeNoticeSchema).describe(`The change freezes covering it now or opening within ${FREEZE_NOTICE_DAYS} days, soonest first`);

/** A deployment's notices also say which of its targets each freeze covers. */
export const targetFreezeNoticesSchema = z
  .array(freezeNoticeSchema.extend({ server_ids: z.array(z.string()).describe('The targets it covers') }))
  .describe(`The change freezes covering any of its targets (as resolved now) now or opening within ${FREEZE_NOTICE_DAYS} days, soonest first`);

export type TargetFreezeNotice = z.infer<typeof targetFreezeNoticesSchema>[number];

/** The freezes covering any of `servers` now or within FREEZE_NOTICE_DAYS, soonest first, each with the servers it covers. */
export async function freezeNotices(organizationId: string, servers: readonly FreezableServer[], now = new Date()): Promise<TargetFreezeNotice[]> {
  const all = await freezesOf(organizationId);
  if (!all.length) return [];
  const until = new Date(now.getTime() + FREEZE_NOTICE_DAYS * 86_400_000);
  return coveringNowOrBy(all, servers, now, until)
    .sort((a, b) => a.window.starts_at.getTime() - b.window.starts_at.getTime())
    .map(({ freeze, window, servers: covered }) => ({
      id: freeze._id.toString(),
      name: freeze.name,
      starts_at: window.starts_at.toISOString(),
      ends_at: window.ends_at.toISOString(),
      active_now: window.starts_at <= now,
      server_ids: covered.map((s) => String(s._id)),
    }));
}

/** One server's notices (the server is the one covered: its id is not repeated). */
export const serverFreezeNotices = async (organizationId: string, server: FreezableServer) =>
  (await freezeNotices(organizationId, [server])).map(({ id, name, starts_at, ends_at, active_now }) => ({ id, name, starts_at, ends_at, active_now }));

export const frozenBySchema = z
  .array(z.object({ id: z.string(), name: z.string(), ends_at: timestampSchema.describe('When that window lifts') }))
  .describe('The change freezes open then on the deployment’s targets (as they stand now): a tick then is skipped (outcome frozen)');

/** For the moments of a deployment's schedule: which freezes covering its targets are open at each. */
export async function freezesOpenAt(organizationId: string, targets: readonly FreezableServer[]): Promise<(at: Date) => z.infer<typeof frozenBySchema>> {
  const covering = (await freezesOf(organizationId)).filter((freeze) => targets.some((server) => coversServer(freeze, server)));
  return (at) =>
    covering.flatMap((freeze) => {
      const open = windowAt(freeze, at);
      return open ? [{ id: freeze._id.toString(), name: freeze.name, ends_at: open.ends_at.toISOString() }] : [];
    });
}
