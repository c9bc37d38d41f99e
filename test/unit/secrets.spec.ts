import { describeEmitter, isSecretKey, keySegments, maskUrlPasswords, masks } from '../../lib/core/worker/attempt/secrets.js';
import { EventEmitter } from 'node:events';
import { Socket } from 'node:net';
import { Agent } from 'node:http';

describe('which keys look secret', () => {
  it('splits a key into lower-case segments at separators and camelCase', () => {
    expect(keySegments('x-api-key')).toEqual(['x', 'api', 'key']);
    expect(keySegments('apiKey')).toEqual(['api', 'key']);
    expect(keySegments('XAuthToken')).toEqual(['x', 'auth', 'token']);
    expect(keySegments('HTTPCookie')).toEqual(['http', 'cookie']);
    expect(keySegments('client_secret.value')).toEqual(['client', 'secret', 'value']);
    expect(keySegments('oauth2Token')).toEqual(['oauth2', 'token']);
  });

  it.each([
    'password',
    'Password',
    'PASSWORD',
    'passwd',
    'db_password',
    'PGPASSWORD',
    'newPassword',
    'secret',
    'client_secret',
    'clientSecret',
    'secretAccessKey',
    'token',
    'accessToken',
    'access_token',
    'refresh-token',
    'accesstoken',
    'X-Auth-Token',
    'tokens',
    'tokens_used',
    'tokenCount',
    'authorization',
    'Authorization',
    'proxy-authorization',
    'cookie',
    'Cookie',
    'set-cookie',
    'Set-Cookie',
    'setCookie',
    'cookies',
    'api-key',
    'apiKey',
    'api_key',
    'API_KEY',
    'x-api-key',
    'apikey',
    'X-APIKEY',
    'private-key',
    'privateKey',
    'private_key',
    'privatekey',
    'private_key_id',
  ])('%s is secret', (key) => {
    expect(isSecretKey(key)).toBe(true);
  });

  it.each([
    'key',
    'keys',
    'accessKeyId',
    'id',
    'user',
    'username',
    'author',
    'auth',
    'passage',
    'passport',
    'secretary',
    'tokenizer',
    'cookieless',
    'status',
    'statusCode',
    'message',
    'apiVersion',
    'privateNote',
    'publicKey',
    'monkey',
    '',
  ])('%s is not secret', (key) => {
    expect(isSecretKey(key)).toBe(false);
  });

  it('masks text, objects and arrays under a secret key, and keeps numbers, booleans and null', () => {
    for (const v of ['abc', '', { a: 1 }, ['x'], 10n]) expect(masks(v)).toBe(true);
    for (const v of [1200, 0, true, false, null, undefined]) expect(masks(v)).toBe(false);
  });
});

describe('what else is not stored', () => {
  it('describes sockets, agents and other event emitters by their kind', () => {
    const socket = new Socket();
    try {
      expect(describeEmitter(socket)).toBe('[Socket: not stored]');
    } finally {
      socket.destroy();
    }
    const agent = new Agent();
    try {
      expect(describeEmitter(agent)).toBe('[Agent: not stored]');
    } finally {
      agent.destroy();
    }
    expect(describeEmitter(new EventEmitter())).toBe('[EventEmitter: not stored]');
    expect(describeEmitter({ on: () => undefined, emit: () => true })).toBe('[event emitter: not stored]');
    expect(describeEmitter({ on: 'yes', emit: 'no' })).toBeNull();
    expect(describeEmitter(new Error('e'))).toBeNull();
  });

  it('masks the password of a URL in text, and leaves other text alone', () => {
    expect(maskUrlPasswords('connect to postgres://app:s3cr3t@db.internal:5432/app failed')).toBe(
      'connect to postgres://app:[redacted]@db.internal:5432/app failed',
    );
    expect(maskUrlPasswords('https://u:p@a and redis://:pw@b')).toBe('https://u:[redacted]@a and redis://:[redacted]@b');
    expect(maskUrlPasswords('https://example.com/a?b=c and mail@example.com')).toBe('https://example.com/a?b=c and mail@example.com');
    expect(maskUrlPasswords('no url: a:b@c')).toBe('no url: a:b@c');
  });
});
