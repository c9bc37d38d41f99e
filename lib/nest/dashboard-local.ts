// The dashboard's `localOnly`: a guard that answers this host only, for a dashboard on a developer's machine, and the
// refusal of it in production (lib/nest/dashboard.ts uses both).
import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { InvalidOptionError } from '../core/errors.js';

interface HttpRequest {
  headers: Record<string, string | string[] | undefined>;
  socket?: { remoteAddress?: string };
  raw?: { socket?: { remoteAddress?: string } };
}

/** An address of this host: IPv4 127/8, IPv6 ::1, or either mapped. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.startsWith('::ffff:') ? address.slice(7) : address;
  return a === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/** A Host header that names this host: localhost, 127/8 or [::1], with any port. */
export function isLocalHost(host: string | undefined): boolean {
  if (!host) return false;
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
  return name === 'localhost' || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** Headers by which a proxy says it forwarded a request. */
const PROXY_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip', 'via'];

/**
 * The guard of `localOnly`: this host only. A request that came through a proxy (which may well run on
 * this host) says so in its headers and is refused, so that a proxy does not open the dashboard to the network; a
 * Host that is not this host's name (a page elsewhere whose name was rebound to 127.0.0.1) is refused too. A proxy
 * that adds no forwarding header cannot be told from a local client: behind one, configure guards.
 */
@Injectable()
export class LoopbackOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<HttpRequest>();
    const proxied = PROXY_HEADERS.some((h) => req.headers[h] !== undefined);
    const host = req.headers.host;
    return (
      !proxied &&
      isLocalHost(typeof host === 'string' ? host : undefined) &&
      isLoopback(req.socket?.remoteAddress ?? req.raw?.socket?.remoteAddress)
    );
  }
}

/** localOnly's refusal in production: a proxy on this host that adds no forwarding header looks local. */
export function refuseLocalOnlyInProduction(): void {
  if (process.env.NODE_ENV === 'production')
    throw new InvalidOptionError(
      'localOnly',
      'absent when NODE_ENV is production: give guards (a proxy on this host without forwarding headers looks local)',
      true,
    );
}
