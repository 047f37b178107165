import type { Router } from 'express';
import { ApiError } from './errors';

interface RouteLayer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
}

/**
 * A known path asked with a method it does not take answers 405 with `Allow` (the methods it takes),
 * not 404: "this exists, not like that". Call once every route of the router is defined.
 */
export function refuseOtherMethods(router: Router): Router {
  const allowed = new Map<string, Set<string>>();
  for (const layer of router.stack as RouteLayer[]) {
    if (!layer.route || typeof layer.route.path !== 'string') continue;
    const methods = allowed.get(layer.route.path) ?? new Set<string>();
    for (const [method, on] of Object.entries(layer.route.methods)) if (on && method !== '_all') methods.add(method.toUpperCase());
    if (methods.has('GET')) methods.add('HEAD');
    allowed.set(layer.route.path, methods);
  }
  for (const [path, methods] of allowed) {
    const allow = [...methods].sort().join(', ');
    router.all(path, (req, res, next) => {
      res.setHeader('Allow', allow);
      next(new ApiError('method_not_allowed', `${req.method} is not allowed on ${req.baseUrl}${req.path}; it takes ${allow}`));
    });
  }
  return router;
}
