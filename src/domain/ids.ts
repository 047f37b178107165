import { Types } from 'mongoose';

/** An id as stored: a string id becomes an ObjectId (for writes that bypass mongoose's casting). */
export const asObjectId = (id: string | Types.ObjectId): Types.ObjectId => (typeof id === 'string' ? new Types.ObjectId(id) : id);
