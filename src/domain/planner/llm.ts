import type OpenAI from 'openai';
import type { LlmConfig } from '../../config';
import { historyMessage, malformedMessage, refusedMessage, systemPrompt } from './llm-prompt';
import { PLAN_RESPONSE_FORMAT, readReply } from './llm-reply';
import type { PlanContext, PlannedStep, Planner, PlanOptions, PlanResult, StepReport } from './types';

/** The OpenAI client library, loaded when a model planner is made: a process without one never pays for it. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const openai = () => require('openai') as typeof import('openai');

type Message = OpenAI.ChatCompletionMessageParam;

/** The client's own retries of connection errors, timeouts, 429 and 5xx before an error reaches the caller. */
const CLIENT_RETRIES = 2;

/** The endpoint refused the request itself (bad key, unknown model...): retrying cannot help. */
export class LlmConfigurationError extends Error {
  override name = 'LlmConfigurationError';
}

/** Answers the endpoint gives to a request it will never accept, with what to check. */
const CONFIGURATION_HINTS: Record<number, string> = {
  400: 'does the endpoint support this model with temperature 0 and a json_schema response_format?',
  401: 'check LLM_API_KEY.',
  403: 'the key may not use this model or endpoint; check LLM_API_KEY and LLM_MODEL.',
  404: 'check LLM_MODEL and LLM_BASE_URL (it usually ends in /v1).',
  422: 'does the endpoint support this model with temperature 0 and a json_schema response_format?',
};

/** The base URL without credentials or query: safe to show in messages and logs. */
export function llmEndpoint(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `${url.origin}${url.pathname.replace(/\/$/, '')}`;
}

/** The first error code (ECONNREFUSED...) in an error's cause chain. */
function causeCode(error: unknown): string | undefined {
  for (let cause = (error as { cause?: unknown })?.cause; cause; cause = (cause as { cause?: unknown }).cause) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** Plans with a model behind any OpenAI-compatible chat-completions endpoint, asking again when an answer is unusable. */
export class LlmPlanner implements Planner {
  readonly name = 'llm';
  readonly maxReplans: number;
  private readonly client: OpenAI;
  private readonly describedAs: string;

  constructor(private readonly config: LlmConfig) {
    this.maxReplans = config.maxReplans;
    this.describedAs = `${config.model} at ${llmEndpoint(config.baseUrl)}`;
    this.client = new (openai().default)({
      baseURL: config.baseUrl,
      // The client insists on a key; a keyless local server gets no Authorization header at all.
      apiKey: config.apiKey ?? 'none',
      defaultHeaders: config.apiKey ? undefined : { Authorization: null },
      timeout: config.timeoutMs,
      maxRetries: CLIENT_RETRIES,
    });
  }

  plan(instruction: string, context: PlanContext, options: PlanOptions = {}): Promise<PlanResult> {
    return this.converse(opening(instruction, context), context, options);
  }

  replan(instruction: string, context: PlanContext, history: StepReport[], options: PlanOptions = {}): Promise<PlanResult> {
    return this.converse([...opening(instruction, context), { role: 'user', content: historyMessage(history) }], context, options);
  }

  private async converse(messages: Message[], context: PlanContext, options: PlanOptions): Promise<PlanResult> {
    let lastProblem = '';
    for (let attempt = 1; attempt <= this.config.maxAttempts; attempt += 1) {
      const answer = await this.complete(messages);
      if (answer?.refusal) return this.cannotPlan(answer.refusal);
      const reply = readReply(answer?.content, context);
      if (reply.kind === 'cannot_plan') return this.cannotPlan(reply.reason);
      let correction: string;
      if (reply.kind === 'malformed') {
        lastProblem = `was not usable: ${reply.problem}`;
        correction = malformedMessage(reply.problem);
      } else {
        const refused = refusedSteps(reply.steps, options);
        if (!refused.length) return { ok: true, steps: reply.steps };
        lastProblem = `asked for steps the command policy refuses: ${refused.map((r) => `step ${r.index + 1} ("${r.step.title}": ${r.step.command}): ${r.reason}`).join('; ')}`;
        correction = refusedMessage(refused);
      }
      messages.push({ role: 'assistant', content: answer?.content ?? '' }, { role: 'user', content: correction });
    }
    return {
      ok: false,
      reason: [
        `The LLM planner (${this.describedAs}) gave no usable plan in ${this.config.maxAttempts} attempt${this.config.maxAttempts === 1 ? '' : 's'}.`,
        `Its last answer ${lastProblem}`,
      ].join('\n'),
    };
  }

  private cannotPlan(reason: string): PlanResult {
    return { ok: false, reason: `The LLM planner (${this.config.model}) could not plan this instruction: ${reason}` };
  }

  /** One chat completion; a transport failure throws once the client's retries are spent. */
  private async complete(messages: Message[]) {
    try {
      const completion = await this.client.chat.completions.create({
        model: this.config.model,
        messages,
        temperature: 0,
        response_format: PLAN_RESPONSE_FORMAT,
      });
      return completion.choices[0]?.message;
    } catch (error) {
      if (!(error instanceof openai().APIError)) throw error;
      const detail = this.redact([error.message, causeCode(error)].filter(Boolean).join(' ')).slice(0, 500);
      const hint = error.status === undefined ? undefined : CONFIGURATION_HINTS[error.status];
      if (hint) throw new LlmConfigurationError(`The LLM endpoint ${this.describedAs} refused the planner's request (${detail}): ${hint}`);
      // A plain error: the activity retries it later.
      throw new Error(`The LLM endpoint ${this.describedAs} failed to answer in ${CLIENT_RETRIES + 1} tries (${detail}).`);
    }
  }

  /** Endpoints may echo what they were sent; the key never leaves in a message. */
  private redact(text: string): string {
    return this.config.apiKey ? text.split(this.config.apiKey).join('<hidden>') : text;
  }
}

const opening = (instruction: string, context: PlanContext): Message[] => [
  { role: 'system', content: systemPrompt(context) },
  { role: 'user', content: instruction },
];

function refusedSteps(steps: PlannedStep[], options: PlanOptions) {
  return steps.flatMap((step, index) => {
    const reason = options.refusal?.(step);
    return reason ? [{ index, step, reason }] : [];
  });
}
