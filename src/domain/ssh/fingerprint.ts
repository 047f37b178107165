/** The hardware and OS facts Bosun records for a server, gathered with one command over SSH. */
export interface ServerFingerprint {
  os: { name: string; version: string; kernel: string };
  cpu_cores: number;
  ram: string;
  disk: string;
}

const SEPARATOR = '--bosun--';

/** POSIX sh only; each section is separated so a missing tool leaves its section empty, not the others shifted. */
export const FINGERPRINT_COMMAND = [
  'cat /etc/os-release 2>/dev/null',
  'uname -r',
  'nproc 2>/dev/null || getconf _NPROCESSORS_ONLN',
  "grep -i '^MemTotal:' /proc/meminfo 2>/dev/null",
  'df -Pk / 2>/dev/null | tail -n 1',
].join(`; echo ${SEPARATOR}; `);

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** 25_165_824 KiB → "24 GiB"; one decimal below 10 units ("7.8 GiB"). */
export function humanSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const shown = value >= 10 || unit === 0 ? Math.round(value).toString() : value.toFixed(1).replace(/\.0$/, '');
  return `${shown} ${UNITS[unit]}`;
}

function osRelease(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (match?.[1]) fields[match[1]] = (match[2] ?? '').replace(/^["']|["']$/g, '');
  }
  return fields;
}

export class FingerprintParseError extends Error {
  override name = 'FingerprintParseError';
}

export function parseFingerprint(output: string): ServerFingerprint {
  const [release = '', kernel = '', cores = '', mem = '', df = ''] = output.split(SEPARATOR).map((s) => s.trim());
  const os = osRelease(release);
  const cpuCores = Number.parseInt(cores, 10);
  const memKib = Number.parseInt(/(\d+)/.exec(mem)?.[1] ?? '', 10);
  const diskKib = Number.parseInt(df.split(/\s+/)[1] ?? '', 10);
  if (!kernel || !Number.isFinite(cpuCores)) {
    throw new FingerprintParseError(`Unexpected output from the fingerprint command: ${output.slice(0, 200)}`);
  }
  return {
    os: { name: os.NAME ?? 'unknown', version: os.VERSION_ID ?? os.VERSION ?? 'unknown', kernel },
    cpu_cores: cpuCores,
    ram: Number.isFinite(memKib) ? humanSize(memKib * 1024) : 'unknown',
    disk: Number.isFinite(diskKib) ? humanSize(diskKib * 1024) : 'unknown',
  };
}
