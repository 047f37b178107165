import type { Logger } from '../../logger';
import { changeShaped, type ChangeListener } from '../../domain/change-streams';
import type { PipelineRunUpdatedEvent } from '../../domain/events';
import { PipelineRunModel, type PipelineRun } from '../../domain/pipelines/model';
import { pipelineRunViews } from '../pipelines/run-views';

/**
 * Relays every persisted change of a pipeline run (each bumps its `seq`) as the run's view, heard on
 * the API's one change stream (src/roles/api.ts). A stage's deployment run changing status alone is
 * not a change of the pipeline run: its `deployment_run_status` is as of the pipeline run's last change.
 */
export function pipelineRunRelay(emit: (event: PipelineRunUpdatedEvent) => void, log: Logger): ChangeListener {
  // Views are read one after another so that events leave in the order their changes came.
  let relayed = Promise.resolve();
  return {
    collections: [PipelineRunModel.collection.collectionName],
    match: { $or: [{ operationType: { $ne: 'update' } }, { 'updateDescription.updatedFields.seq': { $exists: true } }] },
    shape: changeShaped({ $mergeObjects: ['$fullDocument'] }),
    onChange: (change) => {
      const run = (change as { fullDocument?: PipelineRun }).fullDocument;
      if (!run) return;
      relayed = relayed
        .then(async () => {
          const [view] = await pipelineRunViews([run]);
          emit({ pipeline_run_id: run._id.toString(), seq: run.seq, run: view! });
        })
        .catch((err: unknown) => log.warn({ err }, 'could not relay a pipeline run change'));
    },
  };
}
