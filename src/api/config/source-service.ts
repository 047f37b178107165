import { Types } from 'mongoose';
import type { Actor } from '../../domain/access/actor';
import { IdentityModel } from '../../domain/access/model';
import { parseHostKey, repositoryAddress, RepositoryError } from '../../domain/config/git';
import { createSource, deleteSource, findSource, listSources, pinOfferedHostKey, sealSourceCredentials, updateSource, type SourceFields } from '../../domain/config-sources/store';
import { isDuplicateKey } from '../../domain/database';
import type { SecretBox } from '../../domain/secrets/secret-box';
import type { WorkflowGateway } from '../../domain/temporal/client';
import { parseDuration } from '../../domain/time/durations';
import { actAsServiceAccount, actorOf, type Principal } from '../../domain/tokens/service';
import { assertMayScheduleAs } from '../access/gate';
import { ApiError, notFound, unlessTemporalUnreachable } from '../http/errors';
import type { CreateSourceInput, UpdateSourceInput } from './source-schemas';
import { sourceView } from './source-views';

/*
 * Sync sources as an organization's admins manage them: made and changed (the credentials sealed,
 * the URL and run_as checked), deleted (its Temporal Schedule with it; the objects it applied stay,
 * still marked), and synced now — one sync at a time per source, as a durable workflow.
 */

const invalid = (path: string, message: string) => new ApiError('validation_failed', 'The request body is invalid', [{ path, message }]);

/** The URL as the fetcher would take it: refused here already (422 on git.url) rather than at the first sync. */
function checkedUrl(url: string, credentials: CreateSourceInput['credentials'] | undefined): string {
  let transport: string;
  try {
    transport = repositoryAddress(url).transport;
  } catch (error) {
    if (error instanceof RepositoryError) throw invalid('git.url', error.message);
    throw error;
  }
  if (transport === 'ssh' && credentials !== undefined && credentials?.type !== 'ssh_key') throw invalid('credentials', 'an ssh URL needs a deploy key: credentials of type ssh_key');
  return url;
}

/** The service account syncs act as (by id or name): only an admin names another identity than itself, and it must be able to act. */
async function runAsOf(principal: Principal, given: string): Promise<Actor> {
  const byId = /^[0-9a-f]{24}$/i.test(given);
  const identity = await IdentityModel.findOne({ organization_id: principal.organizationId, type: 'service_account', ...(byId ? { _id: new Types.ObjectId(given) } : { name: given }) }, { name: 1 }).lean();
  if (!identity) throw invalid('run_as', `no service account ${byId ? 'with this id' : `named "${given}"`} in the organization`);
  const id = identity._id.toString();
  assertMayScheduleAs(principal, { id, name: identity.name });
  const account = await actAsServiceAccount(id);
  if (typeof account === 'string') throw invalid('run_as', `the service account ${identity.name} is ${account}`);
  return { type: 'service_account', id, name: identity.name, token_id: null };
}

const hostKeyFields = (hostKey: string | null) => ({ host_key: hostKey === null ? null : parseHostKey(hostKey)!.key, host_key_fingerprint: hostKey === null ? null : parseHostKey(hostKey)!.fingerprint });

export function configSourceService({ secretBox, workflows }: { secretBox: SecretBox; workflows: WorkflowGateway }) {
  async function find(principal: Principal, id: string) {
    const source = await findSource(principal.organizationId, id);
    if (!source) throw notFound('Config source');
    return source;
  }
  const follow = (id: string) => unlessTemporalUnreachable('bring the source’s Temporal Schedule to it', () => workflows.configSources.follow(id));

  return {
    async create(principal: Principal, input: CreateSourceInput) {
      const _id = new Types.ObjectId();
      const fields: SourceFields = {
        name: input.name,
        git: { url: checkedUrl(input.git.url, input.credentials), ref: input.git.ref, path: input.git.path },
        every: input.every,
        every_seconds: input.every === null ? null : parseDuration(input.every),
        prune: input.prune,
        credentials: input.credentials ? sealSourceCredentials(secretBox, _id.toString(), input.credentials) : null,
        ...hostKeyFields(input.git.host_key ?? null),
        web_url: input.web_url,
        run_as: await runAsOf(principal, input.run_as),
      };
      try {
        const source = await createSource(principal.organizationId, _id, fields, actorOf(principal) as Actor);
        await follow(_id.toString());
        return sourceView(source);
      } catch (error) {
        if (isDuplicateKey(error)) throw new ApiError('conflict', `The organization already has a config source named "${input.name}"`);
        throw error;
      }
    },

    async list(principal: Principal) {
      return (await listSources(principal.organizationId)).map(sourceView);
    },

    async get(principal: Principal, id: string) {
      return sourceView(await find(principal, id));
    },

    async update(principal: Principal, id: string, input: UpdateSourceInput) {
      const source = await find(principal, id);
      const git = input.git ? { url: input.git.url === undefined ? source.git.url : checkedUrl(input.git.url, input.credentials), ref: input.git.ref ?? source.git.ref, path: input.git.path ?? source.git.path ?? '' } : undefined;
      const fields: Partial<SourceFields> = {
        ...(git ? { git } : {}),
        ...(input.git?.host_key !== undefined ? hostKeyFields(input.git.host_key) : {}),
        ...(input.every !== undefined ? { every: input.every, every_seconds: input.every === null ? null : parseDuration(input.every) } : {}),
        ...(input.prune !== undefined ? { prune: input.prune } : {}),
        ...(input.credentials !== undefined ? { credentials: input.credentials ? sealSourceCredentials(secretBox, id, input.credentials) : null } : {}),
        ...(input.web_url !== undefined ? { web_url: input.web_url } : {}),
        ...(input.run_as !== undefined ? { run_as: await runAsOf(principal, input.run_as) } : {}),
      };
      const updated = await updateSource(principal.organizationId, id, fields, actorOf(principal) as Actor);
      if (!updated) throw notFound('Config source');
      if (input.every !== undefined) await follow(id);
      return sourceView(updated);
    },

    /** The objects it applied stay, still marked with its name: a source of that name made again takes them back. */
    async remove(principal: Principal, id: string) {
      await find(principal, id);
      await deleteSource(principal.organizationId, id);
      await follow(id);
    },

    /** A sync now (the running one, if any), after pinning the host key a refused sync was offered when asked to. */
    async sync(principal: Principal, id: string, trustNewHostKey: boolean) {
      let source = await find(principal, id);
      if (trustNewHostKey) {
        if (!(await pinOfferedHostKey(principal.organizationId, id, actorOf(principal) as Actor))) {
          throw invalid('trust_new_host_key', 'no sync was refused for an unknown host key: there is no offered key to pin');
        }
        source = await find(principal, id);
      }
      const started = await unlessTemporalUnreachable('start the sync', () => workflows.configSources.syncNow(source, principal.identity.name));
      return { workflow_id: started.workflowId, source: sourceView(source) };
    },
  };
}

export type ConfigSourceService = ReturnType<typeof configSourceService>;
