import { logsHaveTimes, serviceCommand, serviceLogCommand } from './os-family';
import { NAME } from './phrases';
import { shellQuote as q } from '../shell';
import type { ServerContext } from './types';
import { SERVICE_WORDS, serviceName, timeWindow, wanted } from './clause';
import type { Intent, IntentStep, StepBuilder } from './intent';

/* The steps of the intents about services and their logs (each reads the groups its pattern in intents.ts captures), and the intents of service actions. */

type ServiceAction = 'start' | 'stop' | 'restart' | 'reload' | 'enable' | 'disable';

/** A log step's title and command, with the time window asked for when the server's log has times (else the title says it is not applied). */
function logStep(server: ServerContext, service: string | null, errorsOnly: boolean, clause: string, fallback: number): IntentStep {
  const lines = wanted(clause, fallback, 10_000);
  const window = timeWindow(clause);
  const applied = window && logsHaveTimes(server) ? window : null;
  const what = errorsOnly ? (service ? `errors of ${service}` : 'errors in the system log') : service ? `log lines of ${service}` : 'lines of the system log';
  const when = applied ? ` (${applied.said})` : '';
  const command = serviceLogCommand(server, service ? q(service) : null, { errorsOnly, lines, since: applied?.since ?? null, until: applied?.until ?? null });
  return { title: `Last ${lines} ${what}${when}`, command };
}

/** The intent of a service action said with one of its verbs ("restart|bounce"): m[1] the service (or the one named before). */
export function serviceIntent(action: ServiceAction, verbs: string): Intent {
  return {
    id: `service_${action}`,
    label: `${action} a service`,
    risk: 'change',
    pattern: new RegExp(`\\b(?:${verbs})\\s+(?:the\\s+)?(?:service\\s+)?${NAME}(?:\\s+service)?\\b`, 'i'),
    build: (m, server, memory) => {
      const name = serviceName(m[1], memory);
      return name ? { title: `${action[0]!.toUpperCase()}${action.slice(1)} ${name}`, command: serviceCommand(server, action, q(name)) } : null;
    },
  };
}

/** service_errors: m[1] the service, when said. */
export const serviceErrors: StepBuilder = (m, server, memory, clause) => {
  const name = m[1] && !['log', 'logs', 'journal', 'system', 'the'].includes(m[1].toLowerCase()) ? serviceName(m[1], memory) : memory.service;
  return logStep(server, name, true, clause, 50);
};

/** service_logs: m[1] or m[2] the service, when said ("its logs": the one named before). */
export const serviceLogs: StepBuilder = (m, server, memory, clause) => {
  const raw = m[1] ?? m[2];
  const name = raw && !SERVICE_WORDS.has(raw.toLowerCase()) && !['system', 'error', 'the'].includes(raw.toLowerCase()) ? serviceName(raw, memory) : memory.service;
  return logStep(server, name, false, clause, 100);
};

/** service_active: m[1] the service. */
export const serviceActive: StepBuilder = (m, server, memory) => {
  const name = serviceName(m[1], memory);
  return name ? { title: `Check that ${name} runs`, command: serviceCommand(server, 'is-active', q(name)) } : null;
};

/** service_status: m[1] or m[2] the service (or the one named before). */
export const serviceStatus: StepBuilder = (m, server, memory) => {
  const name = serviceName(m[1] ?? m[2], memory);
  return name ? { title: `Status of ${name}`, command: serviceCommand(server, 'status', q(name)) } : null;
};
