/** The channel is derived from the validated schema name at configuration time, never from input. */
export const listen = (channel: string) => `LISTEN "${channel}"`;
