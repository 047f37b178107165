import { Router, type Request } from 'express';
import { Types } from 'mongoose';
import { isDuplicateKey } from '../../domain/database';
import { IdentityModel, RoleBindingModel, TeamModel, type Identity } from '../../domain/access/model';
import { ApiTokenModel } from '../../domain/tokens/model';
import { principalOf } from '../http/auth';
import { ApiError, notFound } from '../http/errors';
import { parseId } from '../http/ids';
import { findPage, pageQuerySchema } from '../http/pagination';
import { validate } from '../http/validation';
import { issueToken } from '../tokens/routes';
import { createTokenSchema } from '../tokens/schemas';
import { assertAnAdminRemains } from './admins';
import { requireEverywhere } from '../access/gate';
import { createPersonSchema, createServiceAccountSchema, updatePersonSchema, updateServiceAccountSchema } from './schemas';
import { toPersonView, toServiceAccountView } from './views';
import { checkOwnedWith, checkOwnership, forceOf, forceQuerySchema, type OwnedDefinition } from '../ownership/guard';
import { managedBindingsOf } from './owned-bindings';

type Kind = 'person' | 'service_account';
const WHAT: Record<Kind, string> = { person: 'Person', service_account: 'Service account' };

/** Runs a write; a name already taken in the organization is a 409. */
export async function unique<T>(what: string, name: string | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isDuplicateKey(error)) throw new ApiError('conflict', `The organization already has a ${what.toLowerCase()} named "${name}"`);
    throw error;
  }
}

/** An identity of a kind in the caller's organization, or 404. */
export async function identityOf(req: Request, kind: Kind, id = req.params.id as string): Promise<Identity> {
  const found = await IdentityModel.findOne({ _id: parseId(id, WHAT[kind]), organization_id: principalOf(req).organizationId, type: kind }).lean<Identity>();
  if (!found) throw notFound(WHAT[kind]);
  return found;
}

/** An identity as the ownership guard sees it: only service accounts are kept in Git (a person's `managed_by` stays null). */
const ownedOf = (identity: Identity): OwnedDefinition => ({ kind: 'ServiceAccount', name: identity.name, managedBy: identity.managed_by });

/** Its tokens revoked, its bindings and memberships removed, then the identity itself. */
async function removeIdentity(identity: Identity) {
  await ApiTokenModel.updateMany({ identity_id: identity._id, revoked_at: null }, { $set: { revoked_at: new Date() }, $unset: { active_name: 1 } });
  await RoleBindingModel.deleteMany({ 'subject.id': identity._id });
  await TeamModel.updateMany({ members: identity._id }, { $pull: { members: identity._id } });
  await IdentityModel.deleteOne({ _id: identity._id });
}

/**
 * People and service accounts, for administrators: list, read, create, update, delete, and a token
 * for any of them. A disabled person's tokens and sessions stop at once.
 */
export function identityRoutes(kind: Kind): Router {
  const router = Router();
  const admin = requireEverywhere('admin');
  const view = (identity: Identity): object => (kind === 'person' ? toPersonView(identity) : toServiceAccountView(identity));
  const org = (req: Request) => new Types.ObjectId(principalOf(req).organizationId);

  router.get('/', admin, async (req, res) => {
    res.json(await findPage(IdentityModel, { organization_id: org(req), type: kind }, validate(pageQuerySchema, req.query, 'query'), view));
  });

  router.post('/', admin, async (req, res) => {
    const input = kind === 'person' ? validate(createPersonSchema, req.body) : validate(createServiceAccountSchema, req.body);
    const created = await unique(WHAT[kind], input.name, () => IdentityModel.create({ organization_id: org(req), type: kind, ...input }));
    res.status(201).location(`${req.baseUrl}/${created._id.toString()}`).json({ data: view(created.toObject() as Identity) });
  });

  router.get('/:id', admin, async (req, res) => {
    res.json({ data: view(await identityOf(req, kind)) });
  });

  router.patch('/:id', admin, async (req, res) => {
    const identity = await identityOf(req, kind);
    const input = kind === 'person' ? validate(updatePersonSchema, req.body) : validate(updateServiceAccountSchema, req.body);
    const { disabled, force = false, ...fields } = input as { disabled?: boolean; force?: boolean } & Record<string, unknown>;
    const set: Record<string, unknown> = { ...fields, ...checkOwnership(principalOf(req), ownedOf(identity), { force }) };
    if (disabled === true && !identity.disabled_at) {
      if (identity._id.toString() === principalOf(req).identity.id) throw new ApiError('conflict', 'You cannot disable yourself: ask another administrator');
      await assertAnAdminRemains(principalOf(req).organizationId, { identityGone: identity._id.toString() });
      set.disabled_at = new Date();
    }
    if (disabled === false) set.disabled_at = null;
    const updated = await unique(WHAT[kind], fields.name as string | undefined, () =>
      IdentityModel.findOneAndUpdate({ _id: identity._id }, { $set: set }, { returnDocument: 'after' }).lean<Identity>().orFail(),
    );
    res.json({ data: view(updated) });
  });

  router.delete('/:id', admin, async (req, res) => {
    const identity = await identityOf(req, kind);
    const force = forceOf(validate(forceQuerySchema, req.query, 'query'));
    checkOwnership(principalOf(req), ownedOf(identity), { force, deleting: true });
    checkOwnedWith(principalOf(req), await managedBindingsOf(identity._id), { force });
    if (identity._id.toString() === principalOf(req).identity.id) throw new ApiError('conflict', 'You cannot delete yourself: ask another administrator');
    await assertAnAdminRemains(principalOf(req).organizationId, { identityGone: identity._id.toString() });
    await removeIdentity(identity);
    res.status(204).end();
  });

  router.post('/:id/tokens', admin, async (req, res) => {
    const identity = await identityOf(req, kind);
    if (identity.disabled_at) throw new ApiError('conflict', `${identity.name} is disabled: enable them before making a token`);
    const input = validate(createTokenSchema, req.body);
    res.status(201).set('Cache-Control', 'no-store').json({ data: await issueToken(principalOf(req), identity, input) });
  });

  return router;
}
