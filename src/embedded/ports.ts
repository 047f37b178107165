import net from 'node:net';

function tryListen(port: number, host: string): Promise<number | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen(port, host, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : null));
    });
  });
}

/** The preferred port when it is free, else one the OS hands out. */
export async function freePort(preferred: number, host = '127.0.0.1'): Promise<number> {
  const port = (await tryListen(preferred, host)) ?? (await tryListen(0, host));
  if (port === null) throw new Error(`No free TCP port on ${host}`);
  return port;
}
