import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startService, type ManagedProcess } from '../../src/embedded/child-process';
import { freePort } from '../../src/embedded/ports';
import { portOpen } from './processes';

const run = promisify(execFile);

/**
 * Temporal's time-skipping test server is the Java SDK's `temporal-test-server`; the SDK would download
 * a native build of it from temporal.download, which this machine cannot reach, so it comes from Maven
 * Central. 1.38.0: the last Java SDK release before @temporalio/testing 1.24.0, the one its "default" meant.
 */
export const TEST_SERVER_VERSION = '1.38.0';
/** Pinned: Maven 3.8's own default (2.8) is from 2013, and an unpinned prefix takes whatever is newest. */
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies';
const MAIN_CLASS = 'io.temporal.testserver.TestServer';
/** A heap cap (the server holds a test's histories only), one GC thread, and the quick JIT only: it lives for one test file. */
const JVM_OPTIONS = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-XX:+ExitOnOutOfMemoryError'];
/** Starting a JVM on a loaded machine takes seconds, and over a minute beside a 1,000-target bench; the SDK's own start would give up after 5. */
const START_TIMEOUT_MS = 180_000;

const POM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>bosun.test</groupId>
  <artifactId>temporal-test-server-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId>
      <artifactId>temporal-test-server</artifactId>
      <version>${TEST_SERVER_VERSION}</version>
    </dependency>
  </dependencies>
</project>
`;

/** Where the server's jars are cached: `<cache>/temporal-test-server-<version>/lib`. */
export const testServerLibDir = (cacheDir: string) => path.join(cacheDir, `temporal-test-server-${TEST_SERVER_VERSION}`, 'lib');

const installed = (lib: string) => existsSync(path.join(lib, `temporal-test-server-${TEST_SERVER_VERSION}.jar`));

async function commandRuns(command: string, args: string[]): Promise<boolean> {
  try {
    await run(command, args, { timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * The server's jars, resolved by Maven from Maven Central on first use (into ~/.m2, then copied into
 * the cache; a half-done copy is never left in place). Fails with what to install when it cannot.
 */
export async function installTestServer(cacheDir: string): Promise<string> {
  const lib = testServerLibDir(cacheDir);
  if (installed(lib)) return lib;
  if (!(await commandRuns('java', ['-version']))) {
    throw new Error('The time-skipping test server needs Java on PATH: apt-get install openjdk-17-jre-headless');
  }
  if (!(await commandRuns('mvn', ['--version']))) {
    throw new Error(`The time-skipping test server's jars (io.temporal:temporal-test-server:${TEST_SERVER_VERSION}) are fetched with Maven: apt-get install maven`);
  }
  const home = path.dirname(lib);
  mkdirSync(cacheDir, { recursive: true });
  const staging = mkdtempSync(path.join(cacheDir, 'temporal-test-server-staging-'));
  try {
    writeFileSync(path.join(staging, 'pom.xml'), POM);
    await run('mvn', ['-q', '-B', '-Dstyle.color=never', '-f', path.join(staging, 'pom.xml'), DEPENDENCY_PLUGIN, '-DincludeScope=runtime', `-DoutputDirectory=${path.join(staging, 'lib')}`], {
      timeout: 600_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    // Another process installed it meanwhile: theirs stays (a JVM may be reading it); else a broken leftover is replaced.
    if (installed(lib)) rmSync(staging, { recursive: true, force: true });
    else {
      rmSync(home, { recursive: true, force: true });
      renameSync(staging, home);
    }
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    if (installed(lib)) return lib;
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    const said = `${stdout ?? ''}\n${stderr ?? ''}`.trim().split('\n').filter((line) => /ERROR|error:/.test(line)).slice(0, 5).join('\n');
    throw new Error(`Could not fetch io.temporal:temporal-test-server:${TEST_SERVER_VERSION} from Maven Central with mvn: ${said || (error as Error).message}`);
  }
  return lib;
}

export interface TestServer {
  address: string;
  process: ManagedProcess;
}

/** Starts the test server on a free loopback port (it listens on every interface: the server offers no choice). */
export async function startTestServer(cacheDir: string): Promise<TestServer> {
  const lib = await installTestServer(cacheDir);
  const port = await freePort(0);
  const logDir = mkdtempSync(path.join(os.tmpdir(), 'bosun-time-skipping-'));
  const server = await startService({
    name: `temporal-test-server ${TEST_SERVER_VERSION}`,
    file: 'java',
    args: [...JVM_OPTIONS, '-cp', readdirSync(lib).map((jar) => path.join(lib, jar)).join(path.delimiter), MAIN_CLASS, String(port)],
    logFile: path.join(logDir, 'temporal-test-server.log'),
    ready: () => portOpen(port),
    timeoutMs: START_TIMEOUT_MS,
  });
  return { address: `127.0.0.1:${port}`, process: server };
}
