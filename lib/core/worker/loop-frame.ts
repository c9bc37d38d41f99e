// Which loops' handlers a call comes from, at no cost per job. A loop stopping waits for its handlers to return; a
// handler that awaits the stop of its own loop (offWork, stopWorking, stopWorkers) would wait for itself. Each loop
// runs its handlers from an async function named after the loop (loopFrame), and a stop call reads the function
// names on its stack (callingFrames): V8's async stack traces follow the awaits from the handler's code up to that
// function, which awaits the handler (an async function that returns a promise without awaiting it drops out of
// the trace, but the chain goes on to what awaits it; test/unit/loop-frame.spec.ts). Nothing is set or kept per
// job: the stack is read only by a stop call. (An AsyncLocalStorage scope around each handler would say the same
// for any code, but on Node 20 its promise hook cost 10% of the worker's CPU per job: bench/drain-cpu.mjs.)
// A handler may also name a frame of its own (HANDLER_FRAME, `Class.method`): Nest's pipeline calls the method from
// RxJS, through which the async stack does not lead, but it does lead to the method's frame.
// A call the stack does not lead back from (a callback of a timer or an emitter the handler awaits through a
// promise made by hand, or a handler that began the call without awaiting it) is not seen as the handler's.

const PREFIX = 'pgqueue loop ';

/** `fn`, named after loop `loopId`: the async function from which the loop's handlers are called. */
export function loopFrame<F extends (...args: never[]) => Promise<unknown>>(loopId: string, fn: F): F {
  return Object.defineProperty(fn, 'name', { value: `${PREFIX}${loopId}` });
}

/**
 * On a handler: the name (`Class.method`) of a frame that only the handler's calls run in (the Nest explorer's
 * pipeline names its method). A stop call with that frame on its stack comes from the handler too.
 */
export const HANDLER_FRAME = Symbol.for('nestjs-pgqueue.handlerFrame');

/** The frame a handler names (HANDLER_FRAME), or null. */
export function handlerFrameOf(handler: object): string | null {
  const frame: unknown = Reflect.get(handler, HANDLER_FRAME);
  return typeof frame === 'string' ? frame : null;
}

/**
 * The names of the frames this call runs in, async frames included: the ids of the loops whose handler it runs in
 * (`loops`), and every frame as `Class.method` or `function` (`frames`, for HANDLER_FRAME).
 */
export function callingFrames(): { loops: string[]; frames: string[] } {
  const stackTraceLimit = Error.stackTraceLimit;
  const prepareStackTrace: unknown = Reflect.get(Error, 'prepareStackTrace');
  let names: unknown;
  // Reflect.set, not assignment: with frozen intrinsics (node --frozen-intrinsics) the set fails, the stack reads as
  // the app formats it, and the call is taken as not a handler's (it then waits for every handler, as from outside).
  try {
    Reflect.set(Error, 'stackTraceLimit', Infinity);
    // the frames' function names, async frames included, whatever formatter the app installed
    Reflect.set(Error, 'prepareStackTrace', (_err: Error, sites: NodeJS.CallSite[]) =>
      sites.map((site) => {
        const fn = site.getFunctionName();
        // a loop's frame by its own name (called as a property, it has a type: the runner's)
        const type = fn === null || fn.startsWith(PREFIX) ? null : site.getTypeName();
        return type ? `${type}.${fn}` : fn;
      }),
    );
    names = new Error().stack;
  } finally {
    Reflect.set(Error, 'stackTraceLimit', stackTraceLimit);
    Reflect.set(Error, 'prepareStackTrace', prepareStackTrace);
  }
  const loops = new Set<string>();
  const frames: string[] = [];
  for (const n of Array.isArray(names) ? names : []) {
    if (typeof n !== 'string' || n === '') continue;
    if (n.startsWith(PREFIX)) loops.add(n.slice(PREFIX.length));
    else frames.push(n);
  }
  return { loops: [...loops], frames };
}
