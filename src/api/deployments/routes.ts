import { sendStepLog, stepNumberSchema } from '../logs/step-log';
import { Router } from 'express';
import { principalOf } from '../http/auth';
import { requireAction } from '../access/gate';
import { pageQuerySchema } from '../http/pagination';
import { validate } from '../http/validation';
import { approveSchema, createDeploymentSchema, idempotencyKeyOf, pauseSchema, rejectSchema, retrySchema, rollbackRequestSchema, triggerSchema, updateDeploymentSchema } from './schemas';
import type { DeploymentService } from './service';
import { forceOf, forceQuerySchema } from '../ownership/guard';

export function deploymentRoutes(deployments: DeploymentService): Router {
  const router = Router();
  const org = (req: Parameters<typeof principalOf>[0]) => principalOf(req);
  const param = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0]! : value!);

  router.get('/', requireAction('read'), async (req, res) => {
    res.json(await deployments.list(org(req), validate(pageQuerySchema, req.query, 'query')));
  });

  router.post('/', requireAction('deployments:write'), async (req, res) => {
    const created = await deployments.create(org(req), validate(createDeploymentSchema, req.body));
    res.status(201).location(`${req.baseUrl}/${created.id}`).json({ data: created });
  });

  router.get('/:id', requireAction('read'), async (req, res) => {
    res.json({ data: await deployments.get(org(req), param(req.params.id)) });
  });

  router.patch('/:id', requireAction('deployments:write'), async (req, res) => {
    res.json({ data: await deployments.update(org(req), param(req.params.id), validate(updateDeploymentSchema, req.body)) });
  });

  router.delete('/:id', requireAction('deployments:write'), async (req, res) => {
    await deployments.remove(org(req), param(req.params.id), forceOf(validate(forceQuerySchema, req.query, 'query')));
    res.status(204).end();
  });

  /** A trigger's or a retry's answer: 202, where to poll, and whether an Idempotency-Key replayed it. */
  const accepted = (req: Parameters<typeof principalOf>[0], res: import('express').Response, id: string, { run, replayed }: Awaited<ReturnType<DeploymentService['trigger']>>) => {
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    res
      .status(202)
      .location(`${req.baseUrl}/${id}/runs/${run._id.toString()}`)
      .json({
        run_id: run._id.toString(),
        status: run.status,
        message: `Run ${replayed ? 'already ' : ''}${run.status === 'queued' ? 'queued' : run.status}. Poll GET ${req.baseUrl}/${id}/runs/${run._id.toString()} for its status and output.`,
        temporal_ui_url: deployments.runUiUrl(run._id.toString()),
      });
  };
  // The body is optional while the deployment requires no parameter.
  const triggerBody = (req: Parameters<typeof principalOf>[0]) => validate(triggerSchema, req.body ?? {});

  router.post('/:id/run', requireAction('deployments:run'), async (req, res) => {
    const key = idempotencyKeyOf(req);
    const id = param(req.params.id);
    accepted(req, res, id, await deployments.trigger(principalOf(req), id, key, triggerBody(req)));
  });

  router.post('/:id/plan', requireAction('read'), async (req, res) => {
    res.json({ data: await deployments.plan(org(req), param(req.params.id), triggerBody(req)) });
  });

  router.post('/:id/runs/:runId/retry', requireAction('deployments:run'), async (req, res) => {
    const key = idempotencyKeyOf(req);
    const id = param(req.params.id);
    accepted(req, res, id, await deployments.retry(principalOf(req), id, param(req.params.runId), key, validate(retrySchema, req.body ?? {})));
  });

  router.get('/:id/runs', requireAction('read'), async (req, res) => {
    res.json(await deployments.listRuns(org(req), param(req.params.id), validate(pageQuerySchema, req.query, 'query')));
  });

  router.get('/:id/runs/:runId', requireAction('read'), async (req, res) => {
    res.json({ data: await deployments.getRun(org(req), param(req.params.id), param(req.params.runId)) });
  });

  router.get('/:id/runs/:runId/targets/:serverId', requireAction('read'), async (req, res) => {
    res.json({ data: await deployments.getTarget(org(req), param(req.params.id), param(req.params.runId), param(req.params.serverId)) });
  });

  router.get('/:id/runs/:runId/steps/:step/log', requireAction('read'), async (req, res) => {
    const step = validate(stepNumberSchema, req.params.step, 'path');
    await sendStepLog(req, res, await deployments.stepLogOf(org(req), param(req.params.id), param(req.params.runId), null, step));
  });

  router.get('/:id/runs/:runId/targets/:serverId/steps/:step/log', requireAction('read'), async (req, res) => {
    const step = validate(stepNumberSchema, req.params.step, 'path');
    await sendStepLog(req, res, await deployments.stepLogOf(org(req), param(req.params.id), param(req.params.runId), param(req.params.serverId), step));
  });

  router.post('/:id/runs/:runId/cancel', requireAction('deployments:run'), async (req, res) => {
    res.status(202).json({ data: await deployments.cancelRun(org(req), param(req.params.id), param(req.params.runId)) });
  });

  // People's decisions between batches: the service judges who may (approve: people with the approver role, never the triggerer).
  router.post('/:id/runs/:runId/approve', requireAction('approve'), async (req, res) => {
    const { comment } = validate(approveSchema, req.body ?? {});
    res.json({ data: await deployments.approveRun(org(req), param(req.params.id), param(req.params.runId), comment ?? null) });
  });

  router.post('/:id/runs/:runId/reject', requireAction('approve'), async (req, res) => {
    res.json({ data: await deployments.rejectRun(org(req), param(req.params.id), param(req.params.runId), validate(rejectSchema, req.body).reason) });
  });

  router.post('/:id/runs/:runId/rollback', requireAction('deployments:run'), async (req, res) => {
    const { reason } = validate(rollbackRequestSchema, req.body ?? {});
    res.status(202).json({ data: await deployments.rollbackRun(org(req), param(req.params.id), param(req.params.runId), reason) });
  });

  router.post('/:id/runs/:runId/pause', requireAction('deployments:run'), async (req, res) => {
    res.json({ data: await deployments.pauseRun(org(req), param(req.params.id), param(req.params.runId), validate(pauseSchema, req.body).reason) });
  });

  router.post('/:id/runs/:runId/resume', requireAction('deployments:run'), async (req, res) => {
    res.json({ data: await deployments.resumeRun(org(req), param(req.params.id), param(req.params.runId)) });
  });

  return router;
}
