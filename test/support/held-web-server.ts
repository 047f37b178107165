import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local web server that holds every request until released, so a "check <url>" step keeps its
 * curl running for as long as the test needs; never longer than curl's own 15 s limit allows.
 */
export async function heldWebServer(maxHoldMs = 12_000) {
  const held: ServerResponse[] = [];
  let requests = 0;
  const server = createServer((_req, res) => {
    requests += 1;
    held.push(res);
    // A safety net, not a wait: a test that never releases must not leave curl to time out.
    setTimeout(() => res.writableEnded || res.end('ok\n'), maxHoldMs).unref();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`,
    get requests() {
      return requests;
    },
    release: () => held.splice(0).forEach((res) => res.writableEnded || res.end('ok\n')),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
