import type { ApiAnswer } from '../loopback';
import type { ToolContext } from './tool';

/* Bosun's API as the tools read it: a 2xx answer's body or what Bosun refused, and the reads and console links several tools share. */

/** A tool's failure that the agent should read: Bosun's answer, as it gave it. */
export class Refused extends Error {
  constructor(readonly answer: { status: number; code: string; message: string; details?: unknown }) {
    super(answer.message);
  }
}

/** The body of a 2xx answer, or a Refused saying what Bosun said. */
export function answered(answer: ApiAnswer): Record<string, unknown> {
  if (answer.status >= 200 && answer.status < 300) return answer.body;
  const error = (answer.body.error ?? {}) as { code?: string; message?: string; details?: unknown };
  throw new Refused({ status: answer.status, code: error.code ?? `http_${answer.status}`, message: error.message ?? JSON.stringify(answer.body), ...(error.details ? { details: error.details } : {}) });
}

export const query = (params: Record<string, string | number | string[] | undefined>) => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) search.append(key, String(one));
  const text = search.toString();
  return text ? `?${text}` : '';
};

export const conversationLink = ({ consoleBase }: ToolContext, conversationId: string) => `${consoleBase}/conversations/${conversationId}`;
export const runLink = ({ consoleBase }: ToolContext, deploymentId: string, runId: string) => `${consoleBase}/deployments/${deploymentId}/runs/${runId}`;

export const pipelineRunLink = ({ consoleBase }: ToolContext, pipelineId: string, runId: string) => `${consoleBase}/pipelines/${pipelineId}/runs/${runId}`;

export const readConversation = async ({ api }: ToolContext, conversationId: string) => answered(await api.call('GET', `/conversations/${conversationId}`)).data as Record<string, unknown>;
export const readRun = async ({ api }: ToolContext, deploymentId: string, runId: string) => answered(await api.call('GET', `/deployments/${deploymentId}/runs/${runId}`)).data as Record<string, unknown>;
export const readPipelineRun = async ({ api }: ToolContext, pipelineId: string, runId: string) => answered(await api.call('GET', `/pipelines/${pipelineId}/runs/${runId}`)).data as Record<string, unknown>;
