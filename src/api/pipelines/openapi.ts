import { pageOf, pageQuerySchema } from '../http/pagination';
import { dataOf, idParam, locationHeader, type Operation } from '../openapi/operation';
import { MAX_STAGES } from '../../domain/pipelines/model';
import { createPipelineSchema, updatePipelineSchema } from './schemas';
import { definedPipelineSchema, pipelineSchema } from './views';
import { forceQuerySchema } from '../ownership/guard';

const tag = 'Pipelines';
const id = { id: idParam('pipeline') };

/** What a definition's route checks beyond its schema: all at once, each detail naming its path and its stage. */
const definitionRules = [
  '`deployment` must be a deployment of your organization you may read (by name or id)',
  'stage names are unique; each `needs` entry names a stage defined above it (no cycle)',
  '`when: "failure"` needs at least one stage in `needs`',
  '`parameters` of a stage must be parameters its deployment declares, every `required` one without a default given; a secret one only by an expression; a value without expressions must match its `pattern`',
  'expressions are `${{ pipeline.parameters.NAME }}` (a parameter the pipeline declares) and `${{ stages.STAGE.outputs.NAME }}` (a stage this stage needs, directly or through its needs)',
  'parameter names are unique; a `pattern` must be a valid regular expression and its `default` must match it',
];

const defined = (description: string) => ({
  description: `${description}; \`warnings\` names each expression reading an output no step of that stage’s deployment mentions (with BOSUN_OUTPUT): outputs are checked when the pipeline runs`,
  body: definedPipelineSchema,
});

export const pipelineOperations: Operation[] = [
  {
    method: 'get', path: '/api/v1/pipelines', operationId: 'listPipelines', tag, scope: 'read',
    summary: 'List pipelines',
    description: 'Newest first, paginated like deployments: those whose every stage’s deployment you may read.',
    query: pageQuerySchema,
    responses: { 200: { description: 'One page of pipelines', body: pageOf(pipelineSchema) } },
    errors: ['validation_failed'],
  },
  {
    method: 'post', path: '/api/v1/pipelines', operationId: 'createPipeline', tag, scope: 'deployments:write',
    summary: 'Define a pipeline',
    description:
      `A release as stages (at most ${MAX_STAGES}), each running a deployment of the organization; \`needs\` makes a graph (fan-out, fan-in), \`when\` runs a stage after a failure too, ` +
      '`gate` waits for people before a stage. Every problem of the definition is named at once in one 422. Needs `deployments:write` on every stage’s deployment (403 naming the stage). ' +
      'Names are unique in the organization (409).',
    body: { schema: createPipelineSchema, required: true },
    responses: { 201: { ...defined('Defined'), headers: locationHeader('pipeline') } },
    errors: ['conflict', 'validation_failed'],
    beyondSchema: definitionRules,
  },
  {
    method: 'get', path: '/api/v1/pipelines/:id', operationId: 'getPipeline', tag, scope: 'read',
    summary: 'Read a pipeline',
    description: 'A pipeline with a stage whose deployment you may not read is a 404, as another organization’s.',
    params: id,
    responses: { 200: { description: 'The pipeline', body: dataOf(pipelineSchema) } },
    errors: ['not_found'],
  },
  {
    method: 'patch', path: '/api/v1/pipelines/:id', operationId: 'updatePipeline', tag, scope: 'deployments:write',
    summary: 'Change a pipeline',
    description:
      'Any of `name`, `description`, `parameters`, `stages` (the whole list); the pipeline as changed is judged as a definition is. Runs already triggered keep their stages. ' +
      'Needs `deployments:write` on every stage’s deployment, before and after (403 naming the stage).',
    params: id,
    body: { schema: updatePipelineSchema, required: true },
    responses: { 200: defined('The pipeline as changed') },
    errors: ['not_found', 'conflict', 'validation_failed', 'managed_by_source'],
    beyondSchema: definitionRules,
  },
  {
    method: 'delete', path: '/api/v1/pipelines/:id', operationId: 'deletePipeline', tag, scope: 'deployments:write',
    summary: 'Delete a pipeline',
    description: 'Needs `deployments:write` on every stage’s deployment (403 naming the stage).',
    params: id,
    query: forceQuerySchema,
    responses: { 204: { description: 'Deleted' } },
    errors: ['not_found', 'managed_by_source', 'validation_failed'],
  },
];
