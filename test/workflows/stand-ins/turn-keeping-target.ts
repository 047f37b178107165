import { condition, defineQuery, defineSignal, setHandler } from '@temporalio/workflow';
import { TURN_SIGNAL } from '../../../src/domain/contracts/workflow-ids';

export const hasTurnQuery = defineQuery<boolean>('hasTurn');

/**
 * A fleet target's workflow reduced to what the queue sees of it: it takes the turn it is given and
 * never gives it back. Nothing of it is pending while it holds the turn, so once it is terminated the
 * time-skipping server skips freely (the real target runs a step then, which would hold time still).
 */
export async function turnKeepingTarget(): Promise<void> {
  let turn = false;
  setHandler(defineSignal(TURN_SIGNAL), () => {
    turn = true;
  });
  setHandler(hasTurnQuery, () => turn);
  await condition(() => false);
}
