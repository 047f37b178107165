import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';

const keyword = (name: string): SearchAttributeKey<'KEYWORD'> => ({ name, type: 'KEYWORD' });

/** Typed search attributes; the embedded dev server registers them at start, `ensureSearchAttributes` elsewhere. */
export const SEARCH_ATTRIBUTES = {
  organization: keyword('BosunOrganization'),
  server: keyword('BosunServer'),
  deployment: keyword('BosunDeployment'),
} as const;

/** Search attributes of a server's workflows, whoever starts them (the API or a parent workflow). */
export const serverSearchAttributes = (organizationId: string, serverId: string) => [
  { key: SEARCH_ATTRIBUTES.organization, value: organizationId },
  { key: SEARCH_ATTRIBUTES.server, value: serverId },
];

/** Search attributes of a run on a server: find it by organization, server or deployment. */
export const runSearchAttributes = (run: { organizationId: string; serverId: string; deploymentId: string }) => [
  ...serverSearchAttributes(run.organizationId, run.serverId),
  { key: SEARCH_ATTRIBUTES.deployment, value: run.deploymentId },
];

/** Search attributes of a fleet run's own workflow: find it by organization or deployment. */
export const fleetSearchAttributes = (run: { organizationId: string; deploymentId: string }) => [
  { key: SEARCH_ATTRIBUTES.organization, value: run.organizationId },
  { key: SEARCH_ATTRIBUTES.deployment, value: run.deploymentId },
];

/** Search attributes of a conversation: find it by organization and server. */
export const conversationSearchAttributes = (organizationId: string, serverId: string) => serverSearchAttributes(organizationId, serverId);
