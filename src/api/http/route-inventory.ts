import type { Application } from 'express';

interface Layer {
  rawPath?: unknown;
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

const join = (prefix: string, path: string) => (path === '/' ? prefix || '/' : `${prefix === '/' ? '' : prefix}${path}`);

/**
 * Every route the app registers, as "GET /api/v1/servers/:id": a walk of Express's router stack.
 * The permission matrix holds its routes against it, and the audit trail names writes from it.
 */
export function registeredRoutes(app: Application): string[] {
  const found: string[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        if (typeof layer.route.path !== 'string') throw new Error(`a route under ${prefix} has a path that is not a string`);
        // `_all`: the 405 answer of a known path asked with another method, not an operation.
        for (const method of Object.keys(layer.route.methods)) if (method !== '_all') found.push(`${method.toUpperCase()} ${join(prefix, layer.route.path)}`);
      } else if (layer.handle?.stack) {
        if (typeof layer.rawPath !== 'string') throw new Error(`a router under ${prefix} is mounted on a path that is not a string`);
        walk(layer.handle.stack, join(prefix, layer.rawPath));
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return found;
}
