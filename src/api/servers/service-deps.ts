import type { SecretBox } from '../../domain/secrets/secret-box';
import type { WorkflowGateway } from '../../domain/temporal/client';

/** What the servers' services (service.ts, and the inventory import it holds) are built with. */
export interface ServerServiceDeps {
  secretBox: SecretBox;
  workflows: WorkflowGateway;
}
