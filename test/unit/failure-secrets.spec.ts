import { Socket } from 'node:net';
import { describeFailure } from '../../lib/core/worker/index.js';
import { cutBytes, fitError, jsonBytes, MAX_ERROR_BYTES } from '../../lib/core/worker/attempt/error-size.js';
import { axiosLikeError, SECRETS } from '../helpers/axios-like.js';

describe('a stored error keeps no credentials', () => {
  const socket = new Socket();
  afterAll(() => socket.destroy());

  it("an axios-like error keeps its message, code and status, and none of its request's or response's secrets", () => {
    const { error } = describeFailure(axiosLikeError(socket), 0);
    const text = JSON.stringify(error);
    for (const [what, secret] of Object.entries(SECRETS)) expect({ what, stored: text.includes(secret) }).toEqual({ what, stored: false });
    expect(error).toMatchObject({
      name: 'AxiosError',
      message: 'Request failed with status code 401',
      code: 'ERR_BAD_REQUEST',
      status: 401,
    });
    for (const dropped of ['config', 'request', 'response']) expect(Object.hasOwn(error, dropped)).toBe(false);
    expect(error.details).toEqual({ client_secret: '[redacted]', attempt: 1 });
    // the cause is an error too: its config goes, its password is masked, its code stays
    expect(error.cause).toEqual({ name: 'Error', message: 'upstream refused', password: '[redacted]', code: 'E_UPSTREAM' });
  });

  it('drops headers, config, request and response at any depth, and masks secret-looking keys at any depth, in maps too', () => {
    const err = Object.assign(new Error('nested'), {
      context: {
        headers: { 'x-trace': 'kept?' },
        // an HTTP exchange kept by a wrapper error, in a plain object
        upstream: { response: { data: SECRETS.responseBody }, config: { data: SECRETS.requestBody }, Request: {}, url: '/charge' },
        deeper: { Authorization: 'Basic dXNlcjpwYXNz', count: 3, apiKey: 'k-1', tokens_used: 1200 },
        settings: new Map<unknown, unknown>([
          ['token', 't-123'],
          ['region', 'eu'],
          ['headers', { cookie: 'c' }],
          [1, 'one'],
        ]),
      },
    });
    const { error } = describeFailure(err);
    expect(error.context).toEqual({
      upstream: { url: '/charge' },
      deeper: { Authorization: '[redacted]', count: 3, apiKey: '[redacted]', tokens_used: 1200 },
      settings: [
        ['token', '[redacted]'],
        ['region', 'eu'],
        [1, 'one'],
      ],
    });
  });

  it('drops the HTTP fields of a plain object thrown, and of a cause that is not an Error', () => {
    const thrown = {
      message: 'fetch failed',
      status: 503,
      request: { headers: { authorization: SECRETS.bearer } },
      response: { _data: SECRETS.responseBody },
      options: { headers: { cookie: SECRETS.requestCookie } },
    };
    const { error } = describeFailure(thrown);
    expect(error).toMatchObject({ message: 'fetch failed', status: 503, thrown: 'object', options: {} });
    expect(JSON.stringify(error)).not.toMatch(/Bearer|resp|cookie/);
    const wrapped = new Error('wrapped', { cause: { response: { data: SECRETS.responseBody }, code: 'E1' } });
    expect(describeFailure(wrapped).error.cause).toEqual({ code: 'E1' });
  });

  it("keeps a dropped response's status as the error's status when the error has none of its own", () => {
    const old = Object.assign(new Error('Request failed'), { response: { status: 404, data: 'secret body' } });
    expect(describeFailure(old).error).toMatchObject({ status: 404 });
    const own = Object.assign(new Error('Request failed'), { status: 500, response: { status: 404 } });
    expect(describeFailure(own).error.status).toBe(500);
  });

  it('stores a socket, an agent-like object or any event emitter as its kind, wherever it is', () => {
    const err = Object.assign(new Error('with a socket'), { socket, list: [socket], nested: { conn: socket } });
    const { error } = describeFailure(err);
    expect(error).toMatchObject({
      socket: '[Socket: not stored]',
      list: ['[Socket: not stored]'],
      nested: { conn: '[Socket: not stored]' },
    });
    // thrown itself, it is described, not walked field by field
    expect(describeFailure(socket).error).toMatchObject({ thrown: 'object', value: '[Socket: not stored]' });
  });

  it("does not call an Error's toJSON (an HTTP client's returns its request settings), but walks its fields", () => {
    const inner = Object.assign(new Error('inner'), { toJSON: () => ({ leaked: SECRETS.bearer }), code: 'E_IN' });
    const { error } = describeFailure(Object.assign(new Error('outer'), { inner }));
    expect(error.inner).toEqual({ name: 'Error', message: 'inner', code: 'E_IN' });
  });

  it('masks URL passwords in the message, the stack and stored strings', () => {
    const err = Object.assign(new Error(`could not reach postgres://app:${SECRETS.urlPassword}@db:5432/app`), {
      target: `redis://:${SECRETS.urlPassword}@cache:6379`,
    });
    const { error } = describeFailure(err);
    expect(error.message).toBe('could not reach postgres://app:[redacted]@db:5432/app');
    expect(error.target).toBe('redis://:[redacted]@cache:6379');
    expect(JSON.stringify(error)).not.toContain(SECRETS.urlPassword);
  });
});

describe('one stored error is at most MAX_ERROR_BYTES', () => {
  it('keeps an error that fits as it is', () => {
    const error = { name: 'Error', message: 'small', code: 'E' };
    expect(fitError(error)).toBe(error);
  });

  it('cuts one over the limit: its other fields first, then its stack, then its message, keeping what says what failed', () => {
    // 8,000 characters of three bytes each, and a stack of 20 such lines: 24 KB and 30 KB of UTF-8
    const wide = '界'.repeat(8_000);
    const err = Object.assign(new Error(wide), { code: 'E_WIDE', status: 502, details: '字'.repeat(2_000) });
    err.stack = ['Error', ...Array.from({ length: 30 }, () => `    at ${'字'.repeat(600)}`)].join('\n');
    const { error } = describeFailure(err, 4);
    expect(jsonBytes(error)).toBeLessThanOrEqual(MAX_ERROR_BYTES);
    expect(error).toMatchObject({ name: 'Error', code: 'E_WIDE', status: 502, retryCount: 4 });
    expect(error.details).toBeUndefined();
    expect(error['…']).toMatch(/more than 32768 bytes/);
    expect(error.message.startsWith('界界界')).toBe(true);

    const fits = fitError({ name: 'E', message: 'm', stack: 's'.repeat(20_000), extra: 'x'.repeat(20_000), code: 'C' });
    expect(fits).toMatchObject({ stack: 's'.repeat(20_000), code: 'C' });
    expect(fits.extra).toBeUndefined();
  });

  it('cuts text to a number of bytes of JSON, escapes and multi-byte characters counted', () => {
    expect(cutBytes('abc', 10)).toBe('abc');
    const cut = cutBytes('é'.repeat(100), 21);
    expect(jsonBytes(cut) - 2).toBeLessThanOrEqual(21);
    expect(cut.endsWith('…')).toBe(true);
    expect(jsonBytes(cutBytes('\u0001'.repeat(100), 30)) - 2).toBeLessThanOrEqual(30);
  });
});
