import { Types } from 'mongoose';
import { notFound } from './errors';

/** An id that cannot name a resource answers 404 like one that names nothing, revealing no id format. */
export function parseId(id: string, what: string): Types.ObjectId {
  if (!/^[0-9a-f]{24}$/i.test(id)) throw notFound(what);
  return new Types.ObjectId(id);
}
