import type { MongoClient } from 'mongodb';

/**
 * How many change streams are open on `database`, as mongod sees them (`$currentOp`, idle cursors
 * included: a stream waiting between two changes is an idle cursor or a getMore in progress).
 */
export async function changeStreamsOn(client: MongoClient, database: string): Promise<number> {
  const ops = await client.db('admin').aggregate([{ $currentOp: { idleCursors: true, allUsers: true } }]).toArray();
  const cursors = ops
    .filter((op) => op.cursor?.originatingCommand?.$db === database && op.cursor.originatingCommand.pipeline?.[0]?.$changeStream)
    .map((op) => String(op.cursor.cursorId));
  return new Set(cursors).size;
}
