import type { Logger } from '../../logger';
import { pipelineRunRoom } from '../../domain/events';
import { PipelineRunModel, type PipelineRun } from '../../domain/pipelines/model';
import { ApiError } from '../http/errors';
import { findPipeline } from '../pipelines/lookup';
import { pipelineRunViews } from '../pipelines/run-views';
import type { BosunServerSocket } from './handshake';
import { answerer, beyondLimit, OBJECT_ID } from './subscriptions';

const notFound = { ok: false as const, error: { code: 'not_found', message: 'Pipeline run not found' } };

/** A subscription to a pipeline run the caller may read (its pipeline's every stage's deployment, as GET asks); one room of the connection's limit. */
export function servePipelineSubscriptions(socket: BosunServerSocket, { log, subscriptionsPerConnection }: { log: Logger; subscriptionsPerConnection: number }) {
  const principal = socket.data.principal;
  /** The run, of the socket's organization and of a pipeline its caller may read; null otherwise. */
  const readableRun = async (id: string) => {
    const run = await PipelineRunModel.findOne({ _id: id, organization_id: principal.organizationId }).lean<PipelineRun>();
    if (!run) return null;
    return findPipeline(principal, run.pipeline_id.toString()).then(
      () => run,
      (error: unknown) => {
        // Refused (hidden, not found) is no run; anything else is an error of the subscription.
        if (error instanceof ApiError) return null;
        throw error;
      },
    );
  };

  socket.on('subscribe_pipeline_run', async (request, acknowledge) => {
    const ack = answerer(socket, 'subscribe_pipeline_run', request, acknowledge);
    try {
      const id = typeof request?.pipeline_run_id === 'string' && OBJECT_ID.test(request.pipeline_run_id) ? request.pipeline_run_id.toLowerCase() : null;
      // Checked before joining: not even for a moment may events of a run the caller may not read reach this socket.
      if (!id || !(await readableRun(id))) return ack(notFound);
      if (beyondLimit(socket, [pipelineRunRoom(id)], subscriptionsPerConnection)) {
        return ack({ ok: false, error: { code: 'rate_limited', message: `At most ${subscriptionsPerConnection} subscriptions per connection: unsubscribe from some first` } });
      }
      // Join, then read: an event between the two carries a seq the snapshot already covers.
      await socket.join(pipelineRunRoom(id));
      const run = await readableRun(id);
      if (!run) return ack(notFound);
      const [view] = await pipelineRunViews([run]);
      ack({ ok: true, data: { seq: run.seq, run: view } });
    } catch (err) {
      log.error({ err }, 'subscribe_pipeline_run failed');
      ack({ ok: false, error: { code: 'internal_error', message: 'Could not subscribe; try again' } });
    }
  });
  socket.on('unsubscribe_pipeline_run', async (request, ack) => {
    if (typeof request?.pipeline_run_id === 'string') await socket.leave(pipelineRunRoom(request.pipeline_run_id.toLowerCase()));
    if (typeof ack === 'function') ack({ ok: true, data: null });
  });
}
