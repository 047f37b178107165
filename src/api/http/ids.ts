import { Types } from 'mongoose';
import { z } from 'zod';
import { notFound } from './errors';

/** An id that cannot name a resource answers 404 like one that names nothing, revealing no id format. */
export function parseId(id: string, what: string): Types.ObjectId {
  if (!/^[0-9a-f]{24}$/i.test(id)) throw notFound(what);
  return new Types.ObjectId(id);
}

/** An id in a request body or query: 24 hex digits (spelled without the i flag, which JSON Schema patterns lack). */
export const objectIdSchema = z.string().regex(/^[0-9a-fA-F]{24}$/, 'must be an id');
