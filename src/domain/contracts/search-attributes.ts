import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';

const keyword = (name: string): SearchAttributeKey<'KEYWORD'> => ({ name, type: 'KEYWORD' });

/** Typed search attributes; the embedded dev server registers them at start, `ensureSearchAttributes` elsewhere. */
export const SEARCH_ATTRIBUTES = {
  organization: keyword('BosunOrganization'),
  server: keyword('BosunServer'),
  deployment: keyword('BosunDeployment'),
  // Who started it, as runs and conversations record it: "alice (person)", "ci-web (service account)".
  actor: keyword('BosunActor'),
} as const;

/** Search attributes of a server's workflows, whoever starts them (the API or a parent workflow). */
export const serverSearchAttributes = (organizationId: string, serverId: string) => [
  { key: SEARCH_ATTRIBUTES.organization, value: organizationId },
  { key: SEARCH_ATTRIBUTES.server, value: serverId },
];

/** Search attributes of a run on a server: find it by organization, server, deployment or who triggered it. */
export const runSearchAttributes = (run: { organizationId: string; serverId: string; deploymentId: string; triggeredBy: string }) => [
  ...serverSearchAttributes(run.organizationId, run.serverId),
  { key: SEARCH_ATTRIBUTES.deployment, value: run.deploymentId },
  { key: SEARCH_ATTRIBUTES.actor, value: run.triggeredBy },
];

/** Search attributes of a fleet run's own workflow: find it by organization, deployment or who triggered it. */
export const fleetSearchAttributes = (run: { organizationId: string; deploymentId: string; triggeredBy: string }) => [
  { key: SEARCH_ATTRIBUTES.organization, value: run.organizationId },
  { key: SEARCH_ATTRIBUTES.deployment, value: run.deploymentId },
  { key: SEARCH_ATTRIBUTES.actor, value: run.triggeredBy },
];

/** Search attributes of a conversation: find it by organization, server or who started it. */
export const conversationSearchAttributes = (organizationId: string, serverId: string, actor: string) => [
  ...serverSearchAttributes(organizationId, serverId),
  { key: SEARCH_ATTRIBUTES.actor, value: actor },
];
