import { Router } from 'express';
import { RoleBindingModel, type RoleBinding } from '../../domain/access/model';
import { tokensOf } from '../../domain/tokens/service';
import { principalOf } from '../http/auth';
import { toTokenViews } from '../tokens/views';
import { toRoleBindingView } from './views';
import type { DeploymentService } from '../deployments/service';

/**
 * `GET /me`: who the caller is (identity, teams, token) and every binding that gives it rights;
 * `GET /me/tokens`: its own tokens, for anyone (the organization's list is for administrators);
 * `GET /me/approvals`: the runs waiting for its approval (none for a service account).
 */
export function meRoutes(deployments: Pick<DeploymentService, 'approvalsFor'>): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    const principal = principalOf(req);
    const subjects = [principal.identity.id, ...principal.teams.map((t) => t.id)];
    const bindings = await RoleBindingModel.find({ organization_id: principal.organizationId, 'subject.id': { $in: subjects } }).sort({ createdAt: 1, _id: 1 }).lean<RoleBinding[]>();
    res.json({
      data: {
        identity: principal.identity,
        teams: principal.teams,
        bindings: bindings.map(toRoleBindingView),
        token: principal.tokenId ? { id: principal.tokenId, name: principal.tokenName ?? '', scopes: principal.scopes } : null,
      },
    });
  });
  router.get('/tokens', async (req, res) => {
    const principal = principalOf(req);
    const tokens = await tokensOf(principal.organizationId, principal.identity.id);
    res.json({ data: await toTokenViews(tokens, principal.tokenId) });
  });
  router.get('/approvals', async (req, res) => {
    res.json({ data: await deployments.approvalsFor(principalOf(req)) });
  });
  return router;
}
