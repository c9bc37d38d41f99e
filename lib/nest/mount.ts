// What the dashboard and the admin API share as routes mounted in the user's app: the check of their path, and
// the middleware that puts their headers on every answer of their controller, a guard's refusal included.
import { Injectable, type NestMiddleware, type Type } from '@nestjs/common';
import { InvalidOptionError } from '../core/errors.js';

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
