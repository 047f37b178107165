/*
 * The one gate: every "may this identity do this on these things" is one named question here,
 * asked before anything is stored or started, and answered yes, or with one of the gate's refusals
 * (refusals.ts). A route first checks that the caller may do the action somewhere (actions.ts); the
 * service then asks about the servers, deployment or run the request touches and filters lists by
 * the same grants, so a client of any kind (API, CLI, console, socket, agent) meets the same answer.
 * Nothing outside src/api/access reads grants (test/unit/layout.test.ts, "one judge").
 */
export { assertMayOpenSocket, requireAction, requireEverywhere, rightsOf } from './actions';
export { approversOf, type Approver } from './approvers';
export { assertMayDecideGate, assertMayDecideStep, assertMayForceManaged, assertMayOverrideFreeze } from './decisions';
export { assertOnRunServers, checkDeployment, mayApproveRun, checkRunTargets, checkTargetServer, readableDeploymentFilter } from './deployments';
export { checkPipeline, readablePipelineFilter, type StageDeployment } from './pipelines';
export { assertMayIssueScopes, assertMayRevokeToken, assertMayScheduleAs, assertMayUseAgentDoor } from './identities';
export { assertMayChangeKind, assertMayExportKind, mayReadKind } from './config';
export { tokensRights, type TokenRights } from './token-rights';
export { assertOnServers, checkServer, checkServersOf, readableAmong, readableServerFilter, readableServerIds, type NamedServer } from './servers';
