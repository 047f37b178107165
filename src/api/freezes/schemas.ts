import { z } from 'zod';
import { durationSchema } from '../http/durations';
import { tagSchema } from '../servers/schemas';
import { requiredText, text } from '../http/text';
import { forceField } from '../ownership/guard';

const timestamp = (what: string) => z.iso.datetime({ offset: true, error: `${what} is an ISO 8601 timestamp such as "2025-11-28T00:00:00Z"` });

const fields = {
  name: requiredText('name', 120).describe('Unique in the organization'),
  starts_at: timestamp('starts_at').describe('A one-off window’s start (with `ends_at`)'),
  ends_at: timestamp('ends_at').describe('A one-off window’s end: after `starts_at`'),
  cron: text('cron', { min: 1, max: 200 }).describe('A recurring window’s start: a five-field cron expression (minute hour day-of-month month day-of-week) in `time_zone` (with `duration`)'),
  duration: durationSchema.describe('How long each recurring window lasts, at most 31d ("10h": every weekday 08:00–18:00 with cron "0 8 * * 1-5")'),
  time_zone: text('time_zone', { min: 1, max: 100 }).describe('An IANA time zone ("Europe/Berlin"): required with `cron`; default "UTC"'),
  tags: z.array(tagSchema).min(1, 'give at least one tag, or null for every server').max(20, 'at most 20 tags').nullable().describe('The servers covered: those having one of the tags; null: every server'),
  note: text('note', { max: 2000 }).nullable(),
};

/** A new freeze: a one-off window (`starts_at`, `ends_at`) or a recurring one (`cron`, `duration`, `time_zone`). */
export const createFreezeSchema = z.strictObject({
  name: fields.name,
  starts_at: fields.starts_at.optional(),
  ends_at: fields.ends_at.optional(),
  cron: fields.cron.optional(),
  duration: fields.duration.optional(),
  time_zone: fields.time_zone.optional(),
  tags: fields.tags.default(null),
  note: fields.note.default(null),
});

/** A change: any fields; one kind's fields switch the freeze to that kind (the other's are cleared). */
export const updateFreezeSchema = z
  .strictObject({
    name: fields.name.optional(),
    starts_at: fields.starts_at.optional(),
    ends_at: fields.ends_at.optional(),
    cron: fields.cron.optional(),
    duration: fields.duration.optional(),
    time_zone: fields.time_zone.optional(),
    tags: fields.tags.optional(),
    note: fields.note.optional(),
    force: forceField,
  })
  .refine((v) => Object.keys(v).some((key) => key !== 'force'), 'send at least one field')
  .meta({ minProperties: 1 });

export type CreateFreezeInput = z.infer<typeof createFreezeSchema>;
export type UpdateFreezeInput = z.infer<typeof updateFreezeSchema>;

/** A range of the list (a calendar's week): both ends, at most 31 days apart. */
export const freezeRangeSchema = z
  .object({
    from: z.iso.datetime({ offset: true }).optional().describe('With `to`: each freeze lists its windows overlapping [from, to)'),
    to: z.iso.datetime({ offset: true }).optional(),
  })
  .refine((q) => (q.from === undefined) === (q.to === undefined), { message: 'give both from and to, or neither', path: ['to'] })
  .refine((q) => !q.from || !q.to || (Date.parse(q.to) > Date.parse(q.from) && Date.parse(q.to) - Date.parse(q.from) <= 31 * 86_400_000), { message: 'to is after from, at most 31 days later', path: ['to'] });
