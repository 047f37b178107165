import { Types } from 'mongoose';
import { ApiError, notFound, unlessTemporalUnreachable } from '../http/errors';
import { assertOnServers, checkServer, readableServerFilter } from '../access/gate';
import type { Action } from '../../domain/access/roles';
import type { Principal } from '../../domain/tokens/service';
import { parseId } from '../http/ids';
import { findPage, type PageQuery } from '../http/pagination';
import { sealCredentials, type ServerCredentials } from '../../domain/servers/credentials';
import { ServerModel, toRef, type Server } from '../../domain/servers/model';
import * as servers from '../../domain/servers/store';
import { checkPlannedRoutes, RouteError, serversBehind } from '../../domain/servers/route';
import type { CreateServerInput, UpdateServerInput, serverListFilterSchema } from './schemas';
import type { z } from 'zod';

type ServerListFilter = z.infer<typeof serverListFilterSchema>;
import { toDetailView, toListView } from './views';
import { serverFreezeNotices } from './freeze-notices';
import { isDuplicateKey } from '../../domain/database';
import { serverActivity } from './activity';
import { checkPrivateKey } from './private-key';
import { createServerImport } from './import-service';
import type { ServerServiceDeps } from './service-deps';

const viaRefused = (message: string) => new ApiError('validation_failed', 'The request body is invalid', [{ path: 'via', message }]);

/**
 * A server's `via` as it would be: every hop a server the caller can read, verified (its host key
 * pinned: a jump host is never trusted on first use), and the whole route — this server's and those
 * of the servers behind it — without a cycle and at most MAX_HOPS long. 422 otherwise.
 */
async function checkVia(principal: Principal, server: { id: string; title: string }, via: readonly string[]) {
  if (via.length) {
    const readable = await ServerModel.find({ ...readableServerFilter(principal), _id: { $in: via.map((id) => new Types.ObjectId(id)) } }, { host_key_fingerprint: 1, title: 1 }).lean();
    for (const id of via) {
      const hop = readable.find((candidate) => String(candidate._id) === id);
      if (!hop) throw viaRefused(`server ${id} is not a server of this organization`);
      if (!hop.host_key_fingerprint) throw viaRefused(`jump host "${hop.title}" is not verified yet: verify it first (its host key is pinned then)`);
    }
  }
  try {
    await checkPlannedRoutes(principal.organizationId, new Map([[server.id, { title: server.title, via }]]));
  } catch (error) {
    if (error instanceof RouteError) throw viaRefused(error.message.replace(/^via: /, ''));
    throw error;
  }
}

/** A server's views with the freezes covering it now or soon (the organization's freezes are read once for a page of them). */
const listView = async (s: Server) => toListView(s, await serverFreezeNotices(s.organization_id.toString(), s));
const detailView = async (s: Server) => toDetailView(s, await serverFreezeNotices(s.organization_id.toString(), s));

export function createServerService({ secretBox, workflows }: ServerServiceDeps) {
  /** The server if the caller may read it (404 otherwise) and do `action` on it (403 otherwise). */
  async function find(principal: Principal, id: string, action: Action = 'read') {
    const server = await ServerModel.findOne({ _id: parseId(id, 'Server'), organization_id: principal.organizationId }).lean<Server>();
    return checkServer(principal, server, action);
  }

  const startVerification = (server: Server, trustNewHostKey = false) =>
    unlessTemporalUnreachable('schedule verification', () => workflows.servers.verify(toRef(server), { trustNewHostKey }));

  return {
    /** `POST /servers/import`: an inventory's diff, applied unless a dry run. */
    importInventory: createServerImport({ secretBox, workflows }),

    /** The servers of the organization the caller may read, those having all of `tags` and in `status` when given. */
    list(principal: Principal, page: PageQuery, { tag, status }: ServerListFilter = { tag: [] }) {
      const filter = { ...readableServerFilter(principal), ...(tag.length ? { tags: { $all: tag } } : {}), ...(status ? { status } : {}) };
      return findPage(ServerModel, filter, page, listView);
    },

    /** Renames or re-tags a server (its tags decide which deployments' next runs include it). */
    async update(principal: Principal, id: string, input: UpdateServerInput) {
      const server = await find(principal, id, 'servers:write');
      // Not re-tagged out of the caller's reach either.
      if (input.tags) assertOnServers(principal, 'servers:write', [{ ...server, tags: input.tags }]);
      if (input.via) await checkVia(principal, { id: server._id.toString(), title: input.title ?? server.title }, input.via);
      const updated = await servers.updateServerDetails(server._id, principal.organizationId, input);
      if (!updated) throw notFound('Server');
      return detailView(updated);
    },

    async get(principal: Principal, id: string) {
      return detailView(await find(principal, id));
    },

    /** The latest runs and conversations that touched the server. */
    async activity(principal: Principal, id: string, limit: number) {
      const server = await find(principal, id);
      return serverActivity(principal.organizationId, server._id.toString(), limit);
    },

    /** Stores the server with its credentials sealed, then starts verification; if that cannot start, nothing is kept. */
    async create(principal: Principal, input: CreateServerInput) {
      const { organizationId } = principal;
      const { title, tags, host, port, username, auth_method, via } = input;
      assertOnServers(principal, 'servers:write', [{ _id: 'new', title, tags }]);
      const _id = new Types.ObjectId();
      await checkVia(principal, { id: _id.toString(), title }, via);
      let credentials: ServerCredentials;
      if (input.auth_method === 'private_key') {
        checkPrivateKey(input.private_key, input.passphrase);
        credentials = { private_key: input.private_key, passphrase: input.passphrase };
      } else {
        credentials = { password: input.password };
      }
      const doc = {
        _id,
        organization_id: new Types.ObjectId(organizationId),
        title,
        tags,
        host,
        port,
        username,
        auth_method,
        via: via.map((hop) => new Types.ObjectId(hop)),
        credentials: sealCredentials(secretBox, _id.toString(), credentials),
      };
      try {
        await servers.createServer(doc);
      } catch (error) {
        if (isDuplicateKey(error)) {
          throw new ApiError('conflict', `A server for ${username}@${host}:${port} already exists in this organization${via.length ? ' behind the same jump host' : ''}`);
        }
        throw error;
      }
      const server = await ServerModel.findById(_id).lean<Server>().orFail();
      try {
        await startVerification(server);
      } catch (error) {
        await servers.deleteServer(_id);
        throw error;
      }
      return detailView(server);
    },

    /** Re-runs verification; with trustNewHostKey the key presented this time replaces the pinned one (after a reinstall). */
    async reverify(principal: Principal, id: string, trustNewHostKey: boolean) {
      const server = await find(principal, id, 'servers:write');
      await startVerification(server, trustNewHostKey);
      return detailView(server);
    },

    /** Stops the server's workflows first, so a Temporal outage leaves the server in place (503), not half-deleted. */
    async remove(principal: Principal, id: string) {
      const server = await find(principal, id, 'servers:write');
      const behind = await serversBehind(principal.organizationId, server._id);
      if (behind.length) {
        throw new ApiError('conflict', `Server "${server.title}" is the jump host of ${behind.map((s) => `"${s.title}" (${s._id.toString()})`).join(', ')}: change their via first`);
      }
      await unlessTemporalUnreachable('stop the server’s workflows', () => workflows.servers.stop(server._id.toString()));
      await servers.deleteServer(server._id);
    },
  };
}

export type ServerService = ReturnType<typeof createServerService>;
