// The engine's typed errors as HTTP answers in the user's own controllers: QueueErrorFilter turns what a call of
// QueueService threw into the answer of lib/core/http-errors.ts (400 naming the field, 404, 409, 413, 503) and
// leaves every other exception to Nest as before.
import { Catch, HttpException, type ArgumentsHost } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { httpErrorOf } from '../core/http-errors.js';

/**
 * An exception filter for HTTP apps: `{ provide: APP_FILTER, useClass: QueueErrorFilter }` for every controller,
 * or `@UseFilters(QueueErrorFilter)` on some. A QueueError the table knows becomes its answer; a database that
 * cannot be reached becomes 503; anything else is handled as Nest would have.
 */
@Catch()
export class QueueErrorFilter extends BaseExceptionFilter {
  override catch(exception: unknown, host: ArgumentsHost): void {
    const mapped = host.getType() === 'http' ? httpErrorOf(exception) : null;
    super.catch(mapped ? new HttpException(mapped.body, mapped.status, { cause: exception }) : exception, host);
  }
}
