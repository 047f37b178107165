import { z } from 'zod';
import { dataOf, idParam, locationHeader, type Operation } from '../openapi/operation';
import { createSourceSchema, sourceViewSchema, syncSourceSchema, updateSourceSchema } from './source-schemas';

const tag = 'Config as code';
const base = '/api/v1/config/sources';
const id = { id: idParam('config source') };
const rules = [
  '`git.url`: ssh://, scp-like (`git@host:path`), https:// or git://; a local path, file:// and http:// are refused',
  '`git.host_key` an SSH public key line (`ssh-ed25519 AAAA…`, or a known_hosts line)',
  '`every` between 1m and 24h',
  '`web_url` an https URL',
  '`run_as` a service account of the organization that is not disabled; another identity than the caller only for an admin',
  '`credentials` of an ssh URL: `ssh_key`',
];

export const configSourceOperations: Operation[] = [
  {
    method: 'get', path: base, operationId: 'listConfigSources', tag, scope: 'admin', everywhere: true,
    summary: 'List the repositories definitions are synced from',
    description: 'By name, each with its sync status. Needs `admin` for the whole organization.',
    responses: { 200: { description: 'The sources', body: z.object({ data: z.array(sourceViewSchema) }) } },
    errors: ['forbidden'],
  },
  {
    method: 'post', path: base, operationId: 'createConfigSource', tag, scope: 'admin', everywhere: true,
    summary: 'Sync definitions from a Git repository',
    description:
      'Bosun fetches `git.ref` of the repository, plans the YAML files under `git.path` as the source named `name`, and applies the plan when it has no error, as the service account `run_as` — every `every` (a Temporal Schedule `bosun-config-source-<id>`), and on POST …/sync. ' +
      'Credentials are sealed and never shown again (`has_credentials`). An ssh host’s key is pinned with `git.host_key`, or from the first refused sync (`trust_new_host_key`).',
    body: { schema: createSourceSchema, required: true },
    responses: { 201: { description: 'Added (not synced yet)', body: dataOf(sourceViewSchema), headers: locationHeader('config source') } },
    errors: ['forbidden', 'conflict', 'validation_failed', 'service_unavailable'],
    beyondSchema: rules,
  },
  {
    method: 'get', path: `${base}/:id`, operationId: 'getConfigSource', tag, scope: 'admin', everywhere: true,
    summary: 'Read a config source and its sync status',
    description: '`status`: the revision applied last, the last plan (counts, its first problems), why the last sync applied nothing (`last_error`), when it last synced, the drift the last plan found, and the host key a refused sync was offered.',
    params: id,
    responses: { 200: { description: 'The source', body: dataOf(sourceViewSchema) } },
    errors: ['forbidden', 'not_found'],
  },
  {
    method: 'patch', path: `${base}/:id`, operationId: 'updateConfigSource', tag, scope: 'admin', everywhere: true,
    summary: 'Change a config source',
    description: 'Any of its settings but its name (the `source` its objects carry). `every: null` removes its Temporal Schedule; `credentials: null` removes them.',
    params: id,
    body: { schema: updateSourceSchema, required: true },
    responses: { 200: { description: 'Changed', body: dataOf(sourceViewSchema) } },
    errors: ['forbidden', 'not_found', 'validation_failed', 'service_unavailable'],
    beyondSchema: rules,
  },
  {
    method: 'delete', path: `${base}/:id`, operationId: 'deleteConfigSource', tag, scope: 'admin', everywhere: true,
    summary: 'Stop syncing from a repository',
    description: 'Its Temporal Schedule goes with it. The objects it applied stay, still marked `managed_by` its name: a source of the same name takes them back; an apply of another source refuses them until they are released.',
    params: id,
    responses: { 204: { description: 'Deleted' } },
    errors: ['forbidden', 'not_found', 'service_unavailable'],
  },
  {
    method: 'post', path: `${base}/:id/sync`, operationId: 'syncConfigSource', tag, scope: 'admin', everywhere: true,
    summary: 'Sync a config source now',
    description:
      'Starts the source’s sync workflow `config-sync-<id>` (one at a time: while one runs, this answers with that one); its outcome lands on the source’s `status`. ' +
      'With `trust_new_host_key`, first pins the key the last refused sync was offered (422 when none was).',
    params: id,
    body: { schema: syncSourceSchema, required: false },
    responses: { 202: { description: 'Syncing', body: dataOf(z.strictObject({ workflow_id: z.string(), source: sourceViewSchema })) } },
    errors: ['forbidden', 'not_found', 'validation_failed', 'service_unavailable'],
  },
];
