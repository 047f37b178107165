import { Router, type Request, type Response } from 'express';
import { principalOf } from '../http/auth';
import { requireAction } from '../access/gate';
import { pageQuerySchema } from '../http/pagination';
import { validate } from '../http/validation';
import { approveSchema, idempotencyKeyOf, rejectSchema } from '../deployments/schemas';
import { cameThroughAgentDoor } from '../mcp/agent-door';
import type { PipelineRunService } from './run-service';
import { pipelineTriggerSchema, stageNameSchema } from './run-schemas';

/** A pipeline's plan and runs: trigger, read, cancel, retry, and people's decisions at a stage's gate. */
export function pipelineRunRoutes(runs: PipelineRunService): Router {
  const router = Router();
  const param = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0]! : value!);
  /** A trigger's or a retry's answer: 202, where to poll, and whether an Idempotency-Key replayed it. */
  const accepted = (req: Request, res: Response, id: string, { run, replayed }: Awaited<ReturnType<PipelineRunService['trigger']>>) => {
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    const path = `${req.baseUrl}/${id}/runs/${run._id.toString()}`;
    res
      .status(202)
      .location(path)
      .json({ run_id: run._id.toString(), status: run.status, message: `Pipeline run ${replayed ? 'already ' : ''}${run.status}. Poll GET ${path} for its stages.` });
  };

  router.post('/:id/plan', requireAction('read'), async (req, res) => {
    res.json({ data: await runs.plan(principalOf(req), param(req.params.id), validate(pipelineTriggerSchema, req.body ?? {})) });
  });

  router.post('/:id/run', requireAction('deployments:run'), async (req, res) => {
    const id = param(req.params.id);
    accepted(req, res, id, await runs.trigger(principalOf(req), id, idempotencyKeyOf(req), validate(pipelineTriggerSchema, req.body ?? {}), { viaAgentDoor: cameThroughAgentDoor(req) }));
  });

  router.get('/:id/runs', requireAction('read'), async (req, res) => {
    res.json(await runs.list(principalOf(req), param(req.params.id), validate(pageQuerySchema, req.query, 'query')));
  });

  router.get('/:id/runs/:runId', requireAction('read'), async (req, res) => {
    res.json({ data: await runs.get(principalOf(req), param(req.params.id), param(req.params.runId)) });
  });

  router.post('/:id/runs/:runId/cancel', requireAction('deployments:run'), async (req, res) => {
    res.status(202).json({ data: await runs.cancel(principalOf(req), param(req.params.id), param(req.params.runId)) });
  });

  router.post('/:id/runs/:runId/retry', requireAction('deployments:run'), async (req, res) => {
    const id = param(req.params.id);
    accepted(req, res, id, await runs.retry(principalOf(req), id, param(req.params.runId), idempotencyKeyOf(req), cameThroughAgentDoor(req)));
  });

  // A stage's gate: the service judges who may (people with approve on the stage's servers, never the triggerer).
  router.post('/:id/runs/:runId/stages/:stage/approve', requireAction('approve'), async (req, res) => {
    const { comment } = validate(approveSchema, req.body ?? {});
    res.json({ data: await runs.approveStage(principalOf(req), param(req.params.id), param(req.params.runId), validate(stageNameSchema, req.params.stage, 'path'), comment ?? null) });
  });

  router.post('/:id/runs/:runId/stages/:stage/reject', requireAction('approve'), async (req, res) => {
    const { reason } = validate(rejectSchema, req.body);
    res.json({ data: await runs.rejectStage(principalOf(req), param(req.params.id), param(req.params.runId), validate(stageNameSchema, req.params.stage, 'path'), reason) });
  });

  return router;
}
