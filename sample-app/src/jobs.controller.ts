import { BadRequestException, Body, ConflictException, Controller, Get, NotFoundException, Param, Post } from '@nestjs/common';
import { InvalidOptionError, QueueService } from 'nestjs-pgqueue';
import type { WelcomeEmail } from './email.handlers.js';

@Controller('jobs')
export class JobsController {
  constructor(private readonly queue: QueueService) {}

  /** Enqueues a welcome email; the handler runs it in the background. 201 `{ jobId }`. */
  @Post()
  async create(@Body() body: unknown): Promise<{ jobId: string }> {
    const to = (body as { to?: unknown } | undefined)?.to;
    if (to !== undefined && typeof to !== 'string') throw new BadRequestException('"to" must be a string');
    const jobId = await this.queue.send<WelcomeEmail>('welcome-email', { to });
    // send() answers null only when a singleton/dedupe option refuses the job; none is used here.
    if (jobId === null) throw new ConflictException('the job was not created');
    return { jobId };
  }

  /** The job's state and, once completed, the handler's output. 404 for an unknown (or malformed) id. */
  @Get(':id')
  async get(@Param('id') id: string) {
    const job = await this.queue.getJobById<WelcomeEmail>('welcome-email', id).catch((err: unknown) => {
      if (err instanceof InvalidOptionError) return null; // not a job id at all
      throw err;
    });
    if (!job) throw new NotFoundException(`job ${id} not found`);
    return {
      id: job.id,
      state: job.state,
      data: job.data,
      output: job.output,
      retryCount: job.retryCount,
      createdOn: job.createdOn,
      startedOn: job.startedOn,
      completedOn: job.completedOn,
    };
  }
}
