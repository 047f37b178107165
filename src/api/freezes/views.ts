import { z } from 'zod';
import { actorView } from '../../domain/access/actor';
import { nextWindow, windowAt, windowsBetween, type FreezeWindow } from '../../domain/freezes/coverage';
import type { Freeze } from '../../domain/freezes/model';
import { iso } from '../../domain/timestamps';
import { actorSchema } from '../access/views';
import { timestampSchema } from '../http/timestamps';
import { managedByView, managedByViewSchema } from '../ownership/views';

const windowSchema = z.object({ starts_at: timestampSchema, ends_at: timestampSchema }).meta({ id: 'FreezeWindow' });

export const freezeViewSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: z.enum(['once', 'recurring']).describe('once: starts_at–ends_at; recurring: each fire of cron in time_zone, lasting duration'),
    starts_at: timestampSchema.nullable(),
    ends_at: timestampSchema.nullable(),
    cron: z.string().nullable(),
    duration: z.string().nullable(),
    time_zone: z.string(),
    tags: z.array(z.string()).nullable().describe('null: every server'),
    note: z.string().nullable(),
    active_now: z.boolean().describe('A window of it is open now'),
    current_window: windowSchema.nullable().describe('The window open now (a recurring one followed through overlapping occurrences); null when none is'),
    next_window: windowSchema.nullable().describe('The next window to open; null when none will'),
    windows: z.array(windowSchema).optional().describe('With ?from=&to= on the list: every window overlapping that range (at most 200 a freeze), for a calendar'),
    created_by: actorSchema,
    updated_by: actorSchema,
    managed_by: managedByViewSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'Freeze', description: 'A change freeze: while a window is open, no run starts on the servers it covers' });

const windowView = (w: FreezeWindow | null) => (w ? { starts_at: w.starts_at.toISOString(), ends_at: w.ends_at.toISOString() } : null);

export function toFreezeView(f: Freeze, now = new Date(), range?: { from: Date; to: Date }): z.infer<typeof freezeViewSchema> {
  const current = windowAt(f, now);
  return {
    id: f._id.toString(),
    name: f.name,
    kind: f.cron ? 'recurring' : 'once',
    starts_at: iso(f.starts_at),
    ends_at: iso(f.ends_at),
    cron: f.cron ?? null,
    duration: f.duration ?? null,
    time_zone: f.time_zone,
    tags: f.tags ? [...f.tags] : null,
    note: f.note ?? null,
    active_now: current !== null,
    current_window: windowView(current),
    next_window: windowView(nextWindow(f, now)),
    ...(range ? { windows: windowsBetween(f, range.from, range.to).map((w) => windowView(w)!) } : {}),
    created_by: actorView(f.created_by)!,
    updated_by: actorView(f.updated_by)!,
    managed_by: managedByView(f.managed_by),
    created_at: f.createdAt.toISOString(),
    updated_at: f.updatedAt.toISOString(),
  };
}
