import { setImmediate as nextTurn } from 'node:timers/promises';
import { SettledStarts } from '../../src/api/deployments/settled-starts';
import { eventually } from '../support/eventually';

/*
 * A burst of triggers is answered before the workflows of its runs start: the starts wait until no
 * trigger is in flight, or at most 100 ms under a load that never pauses.
 */
describe('starts of accepted triggers', () => {
  test('wait until every trigger in flight has been answered, then all go out', async () => {
    const starts = new SettledStarts();
    const sent: string[] = [];
    const first = starts.begin();
    const second = starts.begin();
    starts.defer(() => sent.push('first'));
    first();
    await nextTurn();
    expect(sent).toEqual([]);
    starts.defer(() => sent.push('second'));
    second();
    second();
    await nextTurn();
    expect(sent).toEqual(['first', 'second']);
  });

  test('with no trigger in flight, a start goes out at once (after the current I/O)', async () => {
    const starts = new SettledStarts();
    const sent: string[] = [];
    starts.defer(() => sent.push('alone'));
    await nextTurn();
    expect(sent).toEqual(['alone']);
  });

  test('under triggers that never pause, a start waits at most about 100 ms', async () => {
    const starts = new SettledStarts();
    const sent: number[] = [];
    starts.begin();
    const deferredAt = Date.now();
    starts.defer(() => sent.push(Date.now() - deferredAt));
    const [waited] = await eventually(async () => sent, (s) => s.length === 1, 5_000);
    expect(waited).toBeGreaterThanOrEqual(95);
  });
});
