import { expect, test } from 'vitest';
import { withoutKeys } from '../../../src/auth/consumer-keys/consumer-keys.ts';

test('the access log never holds a consumer key put in a URL', () => {
  const key = 'ck_Z5WzmAtCsGgWCXVUFaC81gQb9eioxZFp3rdiWv';
  expect(withoutKeys(`/api/v1/search?q=notes&key=${key}`)).toBe('/api/v1/search?q=notes&key=ck_…');
  expect(withoutKeys(`/api/v1/products/${key}`)).toBe('/api/v1/products/ck_…');
  expect(withoutKeys('/api/v1/search?q=ck_')).toBe('/api/v1/search?q=ck_');
  expect(withoutKeys('/api/v1/products/pixel-forge')).toBe('/api/v1/products/pixel-forge');
});
