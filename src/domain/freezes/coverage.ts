import { Types } from 'mongoose';
import { lastFireAtOrBefore, nextFires } from '../time/cron';
import { parseDuration } from '../time/durations';
import { batcher } from '../batch';
import { ServerModel } from '../servers/model';
import { FreezeModel, type Freeze } from './model';

/*
 * Which freezes cover which servers, when: the one place every path asks (a trigger, a retry, a
 * conversation, a fleet run between batches, a plan, the freeze's own view).
 */

/** The longest a recurring freeze's window may last. */
export const MAX_FREEZE_DURATION_SECONDS = 31 * 86_400;

/** One open (or next) window of a freeze. */
export interface FreezeWindow {
  starts_at: Date;
  ends_at: Date;
}

/** What a freeze's timing is made of: a one-off window, or a cron and a duration in a zone. */
export type FreezeTiming = Pick<Freeze, 'starts_at' | 'ends_at' | 'cron' | 'duration' | 'time_zone'>;

/** A server as a freeze is asked about it. */
export interface FreezableServer {
  _id: Types.ObjectId | string;
  title?: string | null;
  tags?: readonly string[] | null;
}

// A recurring window that overlaps the next occurrence (a daily cron lasting 2 days) is followed
// through its occurrences up to this many, so "until" is when it really ends (or later re-checked).
const MAX_CHAINED_OCCURRENCES = 500;

const durationMs = (freeze: FreezeTiming) => parseDuration(freeze.duration!) * 1000;

/** A recurring window opening at `start`, followed through the occurrences that open before it closes. */
function chained(freeze: FreezeTiming, start: Date): FreezeWindow {
  const length = durationMs(freeze);
  let end = start.getTime() + length;
  let fire = start;
  for (let i = 0; i < MAX_CHAINED_OCCURRENCES; i += 1) {
    const next = nextFires(freeze.cron!, freeze.time_zone, fire, 1)[0]!;
    if (next.getTime() > end) break;
    end = Math.max(end, next.getTime() + length);
    fire = next;
  }
  return { starts_at: start, ends_at: new Date(end) };
}

/** The window of `freeze` open at `at`, or null: one-off [starts_at, ends_at); recurring, the last fire within its duration. */
export function windowAt(freeze: FreezeTiming, at: Date): FreezeWindow | null {
  if (!freeze.cron) {
    return freeze.starts_at && freeze.ends_at && freeze.starts_at <= at && at < freeze.ends_at ? { starts_at: freeze.starts_at, ends_at: freeze.ends_at } : null;
  }
  const length = durationMs(freeze);
  const fire = lastFireAtOrBefore(freeze.cron, freeze.time_zone, at, length);
  if (!fire || fire.getTime() + length <= at.getTime()) return null;
  return chained(freeze, fire);
}

/** The next window of `freeze` that opens after `at`, or null (a one-off freeze already begun). */
export function nextWindow(freeze: FreezeTiming, at: Date): FreezeWindow | null {
  if (!freeze.cron) return freeze.starts_at && freeze.ends_at && freeze.starts_at > at ? { starts_at: freeze.starts_at, ends_at: freeze.ends_at } : null;
  return chained(freeze, nextFires(freeze.cron, freeze.time_zone, at, 1)[0]!);
}

/** How many windows of one freeze a range lists at most (an every-minute cron is not a calendar). */
export const MAX_LISTED_WINDOWS = 200;

/**
 * The windows of `freeze` that overlap [from, to): a one-off's own, or each occurrence of a recurring
 * one (a fire of its cron in its zone, lasting its duration), at most MAX_LISTED_WINDOWS — what a
 * calendar draws, computed where every other answer about freezes is.
 */
export function windowsBetween(freeze: FreezeTiming, from: Date, to: Date): FreezeWindow[] {
  if (!freeze.cron) {
    return freeze.starts_at && freeze.ends_at && freeze.starts_at < to && freeze.ends_at > from ? [{ starts_at: freeze.starts_at, ends_at: freeze.ends_at }] : [];
  }
  const length = durationMs(freeze);
  const found: FreezeWindow[] = [];
  let cursor = new Date(from.getTime() - length);
  while (found.length < MAX_LISTED_WINDOWS) {
    const fire = nextFires(freeze.cron, freeze.time_zone, cursor, 1)[0]!;
    if (fire.getTime() >= to.getTime()) break;
    if (fire.getTime() + length > from.getTime()) found.push({ starts_at: fire, ends_at: new Date(fire.getTime() + length) });
    cursor = fire;
  }
  return found;
}

/** Whether a freeze covers a server: it covers all (tags null), or the server has one of its tags. */
export const coversServer = (freeze: Pick<Freeze, 'tags'>, server: FreezableServer) => !freeze.tags || freeze.tags.some((tag) => server.tags?.includes(tag));

