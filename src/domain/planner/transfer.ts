import { shellQuote as q } from '../shell';
import type { Transfer } from './types';

/**
 * A transfer as one line, the step's `command`: a pipe or a compare shows both real commands (source
 * first, target second) as shell would write them, so neither people nor the policy see a summary.
 */
export function transferCommand(transfer: Transfer): string {
  switch (transfer.kind) {
    case 'copy':
      return `copy ${q(transfer.from)} (source) → ${q(transfer.to)} (target)`;
    case 'pipe':
      return `${transfer.source_command} | ${transfer.target_command}`;
    case 'compare':
      return `diff <(${transfer.source_command}) <(${transfer.target_command})`;
  }
}
