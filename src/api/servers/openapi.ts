import { pageOf, pageQuerySchema } from '../http/pagination';
import { dataOf, idParam, locationHeader, type Operation } from '../openapi/operation';
import { z } from 'zod';
import { createServerSchema, serverListFilterSchema, tagFilterSchema, updateServerSchema, verifyServerSchema } from './schemas';
import { serverListItemSchema, serverSchema } from './views';
import { activityItemSchema, activityQuerySchema } from './activity';
import { importDiffSchema, importServersSchema } from './import-schemas';

const tag = 'Servers';
const id = { id: idParam('server') };

/** What `via` must be (docs/servers.md "Jump hosts"): no schema can say which ids are verified servers of the organization. */
const viaRules = [
  '`via` naming a server that is not one of your organization’s, or not `verified` (`details` names `via`)',
  '`via` making a cycle, or a route of more than 4 jump hosts (its hops’ own `via` counted)',
];

export const serverOperations: Operation[] = [
  {
    method: 'get', path: '/api/v1/servers', operationId: 'listServers', tag, scope: 'read',
    summary: 'List servers',
    description:
      'Newest first, 12 per page by default. A page past the end is empty, with the same `meta`. ' +
      '`tag` (repeatable: `?tag=web&tag=eu`) keeps the servers having all the tags; `status` those in that status.',
    query: pageQuerySchema.extend({ tag: tagFilterSchema, status: serverListFilterSchema.shape.status }),
    responses: { 200: { description: 'One page of servers', body: pageOf(serverListItemSchema) } },
    errors: ['validation_failed'],
  },
  {
    method: 'post', path: '/api/v1/servers', operationId: 'createServer', tag, scope: 'servers:write',
    summary: 'Add a server',
    description:
      'Stores the server (credentials sealed, never returned) and starts its verification over SSH: poll it for `verified`. ' +
      '`host` is a host name, an IPv4 or an IPv6 address; the private key must parse (an encrypted one needs its `passphrase`). ' +
      'One organization cannot add the same `username@host:port` twice (409).',
    body: { schema: createServerSchema, required: true },
    responses: { 201: { description: 'Added, `unverified`', body: dataOf(serverSchema), headers: locationHeader('server') } },
    errors: ['conflict', 'validation_failed', 'service_unavailable'],
    beyondSchema: [
      '`private_key` must be a key OpenSSH or PEM can read (`details` names `private_key`)',
      'an encrypted key needs its `passphrase`, and the passphrase must decrypt it (`details` names `passphrase`)',
      ...viaRules,
    ],
  },
  {
    method: 'post', path: '/api/v1/servers/import', operationId: 'importServers', tag, scope: 'servers:write',
    summary: 'Import servers from an inventory (Ansible INI or YAML, OpenSSH config)',
    description:
      'Reads the inventory and answers the diff against the servers an earlier import of the same `source` made: to `add`, to `change` (which fields, from and to), ' +
      '`unchanged`, and `missing` (imported from this source before, not listed now). A host\'s inventory name is its title; its groups (lowercased tag words) are tags. ' +
      '`dry_run` is required: `true` changes nothing; `false` applies the diff in one transaction — servers added (credentials from `defaults`) and verified as `POST /servers` does, ' +
      'IMPORT_VERIFY_CONCURRENCY at a time by one workflow (`verification`; poll the servers for `verified`); servers changed; missing ones quarantined ' +
      '(tagged `quarantined`, kept, selected by no deployment\'s `targets.tags` until the tag is removed). Any line that cannot be read aborts the whole import (422 naming the line). ' +
      'Credentials are never returned.',
    body: { schema: importServersSchema, required: true },
    responses: { 200: { description: 'The diff (applied unless `dry_run`)', body: dataOf(importDiffSchema) } },
    errors: ['conflict', 'validation_failed', 'service_unavailable'],
    beyondSchema: [
      'a line of `content` its `format` cannot read (`details` names `content` and the line)',
      'a host without a user when `defaults.username` is not given, or whose address is not one `POST /servers` accepts',
      'a jump host that is neither a host of the inventory nor a server of the organization',
      'adding servers needs `defaults.auth_method` and its credential (`details` names `defaults`)',
    ],
  },
  {
    method: 'get', path: '/api/v1/servers/:id/activity', operationId: 'getServerActivity', tag, scope: 'read',
    summary: 'The latest runs and conversations that touched a server',
    description:
      'Newest first: its one-server runs, the fleet runs it was a target of (with its own status there), and its conversations ' +
      '(also those of migration plans it is the source of). `limit`: 1 to 100, default 20.',
    params: id,
    query: activityQuerySchema,
    responses: { 200: { description: 'The server’s activity', body: dataOf(z.array(activityItemSchema)) } },
    errors: ['not_found', 'validation_failed'],
  },
  {
    method: 'get', path: '/api/v1/servers/:id', operationId: 'getServer', tag, scope: 'read',
    summary: 'Read a server, with its fingerprint',
    params: id,
    responses: { 200: { description: 'The server', body: dataOf(serverSchema) } },
    errors: ['not_found'],
  },
  {
    method: 'patch', path: '/api/v1/servers/:id', operationId: 'updateServer', tag, scope: 'servers:write',
    summary: 'Rename, re-tag or re-route a server',
    description:
      '`title`, `tags` (replacing the tags it had) and/or `via` (the jump hosts it is reached through, in order; `[]`: directly). ' +
      'Its tags decide which deployments’ next runs include it. A new route is checked for it and for every server reached through it.',
    params: id,
    body: { schema: updateServerSchema, required: true },
    responses: { 200: { description: 'The server as changed', body: dataOf(serverSchema) } },
    errors: ['not_found', 'validation_failed'],
    beyondSchema: viaRules,
  },
  {
    method: 'post', path: '/api/v1/servers/:id/verify', operationId: 'verifyServer', tag, scope: 'servers:write',
    summary: 'Verify a server again',
    description: 'Runs verification now (replacing one still running); poll the server for the result. After a reinstall, `trust_new_host_key` pins the key the server presents.',
    params: id,
    body: { schema: verifyServerSchema, required: false },
    responses: { 202: { description: 'Verification started; the server as it is', body: dataOf(serverSchema) } },
    errors: ['not_found', 'validation_failed', 'service_unavailable'],
  },
  {
    method: 'delete', path: '/api/v1/servers/:id', operationId: 'deleteServer', tag, scope: 'servers:write',
    summary: 'Delete a server',
    description: 'Its verification and health monitoring are stopped first; when Temporal cannot be reached the server is left as it was (503).',
    params: id,
    responses: { 204: { description: 'Deleted' } },
    errors: ['not_found', 'service_unavailable'],
  },
];
