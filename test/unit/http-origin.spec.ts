import { crossOriginReason } from '../../lib/core/http/origin.js';

describe('requests from another site’s page', () => {
  const host = { host: 'ops.example:3000' };

  it('are told by Sec-Fetch-Site, which a page cannot set', () => {
    expect(crossOriginReason('GET', { ...host, 'sec-fetch-site': 'cross-site' })).toBe('Sec-Fetch-Site is cross-site');
    expect(crossOriginReason('POST', { ...host, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' })).not.toBeNull();
    // a sibling subdomain is another site's page too
    expect(crossOriginReason('GET', { ...host, 'sec-fetch-site': 'same-site' })).toBe('Sec-Fetch-Site is same-site');
    // same-origin and none (an address typed) are believed, whatever Origin says
    expect(crossOriginReason('POST', { ...host, 'sec-fetch-site': 'same-origin', origin: 'https://elsewhere.example' })).toBeNull();
    expect(crossOriginReason('GET', { ...host, 'sec-fetch-site': 'none' })).toBeNull();
  });

  it('let a person follow a link from another site to a page: a GET navigation of a document', () => {
    const link = { ...host, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };
    expect(crossOriginReason('GET', link)).toBeNull();
    expect(crossOriginReason('HEAD', { ...link, 'sec-fetch-site': 'same-site' })).toBeNull();
    // a form posted from elsewhere navigates too, but changes things: refused
    expect(crossOriginReason('POST', link)).not.toBeNull();
    // the page in another site's frame, a script's fetch, an image or a no-cors request: refused
    expect(crossOriginReason('GET', { ...link, 'sec-fetch-dest': 'iframe' })).not.toBeNull();
    expect(crossOriginReason('GET', { ...link, 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' })).not.toBeNull();
    expect(crossOriginReason('GET', { ...link, 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' })).not.toBeNull();
  });

  it('are told by an Origin whose host is not the request’s where no Sec-Fetch-Site was sent', () => {
    expect(crossOriginReason('POST', { ...host, origin: 'http://ops.example:3000' })).toBeNull();
    expect(crossOriginReason('POST', { ...host, origin: 'HTTP://OPS.EXAMPLE:3000' })).toBeNull();
    // behind a proxy that ends TLS, the page is https and the request http: the host decides
    expect(crossOriginReason('POST', { host: 'ops.example', origin: 'https://ops.example' })).toBeNull();
    expect(crossOriginReason('POST', { host: 'ops.example:443', origin: 'https://ops.example' })).toBeNull();
    expect(crossOriginReason('POST', { host: '[::1]:3000', origin: 'http://[::1]:3000' })).toBeNull();
    expect(crossOriginReason('POST', { ...host, origin: 'http://ops.example:3001' })).toMatch(/^Origin http:\/\/ops.example:3001 is not/);
    expect(crossOriginReason('POST', { ...host, origin: 'http://evil.example:3000' })).not.toBeNull();
    expect(crossOriginReason('POST', { ...host, origin: 'null' })).not.toBeNull();
    expect(crossOriginReason('POST', { origin: 'http://ops.example' })).toMatch(/no Host/);
  });

  it('cannot name their own origin through X-Forwarded-Host or -Proto, which a page may send where CORS allows it', () => {
    const spoofed = { host: 'app:3000', origin: 'https://evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };
    expect(crossOriginReason('GET', spoofed)).not.toBeNull();
  });

  it('pass without either header: curl and scripts', () => {
    expect(crossOriginReason('DELETE', host)).toBeNull();
    expect(crossOriginReason('GET', {})).toBeNull();
  });
});
