import { timingSafeEqual } from 'node:crypto';
import { UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';

/**
 * Lets through a request that carries `Authorization: Bearer <token>`. Without a token configured it lets nothing
 * through: the admin API changes jobs, so it is never open by accident.
 */
export class AdminTokenGuard implements CanActivate {
  private readonly token: Buffer | null;

  constructor(token: string | undefined) {
    this.token = token ? Buffer.from(token) : null;
  }

  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>().headers.authorization;
    const given = typeof header === 'string' && header.startsWith('Bearer ') ? Buffer.from(header.slice(7)) : null;
    if (!given) throw new UnauthorizedException('send Authorization: Bearer <ADMIN_TOKEN>');
    // the same time for every wrong token of the right length, so the token cannot be guessed byte by byte
    return this.token !== null && given.length === this.token.length && timingSafeEqual(given, this.token);
  }
}
