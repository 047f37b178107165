import { readFileSync } from 'node:fs';
import path from 'node:path';

const REPO = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(REPO, file), 'utf8');

/**
 * Which dependencies run an install script is decided, one by one, in package.json's allowScripts
 * (npm 11.16+), with the reason in docs/development.md: an install lists no unreviewed script, and a
 * dependency that brings a new one fails here until someone decides it.
 */
describe('install scripts', () => {
  const pkg = JSON.parse(read('package.json')) as { allowScripts?: Record<string, boolean>; scarfSettings?: unknown };
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean }> };
  const withScripts = [
    ...new Set(
      Object.entries(lock.packages)
        .filter(([, entry]) => entry.hasInstallScript)
        .map(([where]) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length)),
    ),
  ].sort();

  test('every dependency with an install script is allowed or denied by name, and only those are listed', () => {
    expect(withScripts.length).toBeGreaterThan(0);
    expect(Object.keys(pkg.allowScripts ?? {}).sort()).toEqual(withScripts);
    expect(Object.values(pkg.allowScripts ?? {}).every((decision) => typeof decision === 'boolean')).toBe(true);
  });

  test('the telemetry package runs nothing, and is opted out for an npm that would run it', () => {
    expect(pkg.allowScripts?.['@scarf/scarf']).toBe(false);
    expect(pkg.scarfSettings).toEqual({ enabled: false });
  });

  test('each decision has its reason in docs/development.md', () => {
    const development = read('docs/development.md');
    for (const name of withScripts) expect([name, development.includes(`| \`${name}\``)]).toEqual([name, true]);
  });
});
