// Which requests come from a page of another site. The dashboard and the admin API answer only their own pages,
// people following a link, and clients that are no page at all (curl, scripts): a page elsewhere must not read the
// dashboard's jobs through a logged-in operator's browser, nor send the admin API a retry or a delete. Browsers say
// where a request comes from (Sec-Fetch-Site, Sec-Fetch-Mode, Origin) in headers a page cannot set; other clients
// send none. Pure.

type Headers = Record<string, string | string[] | undefined>;

/** The first value of a header (a proxy may list several, comma-separated). */
function first(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v?.split(',')[0]!.trim() || undefined;
}

/** `host[:port]` in lower case, without a default port (80, 443), as browsers write a Host; null when it is none. */
function hostOf(host: string): string | null {
  try {
    const url = new URL(`http://${host}`);
    if (url.host === '' || url.pathname !== '/' || url.username !== '') return null;
    return url.port === '443' ? url.hostname : url.host;
  } catch {
    return null;
  }
}

/**
 * Why a request must be refused as coming from another site's page, or null to let it through:
 * - `Sec-Fetch-Site` cross-site or same-site (a sibling subdomain is another site's page too), unless the request is
 *   a person's navigation to a page (a GET with `Sec-Fetch-Mode: navigate` and `Sec-Fetch-Dest: document`: a link
 *   in a chat, a redirect back from single sign-on), whose answer only that person sees;
 * - where a browser sent no Sec-Fetch-Site, an `Origin` whose host is not the request's Host. The scheme is left out
 *   (behind a proxy that ends TLS the page is https and the request http), and so are X-Forwarded-Host and
 *   X-Forwarded-Proto: a page may send those where the app's CORS allows it, and would then name its own origin.
 * A request with neither header (curl, a script, an address typed) passes.
 */
export function crossOriginReason(method: string, headers: Headers): string | null {
  const site = first(headers['sec-fetch-site'])?.toLowerCase();
  if (site === 'cross-site' || site === 'same-site') {
    const navigation =
      (method === 'GET' || method === 'HEAD') &&
      first(headers['sec-fetch-mode'])?.toLowerCase() === 'navigate' &&
      first(headers['sec-fetch-dest'])?.toLowerCase() === 'document';
    return navigation ? null : `Sec-Fetch-Site is ${site}`;
  }
  // a browser that says same-origin or none (an address typed, a bookmark) is believed: a page cannot set the header
  if (site === 'same-origin' || site === 'none') return null;
  const origin = first(headers.origin);
  if (origin === undefined) return null;
  const host = first(headers.host);
  const own = host === undefined ? null : hostOf(host);
  const scheme = origin.indexOf('://');
  const given = scheme > 0 ? hostOf(origin.slice(scheme + 3)) : null;
  if (given === null || own === null || given !== own) return `Origin ${origin} is not this server's (${host ?? 'no Host'})`;
  return null;
}
