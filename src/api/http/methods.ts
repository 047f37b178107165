import type { Router } from 'express';
import { ApiError } from './errors';

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  /** A router mounted with `use` (its own stack). */
  handle?: { stack?: unknown };
}

/**
 * A known path asked with a method it does not take answers 405 with `Allow` (the methods it takes),
 * not 404: "this exists, not like that". OPTIONS answers 200 with the same `Allow` (as Express
 * would, but for a literal path only its own methods). Routers mounted inside are covered too. Call once every route of the router is defined.
 */
export function refuseOtherMethods(router: Router): Router {
  const allowed = new Map<string, Set<string>>();
  for (const layer of router.stack as Layer[]) {
    if (!layer.route && Array.isArray(layer.handle?.stack)) refuseOtherMethods(layer.handle as Router);
    if (!layer.route || typeof layer.route.path !== 'string') continue;
    const methods = allowed.get(layer.route.path) ?? new Set<string>();
    for (const [method, on] of Object.entries(layer.route.methods)) if (on && method !== '_all') methods.add(method.toUpperCase());
    if (methods.has('GET')) methods.add('HEAD');
    allowed.set(layer.route.path, methods);
  }
  const stack = router.stack as Layer[];
  for (const [path, methods] of allowed) {
    const allow = [...methods].sort().join(', ');
    const literal = !/[:*]/.test(path);
    router.all(path, (req, res, next) => {
      // OPTIONS of a literal path is answered here, as the router would, with its own methods (not
      // those of a parameter's route that would take it too); any other path's is left to the router.
      if (req.method === 'OPTIONS' && literal) {
        res.setHeader('Allow', allow);
        res.setHeader('Content-Type', 'text/plain');
        res.setHeader('X-Content-Type-Options', 'nosniff');
        return void res.status(200).end(allow);
      }
      if (req.method === 'OPTIONS' || methods.has(req.method)) return next();
      res.setHeader('Allow', allow);
      const asked = req.originalUrl.split('?')[0]!.replace(/(.)\/$/, '$1');
      next(new ApiError('method_not_allowed', `${req.method} is not allowed on ${asked}; it takes ${allow}`));
    });
    // A literal path (`/import`) is refused before every route, so that a parameter's route
    // (`PATCH /:id`, `GET /:id`) never takes it as an id; the router's own middleware still runs first.
    if (literal) {
      const refusal = stack.pop()!;
      const firstRoute = stack.findIndex((layer) => layer.route);
      stack.splice(firstRoute === -1 ? stack.length : firstRoute, 0, refusal);
    }
  }
  return router;
}
