import { Socket } from 'node:net';

/** The secrets an axios-like error carries (axiosLikeError): none may be stored. */
export const SECRETS = {
  bearer: 'Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LWp3dA.sig',
  requestCookie: 'session=req-cookie-7f3a9',
  setCookie: 'session=resp-cookie-91bd2; HttpOnly',
  apiKey: 'ak_live_5c1d0e88',
  requestBody: 'card=4111111111111111',
  responseBody: 'account-number-00912345',
  nestedPassword: 'hunter2-in-data',
  causePassword: 'pw-in-the-cause-chain',
  urlPassword: 'url-pass-33',
  clientSecret: 'cs_live_a8f0',
} as const;

/**
 * An error as axios (1.x) throws it for a 401, built by hand: its `config` (headers with Authorization and an API key,
 * the request body, basic auth), `request` (a ClientRequest-like object holding a socket), `response` (headers with
 * set-cookie, a body with a nested password), an own `status` and `code`, a toJSON that returns the config, and a cause
 * carrying a password. `socket` is the test's to destroy.
 */
export function axiosLikeError(socket: Socket): Error {
  const config = {
    url: `https://billing:${SECRETS.urlPassword}@api.example.com/charge`,
    method: 'post',
    headers: { Authorization: SECRETS.bearer, 'X-API-Key': SECRETS.apiKey, Cookie: SECRETS.requestCookie },
    data: SECRETS.requestBody,
    auth: { username: 'billing', password: SECRETS.nestedPassword },
  };
  const request = { socket, _header: `POST /charge HTTP/1.1\r\nAuthorization: ${SECRETS.bearer}\r\n`, method: 'POST' };
  const response = {
    status: 401,
    statusText: 'Unauthorized',
    headers: { 'set-cookie': [SECRETS.setCookie], 'content-type': 'application/json' },
    data: { error: 'invalid_token', account: SECRETS.responseBody, user: { password: SECRETS.nestedPassword } },
    config,
    request,
  };
  const err = Object.assign(new Error('Request failed with status code 401'), {
    name: 'AxiosError',
    code: 'ERR_BAD_REQUEST',
    status: 401,
    isAxiosError: true,
    config,
    request,
    response,
    details: { client_secret: SECRETS.clientSecret, attempt: 1 },
    toJSON: () => ({ message: 'Request failed with status code 401', config, code: 'ERR_BAD_REQUEST', status: 401 }),
  });
  Object.defineProperty(err, 'cause', {
    value: Object.assign(new Error('upstream refused'), { config, password: SECRETS.causePassword, code: 'E_UPSTREAM' }),
    enumerable: false,
  });
  return err;
}
