import { timingSafeEqual } from 'node:crypto';
import { UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';

/**
 * Lets through a request that carries the token: `Authorization: Bearer <token>`, the token alone (as seed 002's curl
 * lines send it: `Authorization: $SUPERUSER_TOKEN`), or HTTP Basic with the token as the password, which a browser
 * asks for (the 401 says `WWW-Authenticate: Basic`), so that the dashboard opens in one. Without a token configured
 * it lets nothing through: the admin API changes jobs, so it is never open by accident.
 */
export class AdminTokenGuard implements CanActivate {
  private readonly token: Buffer | null;

  constructor(token: string | undefined) {
    this.token = token ? Buffer.from(token) : null;
  }

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const header = http.getRequest<{ headers: Record<string, string | string[] | undefined> }>().headers.authorization;
    const given = typeof header === 'string' ? tokenOf(header.trim()) : null;
    if (!given) {
      // Node's response (Express's, or Fastify's raw one) keeps the header when the refusal is written
      const res = http.getResponse<{ raw?: HeaderSetter } & HeaderSetter>();
      (res.raw ?? res).setHeader('WWW-Authenticate', 'Basic realm="pgqueue sample", charset="UTF-8"');
      throw new UnauthorizedException('send Authorization: Bearer <ADMIN_TOKEN>');
    }
    // the same time for every wrong token of the right length, so the token cannot be guessed byte by byte
    return this.token !== null && given.length === this.token.length && timingSafeEqual(given, this.token);
  }
}

interface HeaderSetter {
  setHeader(name: string, value: string): unknown;
}

/** The token a header carries: after `Bearer `, as Basic's password, or the header itself. */
function tokenOf(header: string): Buffer | null {
  if (header === '') return null;
  const space = header.indexOf(' ');
  const scheme = space < 0 ? '' : header.slice(0, space).toLowerCase();
  const rest = header.slice(space + 1).trim();
  if (scheme === 'bearer') return rest ? Buffer.from(rest) : null;
  if (scheme === 'basic') {
    const decoded = Buffer.from(rest, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon >= 0 ? Buffer.from(decoded.slice(colon + 1)) : null;
  }
  return Buffer.from(header);
}
