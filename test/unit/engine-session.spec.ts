import { ENGINE_SESSION, statementName, withEngineSession } from '../../lib/core/runtime/db.js';

describe("the engine's connections", () => {
  it("add the engine's session settings to the URL, after the URL's own options", () => {
    const plain = new URL(withEngineSession('postgres://u@h:5432/db').connectionString);
    expect(plain.searchParams.get('options')).toBe(ENGINE_SESSION);
    const own = new URL(withEngineSession('postgres://u@h:5432/db?options=-c%20search_path%3Dapp&sslmode=disable').connectionString);
    expect(own.searchParams.get('options')).toBe(`-c search_path=app ${ENGINE_SESSION}`);
    expect(own.searchParams.get('sslmode')).toBe('disable');
  });

  it('pass a connection string that is not a URL through, with the settings as options', () => {
    expect(withEngineSession('host=/var/run/postgresql dbname=app')).toEqual({
      connectionString: 'host=/var/run/postgresql dbname=app',
      options: ENGINE_SESSION,
    });
  });

  it('name a prepared statement after its text: the same text, the same name; another text, another name', () => {
    expect(statementName('SELECT 1')).toBe(statementName('SELECT 1'));
    expect(statementName('SELECT 1')).not.toBe(statementName('SELECT 2'));
    expect(statementName('SELECT 1')).toMatch(/^pgq_[0-9a-f]{24}$/);
  });
});
