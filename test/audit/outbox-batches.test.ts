import { randomBytes } from 'node:crypto';
import mongoose from 'mongoose';
import type { CommandStartedEvent } from 'mongodb';
import { AuditPendingModel } from '../../src/domain/audit/model';
import { recordIntent, recordOutcome, systemActor } from '../../src/domain/audit/pending-entries';
import { embeddedMongoUri } from '../../src/embedded/mongod';
import { sharedServices } from '../support/shared';

/*
 * The audit outbox on the real MongoDB, its commands seen by the driver's command monitoring: a
 * fleet's activities record their commands' entries and outcomes at the same moments, and those go
 * out together, one insert and one update command, each entry still written once.
 */

const commands: CommandStartedEvent[] = [];

beforeAll(async () => {
  await mongoose.connect(embeddedMongoUri(sharedServices().mongoPort, `bosun_test_outbox_${randomBytes(4).toString('hex')}`), { monitorCommands: true });
  mongoose.connection.getClient().on('commandStarted', (event) => commands.push(event));
});
afterAll(async () => {
  await mongoose.connection.dropDatabase();
  await mongoose.disconnect();
});

const intent = (n: number) => ({
  organizationId: 'org-outbox',
  actor: systemActor('bosun worker'),
  action: 'command.run',
  target: { kind: 'server', id: `server-${n}` },
  details: { command: `echo ${n}` },
});
const sent = (name: string) => commands.filter((c) => c.commandName === name && c.command[name] === 'audit_pending');

test('twenty commands’ entries recorded at once are one insert command, their outcomes one update; a retried entry is not written twice', async () => {
  const keys = Array.from({ length: 20 }, (_, n) => `command:outbox:${n}`);
  commands.length = 0;
  // The first one's retry (an activity run again) among them: refused as a duplicate, answered as written.
  await Promise.all([...keys.map((key, n) => recordIntent(intent(n), 60, key)), recordIntent(intent(0), 60, keys[0])]);
  expect(sent('insert')).toHaveLength(1);
  expect(sent('insert')[0]!.command.documents).toHaveLength(21);

  commands.length = 0;
  await Promise.all(keys.map((key, n) => recordOutcome(key, n % 2 ? 'ok' : 'failed', { details: { exit_code: n % 2 ? 0 : 1 } })));
  expect(sent('update')).toHaveLength(1);
  expect(sent('update')[0]!.command.updates).toHaveLength(20);

  const stored = await AuditPendingModel.find({ _id: { $in: keys } }).lean();
  expect(stored).toHaveLength(20);
  expect(stored.map((entry) => [entry._id, entry.outcome, (entry.details as { exit_code: number }).exit_code]).sort()).toEqual(
    keys.map((key, n) => [key, n % 2 ? 'ok' : 'failed', n % 2 ? 0 : 1]).sort(),
  );
  // An outcome is written once: a second one (a retried activity's) leaves the first.
  await recordOutcome(keys[1]!, 'failed');
  expect((await AuditPendingModel.findById(keys[1]).lean())?.outcome).toBe('ok');
});
