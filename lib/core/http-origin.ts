// Which requests come from a page of another site. The dashboard and the admin API answer only their own pages and
// clients that are no page at all (curl, scripts): a page elsewhere must not read the dashboard's jobs through a
// logged-in operator's browser, nor send the admin API a retry or a delete. Browsers say where a request comes from
// (Sec-Fetch-Site, Origin) in headers a page cannot set; other clients send neither. Pure.

type Headers = Record<string, string | string[] | undefined>;

/** The first value of a header (a proxy may list several, comma-separated; the first is the client's side). */
function first(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v?.split(',')[0]!.trim() || undefined;
}

/** `scheme://host[:port]` as a browser writes an origin (lower case, no default port); null when it is none. */
function normalOrigin(scheme: string, host: string): string | null {
  try {
    const url = new URL(`${scheme}://${host}`);
    return url.host === '' ? null : url.origin;
  } catch {
    return null;
  }
}

/**
 * The origin the request was sent to: its Host (X-Forwarded-Host when a proxy set it) and its scheme (X-Forwarded-Proto
 * when a proxy set it, else https on a TLS socket). A page cannot set those headers on a request to another site
 * without a CORS preflight, which these routes never allow.
 */
export function ownOrigin(headers: Headers, encrypted: boolean): string | null {
  const host = first(headers['x-forwarded-host']) ?? first(headers.host);
  if (!host) return null;
  const scheme = first(headers['x-forwarded-proto'])?.toLowerCase() ?? (encrypted ? 'https' : 'http');
  return normalOrigin(scheme === 'https' ? 'https' : 'http', host);
}

/**
 * Why a request must be refused as coming from another site's page, or null to let it through: `Sec-Fetch-Site`
 * cross-site or same-site (a sibling subdomain is another site's page too), or, where a browser sent no
 * Sec-Fetch-Site, an `Origin` other than the request's own. A request with neither header (curl, a script, a browser
 * navigating by address) passes.
 */
export function crossOriginReason(headers: Headers, encrypted: boolean): string | null {
  const site = first(headers['sec-fetch-site'])?.toLowerCase();
  if (site === 'cross-site' || site === 'same-site') return `Sec-Fetch-Site is ${site}`;
  // a browser that says same-origin or none (an address typed, a bookmark) is believed: a page cannot set the header
  if (site === 'same-origin' || site === 'none') return null;
  const origin = first(headers.origin);
  if (origin === undefined) return null;
  const own = ownOrigin(headers, encrypted);
  const given = origin.toLowerCase() === 'null' ? null : normalOrigin(origin.split('://')[0] ?? '', origin.split('://')[1] ?? '');
  if (given === null || own === null || given !== own) return `Origin ${origin} is not this server's (${own ?? 'no Host'})`;
  return null;
}
