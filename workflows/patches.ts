import { patched } from '@temporalio/workflow';

/*
 * Every patch the workflows branch on, in one place: its id (recorded as a marker in histories:
 * never rename one), what the old branch keeps replaying, and the plan to retire it. Retiring
 * takes two releases, as Temporal's versioning guide says: first `deprecatePatch(id)` with the old
 * branch removed, once no workflow started before the patch can still be open or be replayed (a
 * query on a closed one); then the call itself, once no open workflow has the marker. Until then
 * the old histories stay under test/histories/<commit>/ and the replay test runs them.
 */
interface Patch {
  id: string;
  /** The commit that added it: workflows started by older code take the old branch. */
  since: string;
  /** What the old branch does, and which histories replay it. */
  oldBranch: string;
  /** When the old branch can go. */
  retire: string;
}

export const PATCHES = {
  honestWorkflowOutcome: {
    id: 'honest-workflow-outcome',
    since: 'cbab895',
    oldBranch: 'Runs and conversations complete whatever happened (no Failed or Cancelled workflow); test/histories/0895c8d/.',
    retire: 'Deprecate once no run or conversation started before cbab895 is open; workflows are not kept after their retention, so then the histories of 0895c8d can go too.',
  },
  uniqueActivityNames: {
    id: 'unique-activity-names',
    since: 'bcc497e',
    oldBranch: 'Conversations call setStatus / failStep / finish (activities/index.ts keeps those names registered); test/histories/0895c8d/conversation-*.json.',
    retire: 'Deprecate with honestWorkflowOutcome (same histories); then drop the legacy activity names.',
  },
  replanAfterFailure: {
    id: 'replan-after-failure',
    since: 'd2a660e',
    oldBranch: 'A failed conversation step is not offered to the planner again.',
    retire: 'Deprecate now in the next release: no conversation of before d2a660e is recorded or can still be open on a current deployment.',
  },
  turnsInDatabase: {
    id: 'turns-in-database',
    since: '72aba4c',
    oldBranch: 'A fleet target always waits for its queue to give it its turn (queueTarget); test/histories/9e7bc8b/.',
    retire: 'Deprecate together with runsTakeTheirTurns.',
  },
  runsTakeTheirTurns: {
    id: 'runs-take-their-turns',
    since: 'this release (the run queue with one owner)',
    oldBranch:
      'The queue starts a one-server run as its child and a fleet target takes its turn with takeTargetTurn; test/histories/a89f35b/ and the queue and target histories recorded before it.',
    retire: 'Deprecate once every queue and fleet run started before it has ended (queues end after 10 idle minutes, fleet runs with their targets); keep the histories a release longer.',
  },
  healthCheckAsTargetsEnd: {
    id: 'health-check-as-targets-end',
    since: 'this release (health checks without a soak overlap the batch)',
    oldBranch: 'A health check with soak_seconds 0 waits for every target of the batch before checking any (checkBatchHealth); histories with a soak never reach the branch.',
    retire: 'Deprecate once no fleet run with a soak-0 health check started before it is open (fleet runs end with their targets).',
  },
  changeFreezes: {
    id: 'change-freezes',
    since: 'this release (change freezes hold fleet runs between batches)',
    oldBranch: 'A fleet run starts its next batch without asking whether a change freeze covers it (no holdIfFrozen); every fleet history recorded before it.',
    retire: 'Deprecate once no fleet run started before it is open (fleet runs end with their targets).',
  },
  gateExpiryWarning: {
    id: 'gate-expiry-warning',
    since: 'this release (notifications: run.approval_expiring)',
    oldBranch: 'A gate waits its whole expiry in one timer, with no warning an hour before (warnGateExpiring); every gate history recorded before it.',
    retire: 'Deprecate once no fleet run started before it waits at a gate (gates expire within their expires_in).',
  },
  oneServerRunFreezes: {
    id: 'one-server-run-freezes',
    since: 'this release (a one-server run whose turn comes during a change freeze holds)',
    oldBranch: 'A one-server run begins with beginRun and runs its steps whatever freezes cover its server by then (the trigger alone refused frozen servers); every one-server run history recorded before it.',
    retire: 'Deprecate once no one-server run started before it is open (runs end with their steps).',
  },
  shortHealthRuns: {
    id: 'short-health-runs',
    since: 'issue 39 (WORKER_WORKFLOW_CACHE: an evicted health workflow replays its history at each check)',
    oldBranch: 'A server health workflow continues as new after 200 checks (about 2,400 events); every health history recorded before it.',
    retire: 'Deprecate once every health workflow started before it has continued as new (200 checks: under a week at the 60 s default).',
  },
  healthSweeps: {
    id: 'health-sweeps',
    since: 'issue 39 (one health sweep per organization instead of a workflow per server: 1,000 idle servers cost a core)',
    oldBranch: 'A verified server gets a health workflow of its own (serverHealthWorkflow), started as a child of its verification; every verification and health history recorded before it.',
    retire: 'Deprecate once no verification started before it is open and every per-server health workflow has ended (each ends at its next check).',
  },
  targetGroups: {
    id: 'target-groups',
    since: 'issue 39 (a batch\'s targets run in groups sharing a workflow, fleet-groups.ts, not a workflow each)',
    oldBranch: 'Each target of a batch runs in a child workflow of its own (deploymentTargetWorkflow, fleetTargetWorkflowId); every fleet history with batches recorded before it. A rolling window still starts a workflow per target.',
    retire: 'Deprecate once no fleet run started before it is open (fleet runs end with their targets); deploymentTargetWorkflow stays registered for rolling windows.',
  },
} as const satisfies Record<string, Patch>;

/** Whether this workflow takes the new branch of a patch (see PATCHES). */
export const isPatched = (patch: Patch) => patched(patch.id);
