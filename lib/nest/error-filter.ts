// The engine's typed errors as HTTP answers in the user's own controllers: QueueErrorFilter turns a QueueError a
// call of QueueService threw into the answer of lib/core/http/errors.ts (400 naming the field, 404, 409, 413, 503
// for a closing engine) and leaves every other exception to Nest as before.
import { Catch, HttpException, type ArgumentsHost } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { QueueError } from '../core/errors.js';
import { httpErrorOf } from '../core/http/errors.js';

/**
 * An exception filter for HTTP apps: `{ provide: APP_FILTER, useClass: QueueErrorFilter }` for every controller,
 * or `@UseFilters(QueueErrorFilter)` on some. A QueueError the table knows becomes its answer; anything else
 * (a driver's error included: the app may have connections of its own) is handled as Nest would have.
 */
@Catch()
export class QueueErrorFilter extends BaseExceptionFilter {
  override catch(exception: unknown, host: ArgumentsHost): void {
    // a microservice's or a gateway's error is not an HTTP answer: left as it was, for that context's own handling
    if (host.getType() !== 'http') throw exception;
    // the engine's errors only: a driver error of the app's own (its pg pool, its Redis) is not the queue's to answer
    const mapped = exception instanceof QueueError ? httpErrorOf(exception) : null;
    super.catch(mapped ? new HttpException(mapped.body, mapped.status, { cause: exception }) : exception, host);
  }
}
