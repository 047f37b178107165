/** How `bosun deploy` ends, for CI: 0 success, 1 failed/cancelled (or not done within --timeout), 2 usage or connection trouble. */
export class DeployExit extends Error {
  constructor(readonly code: 0 | 1 | 2, message: string) {
    super(message);
  }
}
