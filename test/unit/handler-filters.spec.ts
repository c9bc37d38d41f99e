// Which bound filter takes a handler's error, and what its answer does to the job (lib/nest/handler-filters.ts).
import 'reflect-metadata';
import { Catch, UseFilters, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { of, throwError } from 'rxjs';
import { boundFilters, withFilters } from '../../lib/nest/handler-filters.js';

class Declined extends Error {}

const calls: string[] = [];
@Catch(Declined)
class OnlyDeclined implements ExceptionFilter {
  catch() {
    calls.push('declined');
    return 'declined-handled';
  }
}
@Catch()
class Everything implements ExceptionFilter {
  constructor(private readonly answer: unknown = undefined) {}
  catch(_err: unknown, host: ArgumentsHost) {
    calls.push(`everything ${host.getType()} ${String(host.getArgByIndex(0))}`);
    return typeof this.answer === 'function' ? (this.answer as () => unknown)() : this.answer;
  }
}

@UseFilters(new Everything('class'))
class Handlers {
  @UseFilters(new Everything('method-first'), new OnlyDeclined())
  both() {}
  @UseFilters(OnlyDeclined)
  byClass() {}
}

const filtersOf = (method: string, resolve = () => undefined) => boundFilters(new Handlers(), method, resolve, `Handlers.${method}`);
const failing =
  (err: Error) =>
  (..._args: unknown[]) =>
    Promise.reject(err);

beforeEach(() => (calls.length = 0));

describe('boundFilters', () => {
  it('lists the method’s filters before the class’s, the last listed first, as Nest tries them', async () => {
    const run = withFilters(failing(new Declined('x')), filtersOf('both'), 'pgqueue');
    await expect(run()).resolves.toBe('declined-handled');
    const other = withFilters(failing(new Error('y')), filtersOf('both'), 'pgqueue');
    await expect(other()).resolves.toBe('method-first');
  });

  it('takes a filter class from the resolver, and refuses one it cannot make, naming the handler', () => {
    const made = new OnlyDeclined();
    expect(filtersOf('byClass', () => made as never).map((f) => f.filter)).toEqual([made, expect.any(Everything)]);
    expect(() => filtersOf('byClass')).toThrow(/Handlers\.byClass binds the exception filter OnlyDeclined/);
  });
});

describe('withFilters', () => {
  const everything = (answer?: unknown) => [{ filter: new Everything(answer), catches: [] }];

  it('returns the run itself when no filter is bound', () => {
    const run = () => Promise.resolve(1);
    expect(withFilters(run, [], 'pgqueue')).toBe(run);
  });

  it('passes the job to the filter in a host of the given type', async () => {
    await withFilters(failing(new Error('z')), everything('ok'), 'pgqueue')('job-7');
    expect(calls).toEqual(['everything pgqueue job-7']);
  });

  it('leaves the error as it was when the filter returns nothing, or when no filter takes it', async () => {
    const err = new Error('kept');
    await expect(withFilters(failing(err), everything(), 'pgqueue')()).rejects.toBe(err);
    const onlyDeclined = [{ filter: new OnlyDeclined(), catches: [Declined] }];
    await expect(withFilters(failing(err), onlyDeclined, 'pgqueue')()).rejects.toBe(err);
    expect(calls).toEqual(['everything pgqueue undefined']);
  });

  it('fails with what the filter throws, and follows an Observable to its last value or its error', async () => {
    const mapped = new Error('mapped');
    const throwing = () => {
      throw mapped;
    };
    await expect(withFilters(failing(new Error('a')), everything(throwing), 'pgqueue')()).rejects.toBe(mapped);
    await expect(withFilters(failing(new Error('b')), everything(of(1, 2, 3)), 'pgqueue')()).resolves.toBe(3);
    await expect(withFilters(failing(new Error('c')), everything(throwError(() => mapped)), 'pgqueue')()).rejects.toBe(mapped);
  });

  it('does not touch a run that succeeds', async () => {
    await expect(withFilters(() => Promise.resolve('out'), everything('never'), 'pgqueue')()).resolves.toBe('out');
    expect(calls).toEqual([]);
  });
});
