// Which attempts' handler the running code belongs to: set around each handler call, read when a handler stops
// loops (offWork, stopWorking, stopWorkers). A loop stopping waits for its handlers to return; a handler that
// awaits the stop of its own loop would wait for itself, so its attempt is left out of that wait (Worker.stop).
import { AsyncLocalStorage } from 'node:async_hooks';
import { Attempt } from './attempt.js';

/** A handler of one job runs under its attempt, a batch handler under its batch's. */
export type HandlerScope = Attempt | readonly Attempt[];

const scope = new AsyncLocalStorage<HandlerScope>();

/** Calls `handler(arg)` as the handler of `attempts`: what it calls, now or after an await, runs under them. */
export function inHandlerScope<A, R>(attempts: HandlerScope, handler: (arg: A) => R, arg: A): R {
  return scope.run(attempts, handler, arg);
}

/** The attempts whose handler calls this (empty outside a handler). */
export function callingAttempts(): readonly Attempt[] {
  const s = scope.getStore();
  if (s === undefined) return [];
  return s instanceof Attempt ? [s] : s;
}
