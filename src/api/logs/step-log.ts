import type { Request, Response } from 'express';
import { z } from 'zod';
import type { Types } from 'mongoose';
import { readStepLogLines, searchStepLog, streamStepLog, type StepLogSource } from '../../domain/execution/step-logs';
import { notFound } from '../http/errors';
import { text } from '../http/text';
import { validate } from '../http/validation';
import { wholeNumber } from '../http/whole-numbers';

/** The most lines one request reads, and the most search matches it answers. */
export const MAX_LOG_LINES = 5000;
export const MAX_LOG_MATCHES = 1000;

/** A step's number in a path: 1 for the first. */
export const stepNumberSchema = wholeNumber('step', { min: 1 });

export const stepLogQuerySchema = z.strictObject({
  from: wholeNumber('from', { min: 1 }).optional().describe('The first line wanted (1-based); without it, the last `limit` lines'),
  limit: wholeNumber('limit', { min: 1, max: MAX_LOG_LINES }).default(1000).describe('How many lines'),
  q: text('q', { min: 1, max: 200 }).optional().describe('Search: the lines containing this text (case-insensitive), in order, at most 1,000'),
  format: z.enum(['json', 'raw']).default('json').describe('`raw`: the whole log as a text/plain download'),
});

export const stepLogLinesSchema = z
  .object({
    step: z.number().int(),
    first_line: z.number().int().describe('The number of `lines[0]` (1-based)'),
    lines: z.array(z.string()),
    total_lines: z.number().int(),
    total_length: z.number().int().describe('Characters stored'),
    complete: z.boolean().describe('The step has ended: the log grows no more'),
  })
  .meta({ id: 'StepLogLines' });

export const stepLogMatchesSchema = z
  .object({
    step: z.number().int(),
    query: z.string(),
    matches: z.array(z.object({ line: z.number().int(), text: z.string() })),
    more: z.boolean().describe('More lines matched than were answered'),
    complete: z.boolean(),
  })
  .meta({ id: 'StepLogMatches' });

export interface StepLogLocation extends StepLogSource {
  number: number;
  complete: boolean;
  filename: string;
}

interface StepHolder {
  _id: Types.ObjectId;
  steps: unknown[];
}

/** The step `number` (1-based) of a run, target or conversation, or 404. */
export function stepLogLocation(holder: StepHolder, number: number, name: string): StepLogLocation {
  const step = holder.steps[number - 1] as { status?: string; streamed?: number | null; output?: string | null } | undefined;
  if (!step) throw notFound('Step');
  const complete = !['pending', 'running'].includes(step.status ?? 'pending');
  return {
    ownerId: holder._id.toString(),
    step: number - 1,
    number,
    streamed: complete ? (step.streamed ?? 0) : null,
    output: step.output ?? '',
    complete,
    filename: `${name}-step-${number}.log`,
  };
}

/** Answers a step's whole log: lines by range (or the tail), a search, or the raw text. */
export async function sendStepLog(req: Request, res: Response, location: StepLogLocation) {
  const query = validate(stepLogQuerySchema, req.query, 'query');
  const { complete, number } = location;
  if (query.format === 'raw') {
    res.status(200).type('text/plain; charset=utf-8').set('Content-Disposition', `attachment; filename="${location.filename}"`);
    for await (const data of streamStepLog(location)) {
      if (!res.write(data)) await new Promise((resolve) => res.once('drain', resolve));
    }
    res.end();
    return;
  }
  if (query.q !== undefined) {
    const found = await searchStepLog(location, query.q, MAX_LOG_MATCHES);
    res.json({ data: { step: number, query: query.q, ...found, complete } });
    return;
  }
  const lines = await readStepLogLines(location, query.from ?? null, query.limit);
  res.json({ data: { step: number, ...lines, complete } });
}
