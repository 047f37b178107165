import { readFileSync } from 'node:fs';
import { TEST_PASSWORD, type SshdInfo } from './sshd';

/** What must never appear in a log line: API tokens, private key material, passwords, LLM keys. */
function secretPatterns(sshd: SshdInfo): Array<{ what: string; test: (line: string) => boolean }> {
  const keyLines = sshd.privateKey.split('\n').filter((line) => line.length >= 16 && !line.startsWith('-----'));
  return [
    { what: 'an API token', test: (line) => /\bbsn_[A-Za-z0-9_-]{20,}/.test(line) },
    { what: 'a line of the test sshd private key', test: (line) => keyLines.some((k) => line.includes(k)) },
    { what: 'a private key header', test: (line) => line.includes('PRIVATE KEY-----') },
    { what: 'the test login password', test: (line) => line.includes(TEST_PASSWORD) },
    { what: 'an LLM API key', test: (line) => /\bsk-[A-Za-z0-9-]{12,}/.test(line) },
    { what: 'a notification channel’s signing secret', test: (line) => /\bwhsec_[A-Za-z0-9+/=]{20,}/.test(line) },
  ];
}

/** Every secret found in a log file, by kind and line number (never the secret itself); null when nothing was logged. */
export function secretsInLogs(logFile: string, sshd: SshdInfo): { lines: number; found: string[] } {
  const lines = readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
  const found: string[] = [];
  const patterns = secretPatterns(sshd);
  lines.forEach((line, i) => {
    for (const pattern of patterns) if (pattern.test(line)) found.push(`line ${i + 1}: ${pattern.what}`);
  });
  return { lines: lines.length, found };
}
