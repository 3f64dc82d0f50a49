import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy, cspDirectives, cspSourceFor } from '../../../src/web/csp.ts';

describe('the pages’ Content-Security-Policy', () => {
  it('allows no inline script or style, scripts and requests of this origin only, nothing remote but https images', () => {
    expect(contentSecurityPolicy({ publicUrl: 'http://localhost:3000' })).toBe(
      "default-src 'none';style-src 'self';script-src 'self';connect-src 'self';img-src 'self' https: data:;form-action 'self';base-uri 'none';frame-ancestors 'none'",
    );
  });

  it('asks for upgrade-insecure-requests only when the public URL is https', () => {
    expect(cspDirectives({ publicUrl: 'https://directory.example' })['upgrade-insecure-requests']).toEqual([]);
    expect(contentSecurityPolicy({ publicUrl: 'https://directory.example' })).toMatch(/;upgrade-insecure-requests$/);
    expect(cspDirectives({ publicUrl: 'http://directory.example' })).not.toHaveProperty('upgrade-insecure-requests');
  });

  it('extends form-action with the origin of a redirect URI, and only form-action', () => {
    const base = cspDirectives({ publicUrl: 'https://directory.example' });
    const extended = cspDirectives({ publicUrl: 'https://directory.example', formAction: ['https://app.example:8443/oauth/callback?x=1'] });
    expect(extended['form-action']).toEqual(["'self'", 'https://app.example:8443']);
    expect({ ...extended, 'form-action': base['form-action'] }).toEqual(base);
  });

  it('names a native app by its private scheme and a loopback client by its origin, once each', () => {
    expect(
      cspDirectives({
        publicUrl: 'http://localhost:3000',
        formAction: ['com.example.app:/oauth2redirect', 'http://127.0.0.1:51234/cb', 'http://127.0.0.1:51234/other', 'http://[::1]:8080/cb'],
      })['form-action'],
    ).toEqual(["'self'", 'com.example.app:', 'http://127.0.0.1:51234', 'http://[::1]:8080']);
  });

  it('refuses targets that are not URLs or whose scheme runs content', () => {
    for (const bad of ['javascript:alert(1)', 'data:text/html,x', 'blob:https://a.example/1', 'file:///etc/passwd', 'about:blank', '/relative', '']) {
      expect(() => cspSourceFor(bad), bad).toThrow(TypeError);
    }
  });

  it('refuses a target whose origin would end the directive and start another', () => {
    for (const bad of ["https://a.example; script-src 'unsafe-inline'", 'https://a.example;script-src/', 'https://a.example,x/', "https://a'b.example/"]) {
      expect(() => cspSourceFor(bad), bad).toThrow(TypeError);
    }
    // A path or query never reaches the policy, whatever it holds.
    expect(cspSourceFor("https://a.example/;script-src 'unsafe-inline'?x=;")).toBe('https://a.example');
  });
});
