import { Schema, Types, model } from 'mongoose';

/**
 * A step's whole output, beyond the capped head and tail its run or conversation shows: chunks in
 * their own collection, keyed by the document holding the step (a run, a fleet target, a
 * conversation), the step's index and the chunk's offset in the step's stream (characters). Text is
 * stored as redacted, up to a limit per step; MongoDB removes chunks after the retention time.
 */
const stepLogChunkSchema = new Schema(
  {
    owner_id: { type: Schema.Types.ObjectId, required: true },
    step: { type: Number, required: true },
    offset: { type: Number, required: true },
    /** Characters of `data`, and newlines in it: enough to find a line without reading the text. */
    length: { type: Number, required: true },
    newlines: { type: Number, required: true },
    ends_line: { type: Boolean, required: true },
    data: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);
// Written again at the same offset by a retried write: one chunk, not two.
stepLogChunkSchema.index({ owner_id: 1, step: 1, offset: 1 }, { unique: true });
export const StepLogChunkModel = model('StepLogChunk', stepLogChunkSchema);

export const DEFAULT_STEP_LOG_LIMIT_BYTES = 64 * 1024 * 1024;
/** No document near MongoDB's 16 MiB: a large flush is stored as several chunks. */
const CHUNK_CHARACTERS = 512 * 1024;
const TTL_INDEX = 'created_at_ttl';

const countNewlines = (text: string) => {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count += 1;
  return count;
};

/** Appends a flush of a step's output at `offset` (characters streamed before it); idempotent. */
export async function appendStepLog(ownerId: Types.ObjectId | string, step: number, offset: number, data: string): Promise<void> {
  if (!data) return;
  const now = new Date();
  const operations = [];
  for (let start = 0; start < data.length; start += CHUNK_CHARACTERS) {
    let end = Math.min(data.length, start + CHUNK_CHARACTERS);
    // Never split a surrogate pair.
    if (end < data.length && /[\uD800-\uDBFF]/.test(data[end - 1]!)) end -= 1;
    const piece = data.slice(start, end);
    operations.push({
      updateOne: {
        filter: { owner_id: new Types.ObjectId(String(ownerId)), step, offset: offset + start },
        update: { $set: { length: piece.length, newlines: countNewlines(piece), ends_line: piece.endsWith('\n'), data: piece, created_at: now } },
        upsert: true,
      },
    });
    start = end - CHUNK_CHARACTERS;
  }
  await StepLogChunkModel.bulkWrite(operations, { ordered: true });
}

/** Chunks are removed `days` after they were written (a TTL index, changed in place when the setting changes). */
export async function ensureStepLogRetention(days: number): Promise<void> {
  const seconds = Math.round(days * 86_400);
  const collection = StepLogChunkModel.collection;
  await StepLogChunkModel.createCollection().catch(() => undefined);
  const indexes = await collection.indexes().catch(() => [] as Array<{ name?: string; expireAfterSeconds?: number }>);
  const existing = indexes.find((i) => i.name === TTL_INDEX);
  if (!existing) await collection.createIndex({ created_at: 1 }, { name: TTL_INDEX, expireAfterSeconds: seconds });
  else if (existing.expireAfterSeconds !== seconds) {
    await collection.db.command({ collMod: collection.collectionName, index: { name: TTL_INDEX, expireAfterSeconds: seconds } });
  }
}

interface ChunkMeta {
  _id: Types.ObjectId | null;
  offset: number;
  length: number;
  newlines: number;
  /** The number of the line this chunk's first character belongs to. */
  line: number;
  /** The text of a chunk that is the step's own output. */
  data?: string;
}

/** Where a step's whole log is: its chunks, or (none written) the step's own output, which then holds all of it. */
export interface StepLogSource {
  ownerId: string;
  step: number;
  /** Bounds a finished step's log (null while it runs). */
  streamed: number | null;
  /** The step's output as its document holds it. */
  output: string;
}

interface Chunk {
  _id: Types.ObjectId | null;
  offset: number;
  length: number;
  newlines: number;
  ends_line: boolean;
  data?: string;
}

/**
 * A step's chunks in stream order. `streamed` bounds a finished step's (a retried write's leftovers
 * past it are not its); a chunk that overlaps the one before (a retry's, written at an offset
 * already covered) is skipped. A step whose output never outgrew its document has no chunk: its
 * output is the one chunk.
 */
async function* chunksInOrder({ ownerId, step, streamed, output }: StepLogSource, withText: boolean): AsyncGenerator<Chunk> {
  const cursor = StepLogChunkModel.find(
    { owner_id: ownerId, step, ...(streamed !== null ? { offset: { $lt: streamed } } : {}) },
    { offset: 1, length: 1, newlines: 1, ends_line: 1, ...(withText ? { data: 1 } : {}) },
  )
    .sort({ offset: 1 })
    .lean()
    .cursor();
  let covered = 0;
  let any = false;
  for await (const chunk of cursor) {
    any = true;
    if (chunk.offset < covered) continue;
    covered = chunk.offset + chunk.length;
    yield chunk;
  }
  if (!any && output) yield { _id: null, offset: 0, length: output.length, newlines: countNewlines(output), ends_line: output.endsWith('\n'), data: output };
}

/** A step's log as stored: its chunks' places (their text only when it is not in a chunk document). */
async function chunksOf(source: StepLogSource): Promise<{ chunks: ChunkMeta[]; lines: number; length: number }> {
  let line = 1;
  let length = 0;
  let endsWithNewline = true;
  const chunks: ChunkMeta[] = [];
  for await (const chunk of chunksInOrder(source, false)) {
    chunks.push({ _id: chunk._id, offset: chunk.offset, length: chunk.length, newlines: chunk.newlines, line, data: chunk.data });
    line += chunk.newlines;
    length = chunk.offset + chunk.length;
    endsWithNewline = chunk.ends_line;
  }
  // A last line without its newline yet is a line too.
  const lines = chunks.length === 0 ? 0 : endsWithNewline ? line - 1 : line;
  return { chunks, lines, length };
}

export interface LogLines {
  /** The number of the first line in `lines` (1-based). */
  first_line: number;
  lines: string[];
  total_lines: number;
  /** Characters stored. */
  total_length: number;
}

/**
 * Lines `from`..`from + count - 1` of a step's log (1-based); with `from` null, the last `count`
 * lines. Only the chunks holding them are read.
 */
export async function readStepLogLines(source: StepLogSource, from: number | null, count: number): Promise<LogLines> {
  const { chunks, lines: total, length } = await chunksOf(source);
  const first = Math.max(1, from ?? total - count + 1);
  const last = Math.min(total, first + count - 1);
  if (total === 0 || first > total) return { first_line: first, lines: [], total_lines: total, total_length: length };
  // From the chunk holding the newline before line `first` (or the first chunk) to the one holding the newline ending line `last` (or the last chunk).
  const endsAtOrAfter = (line: number) => chunks.findIndex((c) => c.line + c.newlines >= line);
  const start = first === 1 ? 0 : endsAtOrAfter(first);
  const found = endsAtOrAfter(last + 1);
  const end = found === -1 ? chunks.length - 1 : found;
  const wanted = chunks.slice(start, end + 1);
  const ids = wanted.flatMap((c) => (c._id ? [c._id] : []));
  const texts = new Map(ids.length ? (await StepLogChunkModel.find({ _id: { $in: ids } }, { data: 1 }).lean()).map((c) => [c._id.toString(), c.data]) : []);
  const text = wanted.map((c) => c.data ?? texts.get(String(c._id)) ?? '').join('');
  const split = text.split('\n');
  const base = chunks[start]!.line;
  return { first_line: first, lines: split.slice(first - base, last - base + 1), total_lines: total, total_length: length };
}

/** The whole log, chunk by chunk in order (a raw download). */
export async function* streamStepLog(source: StepLogSource): AsyncGenerator<string> {
  for await (const chunk of chunksInOrder(source, true)) yield chunk.data ?? '';
}

export interface LogMatch {
  line: number;
  text: string;
}

/** Lines containing `query` (case-insensitive), first to last, at most `limit`; `more` when there were others. */
export async function searchStepLog(source: StepLogSource, query: string, limit: number): Promise<{ matches: LogMatch[]; more: boolean }> {
  const needle = query.toLowerCase();
  const matches: LogMatch[] = [];
  let line = 1;
  let carry = '';
  for await (const data of streamStepLog(source)) {
    const parts = (carry + data).split('\n');
    carry = parts.pop()!;
    for (const text of parts) {
      if (text.toLowerCase().includes(needle)) {
        if (matches.length === limit) return { matches, more: true };
        matches.push({ line, text });
      }
      line += 1;
    }
  }
  if (carry && carry.toLowerCase().includes(needle)) {
    if (matches.length === limit) return { matches, more: true };
    matches.push({ line, text: carry });
  }
  return { matches, more: false };
}
