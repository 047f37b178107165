import { Router } from 'express';
import { principalOf, requireScope } from '../http/auth';
import { pageQuerySchema } from '../http/pagination';
import { validate } from '../http/validation';
import { createDeploymentSchema, idempotencyKeySchema, updateDeploymentSchema } from './schemas';
import type { DeploymentService } from './service';

export function deploymentRoutes(deployments: DeploymentService): Router {
  const router = Router();
  const org = (req: Parameters<typeof principalOf>[0]) => principalOf(req).organizationId;
  const param = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0]! : value!);

  router.get('/', requireScope('read'), async (req, res) => {
    res.json(await deployments.list(org(req), validate(pageQuerySchema, req.query, 'query')));
  });

  router.post('/', requireScope('deployments:write'), async (req, res) => {
    const created = await deployments.create(org(req), validate(createDeploymentSchema, req.body));
    res.status(201).location(`${req.baseUrl}/${created.id}`).json({ data: created });
  });

  router.get('/:id', requireScope('read'), async (req, res) => {
    res.json({ data: await deployments.get(org(req), param(req.params.id)) });
  });

  router.patch('/:id', requireScope('deployments:write'), async (req, res) => {
    res.json({ data: await deployments.update(org(req), param(req.params.id), validate(updateDeploymentSchema, req.body)) });
  });

  router.delete('/:id', requireScope('deployments:write'), async (req, res) => {
    await deployments.remove(org(req), param(req.params.id));
    res.status(204).end();
  });

  router.post('/:id/run', requireScope('deployments:run'), async (req, res) => {
    const header = req.get('Idempotency-Key');
    const key = header === undefined ? undefined : validate(idempotencyKeySchema, header, 'Idempotency-Key header');
    const id = param(req.params.id);
    const { run, replayed } = await deployments.trigger(principalOf(req), id, key);
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
  });

  router.get('/:id/runs', requireScope('read'), async (req, res) => {
    res.json(await deployments.listRuns(org(req), param(req.params.id), validate(pageQuerySchema, req.query, 'query')));
  });

  router.get('/:id/runs/:runId', requireScope('read'), async (req, res) => {
    res.json({ data: await deployments.getRun(org(req), param(req.params.id), param(req.params.runId)) });
  });

  router.post('/:id/runs/:runId/cancel', requireScope('deployments:run'), async (req, res) => {
    res.status(202).json({ data: await deployments.cancelRun(org(req), param(req.params.id), param(req.params.runId)) });
  });

  return router;
}
