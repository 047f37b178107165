import type { ChangeStreamDocument } from 'mongodb';
import { finishedBy } from '../../src/api/observability/outcomes';

type Doc = { status: string; steps: Array<{ status: string; started_at?: Date | null; completed_at?: Date | null }> };
const FINAL = ['success', 'failed', 'cancelled'];
const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));
const update = (doc: Doc, changedKeys: string[]) =>
  ({ operationType: 'update', fullDocument: doc, changedKeys }) as unknown as ChangeStreamDocument<Doc> & { changedKeys: string[] };

describe('what a persisted change finished (counted by the metrics)', () => {
  const done: Doc = {
    status: 'failed',
    steps: [
      { status: 'success', started_at: at(0), completed_at: at(2) },
      { status: 'failed', started_at: at(2), completed_at: at(5) },
      { status: 'skipped' },
    ],
  };

  test('the change that sets the final status and a step’s result counts both, with the step’s duration', () => {
    expect(finishedBy(update(done, ['status', 'completed_at', 'seq', 'steps.1.status', 'steps.1.completed_at']), FINAL)).toEqual({
      status: 'failed',
      steps: [{ status: 'failed', seconds: 3 }],
    });
  });

  test('a repeated write of the same results (a retried activity) sets no status and counts nothing', () => {
    expect(finishedBy(update(done, ['completed_at', 'seq', 'steps.1.completed_at']), FINAL)).toEqual({ status: null, steps: [] });
  });

  test('progress counts nothing: a status that is not final, a step still running, a step never started', () => {
    const running: Doc = { status: 'running', steps: [{ status: 'running', started_at: at(0) }, { status: 'skipped' }] };
    expect(finishedBy(update(running, ['status', 'steps.0.status', 'steps.1.status', 'seq']), FINAL)).toEqual({ status: null, steps: [] });
  });

  test('a step pushed whole already finished counts; deletes count nothing', () => {
    const pushed: Doc = { status: 'running', steps: [{ status: 'success', started_at: at(0), completed_at: at(1) }] };
    expect(finishedBy(update(pushed, ['steps.0', 'seq']), FINAL).steps).toEqual([{ status: 'success', seconds: 1 }]);
    expect(finishedBy({ operationType: 'delete' } as unknown as ChangeStreamDocument<Doc>, FINAL)).toEqual({ status: null, steps: [] });
  });
});