/** A freeze that covers some of the servers asked about, its window, and those servers. */
export interface Cover<S extends FreezableServer = FreezableServer> {
  freeze: Freeze;
  window: FreezeWindow;
  servers: S[];
}

/**
 * An organization's freezes, by name. Every trigger asks: the requests of the same moment share one
 * query (a burst of triggers costs one round trip, not one each).
 */
const freezesByOrganization = batcher(async (organizationIds: string[]): Promise<Freeze[][]> => {
  const wanted = [...new Set(organizationIds)];
  const found = await FreezeModel.find({ organization_id: { $in: wanted.map((id) => new Types.ObjectId(id)) } })
    .sort({ name: 1 })
    .lean<Freeze[]>();
  return organizationIds.map((id) => found.filter((f) => f.organization_id.toString() === id));
});
export const freezesOf = (organizationId: Types.ObjectId | string) => freezesByOrganization(String(organizationId));

/** Pairs each freeze with the servers it covers, where `windowOf` gives it a window. */
async function covers<S extends FreezableServer>(organizationId: Types.ObjectId | string, servers: readonly S[], windowOf: (freeze: Freeze) => FreezeWindow | null): Promise<Cover<S>[]> {
  return coversAmong(await freezesOf(organizationId), servers, windowOf);
}

function coversAmong<S extends FreezableServer>(freezes: readonly Freeze[], servers: readonly S[], windowOf: (freeze: Freeze) => FreezeWindow | null): Cover<S>[] {
  if (!servers.length) return [];
  const found: Cover<S>[] = [];
  for (const freeze of freezes) {
    const covered = servers.filter((server) => coversServer(freeze, server));
    if (!covered.length) continue;
    const window = windowOf(freeze);
    if (window) found.push({ freeze, window, servers: covered });
  }
  return found;
}

/** Of `freezes` (an organization's, read already), those covering any of `servers` at `at`. */
export const coveringAmong = <S extends FreezableServer>(freezes: readonly Freeze[], servers: readonly S[], at = new Date()): Cover<S>[] => coversAmong(freezes, servers, (freeze) => windowAt(freeze, at));

/** The freezes of the organization that cover any of `servers` at `at`, each with its open window (its end: when it lifts) and the servers it covers. */
export function freezesCovering<S extends FreezableServer>(organizationId: Types.ObjectId | string, servers: readonly S[], at = new Date()): Promise<Cover<S>[]> {
  return covers(organizationId, servers, (freeze) => windowAt(freeze, at));
}

/** The freezes not open at `from` whose next window on any of `servers` opens by `until`. */
export function freezesStarting<S extends FreezableServer>(organizationId: Types.ObjectId | string, servers: readonly S[], from: Date, until: Date): Promise<Cover<S>[]> {
  return covers(organizationId, servers, (freeze) => {
    if (windowAt(freeze, from)) return null;
    const next = nextWindow(freeze, from);
    return next && next.starts_at <= until ? next : null;
  });
}

/** Of `freezes`, those covering any of `servers` at `now` (with their open window) or opening by `until` (with their next): what a page warns of. */
export const coveringNowOrBy = <S extends FreezableServer>(freezes: readonly Freeze[], servers: readonly S[], now: Date, until: Date): Cover<S>[] =>
  coversAmong(freezes, servers, (freeze) => {
    const next = windowAt(freeze, now) ?? nextWindow(freeze, now);
    return next && next.starts_at <= until ? next : null;
  });

/** When the last of these covers lifts (as things stand). */
export const liftsAt = (found: readonly Cover[]) => new Date(Math.max(...found.map((c) => c.window.ends_at.getTime())));

/** "black-friday (until 2025-12-01T00:00:00.000Z) covers web-1, web-2": what a refused step or run says. */
export const coversLine = (found: readonly Cover[]) =>
  found.map((c) => `change freeze ${c.freeze.name} (until ${c.window.ends_at.toISOString()}) covers ${c.servers.map((s) => s.title ?? String(s._id)).join(', ')}`).join('; ');

/** The freezes covering these servers (by id) at `at`, in one line; null when none does. */
export async function frozenLine(organizationId: string, serverIds: readonly (Types.ObjectId | string)[], at = new Date()): Promise<string | null> {
  const servers = await ServerModel.find({ _id: { $in: serverIds.map((id) => new Types.ObjectId(String(id))) }, organization_id: new Types.ObjectId(organizationId) }, { title: 1, tags: 1 }).lean();
  const found = await freezesCovering(organizationId, servers, at);
  return found.length ? coversLine(found) : null;
}
