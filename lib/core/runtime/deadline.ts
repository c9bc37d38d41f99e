/** The rejection of withDeadline: its message, written by the caller, says how long was waited and for what. */
export class DeadlineError extends Error {
  override readonly name = 'DeadlineError';
}

/**
 * `work`, or a rejection (DeadlineError) with `message` once `ms` have passed without its answer, whichever comes first. The work
 * is not cancelled: a late answer (or failure) is dropped. For readers that must answer in time (a health probe, a
 * metrics scrape) while the database hangs.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  work.catch(() => undefined); // failed after the deadline: nobody waits for it any more
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(message)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits for `promise` at most `ms`; true when it settled in time (a rejection counts as settled). */
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
