/** A run's outputs (BOSUN_OUTPUT): for a one-server run its own; for a fleet run the values its targets agree on, and why each other name cannot be used. */
export async function runOutputs(_runId: string): Promise<{ values: Record<string, string>; conflicts: Record<string, string> }> {
  return { values: {}, conflicts: {} };
}
