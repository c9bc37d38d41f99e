import { Injectable, Logger } from '@nestjs/common';
import { QueueHandler, type Job } from 'nestjs-pgqueue';

/** What `POST /jobs` puts on the `welcome-email` queue. */
export interface WelcomeEmail {
  to?: string;
}

/** Seed 002's example job: `{"queue": "send-welcome-email", "payload": {"userId": "abc123"}}` over the admin API. */
export interface SendWelcomeEmail {
  userId?: string;
}

/** The worker side: the queue calls these methods for each `welcome-email` and `send-welcome-email` job. */
@Injectable()
export class EmailHandlers {
  private readonly logger = new Logger(EmailHandlers.name);

  @QueueHandler('welcome-email', { retryLimit: 3 })
  async sendWelcomeEmail(job: Job<WelcomeEmail>): Promise<{ sentTo: string | null }> {
    const to = job.data?.to ?? null;
    // A real app would call its mail provider here; throwing would fail the attempt and retry it.
    this.logger.log(`sending welcome email to ${to ?? '(nobody)'} (job ${job.id}, attempt ${job.retryCount + 1})`);
    return { sentTo: to };
  }

  @QueueHandler('send-welcome-email', { retryLimit: 4 })
  async sendWelcome(job: Job<SendWelcomeEmail>): Promise<{ sentTo: string }> {
    // a job without a user fails its attempt: retried, then failed for good (seed 002's retry takes it back)
    if (typeof job.data?.userId !== 'string') throw new Error('payload.userId must be a string');
    this.logger.log(`sending welcome email to user ${job.data.userId} (job ${job.id}, attempt ${job.retryCount + 1})`);
    return { sentTo: job.data.userId };
  }
}
