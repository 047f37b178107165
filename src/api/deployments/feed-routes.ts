import { Router } from 'express';
import { principalOf } from '../http/auth';
import { requireAction } from '../access/gate';
import { validate } from '../http/validation';
import { runFeedQuerySchema } from './run-feed';
import type { DeploymentService } from './service';

/** `GET /runs`: the organization's runs across its deployments, those the caller may read. */
export function runFeedRoutes(deployments: Pick<DeploymentService, 'listOrganizationRuns'>): Router {
  const router = Router();
  router.get('/', requireAction('read'), async (req, res) => {
    res.json(await deployments.listOrganizationRuns(principalOf(req), validate(runFeedQuerySchema, req.query, 'query')));
  });
  return router;
}
