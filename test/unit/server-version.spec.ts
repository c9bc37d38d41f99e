// Which PostgreSQL the queue runs on: 15 or later, decided from server_version_num without a server (the start against
// a real one is test/core/server-version.spec.ts).
import { QueueError, UnsupportedServerError } from '../../lib/core/index.js';
import { MIN_SERVER_MAJOR, serverVersionText, unsupportedServer } from '../../lib/core/runtime/server-version.js';

describe('the oldest PostgreSQL the queue runs on', () => {
  it('accepts 15.0 and every later version', () => {
    expect(MIN_SERVER_MAJOR).toBe(15);
    for (const num of [150000, 150020, 160009, 170005, 180004]) expect(unsupportedServer(num)).toBeNull();
  });

  it('refuses 14 and older with UNSUPPORTED_SERVER, naming the version found and the one needed', () => {
    const err = unsupportedServer(149999)!;
    expect(err).toBeInstanceOf(UnsupportedServerError);
    expect(err).toBeInstanceOf(QueueError);
    expect(err).toMatchObject({
      name: 'UnsupportedServerError',
      code: 'UNSUPPORTED_SERVER',
      serverVersion: '14.9999',
      requiredVersion: 15,
    });
    expect(unsupportedServer(140011)!.message).toBe(
      'PostgreSQL 14.11 is not supported: nestjs-pgqueue needs PostgreSQL 15 or later (its unique keys use NULLS NOT DISTINCT)',
    );
    expect(unsupportedServer(90624)!.serverVersion).toBe('9.6.24');
  });

  it('writes server_version_num as people write the version: two parts from 10, three before', () => {
    expect(serverVersionText(150020)).toBe('15.20');
    expect(serverVersionText(100000)).toBe('10.0');
    expect(serverVersionText(90624)).toBe('9.6.24');
    expect(serverVersionText(90105)).toBe('9.1.5');
  });
});
