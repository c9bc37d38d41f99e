// Which loops' handlers a call comes from, at no cost per job: a handler that awaits the stop of its own loop
// (offWork, stopWorking, stopWorkers) would wait for itself. Each loop runs its handlers from an async function
// named after the loop (loopFrame), and a stop call reads the function names on its stack (callingFrames): V8's
// async stack traces follow the awaits up to that function. Nothing is set per job; a handler may name a frame of
// its own (HANDLER_FRAME) where the stack does not lead back (Nest's pipeline, through RxJS).
// Why, what it costs, and what it misses: docs/design.md, "A stop called from a handler".

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
