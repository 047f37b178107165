import type { Config } from '../../config';
import { LlmPlanner, llmEndpoint } from './llm';
import { RulesPlanner } from './rules';
import type { Planner } from './types';

/** The LLM planner when one is configured, else the built-in rules. */
export function createPlanner(config: Config['planner']): Planner {
  return config.llm ? new LlmPlanner(config.llm) : new RulesPlanner();
}

/** The planner in use, for the start-up banner. */
export function describePlanner(config: Config['planner']): string {
  return config.llm ? `LLM ${config.llm.model} at ${llmEndpoint(config.llm.baseUrl)}` : 'built-in rules';
}
