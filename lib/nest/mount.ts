// What the dashboard and the admin API share as routes mounted in the user's app: the check of their path and
// options, the middleware that puts their headers on every answer of their controller (a guard's refusal included),
// and the one that refuses a request from another site's page before any guard or handler runs.
import { Injectable, type NestMiddleware, type Type } from '@nestjs/common';
import { InvalidOptionError } from '../core/errors.js';
import { crossOriginReason } from '../core/http/origin.js';

/** A route path as the modules take it: begins with `/`, ends without one, only characters a route path may hold. */
export function routePath(field: string, value: unknown, example: string): string {
  if (typeof value !== 'string' || !/^\/[A-Za-z0-9._~/-]*$/.test(value) || value.includes('//'))
    throw new InvalidOptionError(field, `a path such as "${example}" (letters, digits, . _ ~ - and /)`, value);
  return value.length > 1 ? value.replace(/\/$/, '') : value;
}

/**
 * A middleware that sets `headers` on every answer of the routes it is applied to. A middleware, not an
 * interceptor: it runs before the guards, so a refusal (401, 403) carries them too. Nest hands middleware Node's
 * own response on Express and on Fastify alike, and both keep headers set on it when they answer.
 */
export function headersMiddleware(headers: Readonly<Record<string, string>>): Type<NestMiddleware> {
  @Injectable()
  class SetHeaders implements NestMiddleware {
    use(_req: unknown, res: { setHeader(name: string, value: string): unknown }, next: () => void): void {
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      next();
    }
  }
  return SetHeaders;
}

/** The controller a module's forRoot() made, for the module's middleware (each module provides its own). */
export const MOUNTED_CONTROLLER = Symbol('pgqueue:mounted-controller');

/** Refuses any key of `options` that `keys` does not hold, naming it (a misspelt option must not be ignored). */
export function knownKeys(module: string, options: object, keys: readonly string[], method = 'forRoot'): void {
  for (const key of Object.keys(options))
    if (!keys.includes(key))
      throw new InvalidOptionError(key, `absent: ${module}.${method} takes ${keys.join(', ')}`, (options as Record<string, unknown>)[key]);
}

interface RawRequest {
  method?: string;
  headers: Record<string, string | string[] | undefined>;
}

interface RawResponse {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body: string): unknown;
}

/**
 * Answers 403 to a request from another site's page (crossOriginReason), before the guards and the handler: a page
 * elsewhere can neither read these routes through an operator's browser nor change jobs with it. A person following
 * a link passes, and so does a request without Origin and Sec-Fetch-Site (curl, scripts).
 */
@Injectable()
export class SameOriginOnly implements NestMiddleware {
  use(req: RawRequest, res: RawResponse, next: () => void): void {
    const reason = crossOriginReason(req.method ?? 'GET', req.headers);
    if (reason === null) return next();
    res.statusCode = 403;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(JSON.stringify({ statusCode: 403, code: 'CROSS_ORIGIN', message: `refused: a request from another site (${reason})` }));
  }
}

/**
 * The request's path without its query, and without a trailing slash: the base of the page's links and redirects. Only
 * its path: a request line in absolute form (`GET http://host/queues`) names a host, which a link or a Location must
 * not carry, and a path that begins with two slashes (which a router may match) would make links to another host.
 */
export function pathOf(req: { originalUrl?: string; url: string }): string {
  const raw = req.originalUrl ?? req.url;
  let path = raw.split('?')[0]!;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    try {
      path = new URL(path).pathname;
    } catch {
      path = '/';
    }
  }
  return `/${path.replace(/^\/+/, '')}`.replace(/\/+$/, '');
}
