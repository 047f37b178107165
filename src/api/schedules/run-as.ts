import { Types } from 'mongoose';
import type { Actor } from '../../domain/access/actor';
import { IdentityModel } from '../../domain/access/model';
import { actAsServiceAccount, type Principal } from '../../domain/tokens/service';
import { assertMayScheduleAs } from '../access/gate';
import { ApiError } from '../http/errors';
import type { ScheduleOwner, ScheduleTarget } from './targets';

const invalid = (message: string) => new ApiError('validation_failed', 'The request body is invalid', [{ path: 'run_as', message }]);

/**
 * The service account a schedule's ticks run as: the one named (its id), or the caller when it is
 * one. Only an admin may name another identity than itself (the gate's question); the account must
 * be able to run the deployment (a pipeline: every stage's) now, and is checked again at every tick:
 * what the gate refuses it is a 422 on run_as.
 */
export async function runAsOf(target: ScheduleTarget, principal: Principal, owner: ScheduleOwner, runAs: string | undefined): Promise<Actor> {
  let id = runAs;
  if (id === undefined) {
    if (principal.identity.type !== 'service_account') throw invalid('a schedule runs as a service account: give its id in run_as');
    id = principal.identity.id;
  }
  if (!/^[0-9a-f]{24}$/i.test(id)) throw invalid('must be the id of a service account');
  const identity = await IdentityModel.findOne({ _id: new Types.ObjectId(id), organization_id: principal.organizationId }, { type: 1, name: 1 }).lean();
  if (!identity || identity.type !== 'service_account') throw invalid('no service account with this id in the organization');
  assertMayScheduleAs(principal, { id, name: identity.name });
  const account = await actAsServiceAccount(id);
  if (typeof account === 'string') throw invalid(`the service account ${identity.name} is ${account}`);
  try {
    await target.find(account, owner._id.toString(), 'deployments:run');
  } catch (error) {
    if (error instanceof ApiError && (error.code === 'forbidden' || error.code === 'not_found')) throw invalid(`${identity.name} may not run this ${target.kind}: ${error.message}`);
    throw error;
  }
  return { type: 'service_account', id: identity._id.toString(), name: identity.name, token_id: null };
}
