import { crossOriginReason, ownOrigin } from '../../lib/core/http-origin.js';

describe('requests from another site’s page', () => {
  const host = { host: 'ops.example:3000' };

  it('are told by Sec-Fetch-Site, which a page cannot set', () => {
    expect(crossOriginReason({ ...host, 'sec-fetch-site': 'cross-site' }, false)).toBe('Sec-Fetch-Site is cross-site');
    // a sibling subdomain is another site's page too
    expect(crossOriginReason({ ...host, 'sec-fetch-site': 'same-site' }, false)).toBe('Sec-Fetch-Site is same-site');
    // same-origin and none (an address typed) are believed, whatever Origin says
    expect(crossOriginReason({ ...host, 'sec-fetch-site': 'same-origin', origin: 'https://elsewhere.example' }, false)).toBeNull();
    expect(crossOriginReason({ ...host, 'sec-fetch-site': 'none' }, false)).toBeNull();
  });

  it('are told by an Origin other than the request’s own where no Sec-Fetch-Site was sent', () => {
    expect(crossOriginReason({ ...host, origin: 'http://ops.example:3000' }, false)).toBeNull();
    expect(crossOriginReason({ ...host, origin: 'HTTP://OPS.EXAMPLE:3000' }, false)).toBeNull();
    expect(crossOriginReason({ ...host, origin: 'https://ops.example:3000' }, false)).toMatch(/^Origin https:\/\/ops.example:3000 is not/);
    expect(crossOriginReason({ ...host, origin: 'http://ops.example:3001' }, false)).not.toBeNull();
    expect(crossOriginReason({ ...host, origin: 'null' }, false)).not.toBeNull();
    expect(crossOriginReason({ origin: 'http://ops.example' }, false)).toMatch(/no Host/);
    // on TLS the request's own origin is https, with its default port left out as browsers do
    expect(crossOriginReason({ host: 'ops.example:443', origin: 'https://ops.example' }, true)).toBeNull();
  });

  it('pass without either header: curl and scripts', () => {
    expect(crossOriginReason(host, false)).toBeNull();
    expect(crossOriginReason({}, false)).toBeNull();
  });

  it('take the origin a proxy says the request was sent to', () => {
    const proxied = { host: '127.0.0.1:3000', 'x-forwarded-host': 'ops.example', 'x-forwarded-proto': 'https' };
    expect(ownOrigin(proxied, false)).toBe('https://ops.example');
    expect(crossOriginReason({ ...proxied, origin: 'https://ops.example' }, false)).toBeNull();
    expect(crossOriginReason({ ...proxied, origin: 'http://127.0.0.1:3000' }, false)).not.toBeNull();
    // a proxy's list: the first is the client's side
    expect(ownOrigin({ host: 'x', 'x-forwarded-host': 'ops.example, inner.local', 'x-forwarded-proto': 'https,http' }, false)).toBe(
      'https://ops.example',
    );
  });
});
