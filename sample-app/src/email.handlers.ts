import { Injectable, Logger } from '@nestjs/common';
import { QueueHandler, type Job } from 'nestjs-pgqueue';

/** What `POST /jobs` puts on the `welcome-email` queue. */
export interface WelcomeEmail {
  to?: string;
}

/** The worker side: the queue calls this method for each `welcome-email` job. */
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
}
