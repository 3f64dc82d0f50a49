import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DEMO_ANCHOR_DAY, demoCatalogLines } from '../../../src/demo/demo-data.ts';
import { formatLineError, parseCatalogLine, type CatalogLine, type ListingLine } from '../../../src/catalog/listings/listing-input.ts';

function generate(count: number, seed: number): string {
  return [...demoCatalogLines({ count, seed })].join('\n');
}

function parseAll(count: number, seed: number): CatalogLine[] {
  return [...demoCatalogLines({ count, seed })].map((raw, i) => {
    const parsed = parseCatalogLine(raw, i + 1);
    if (!parsed.ok) throw new Error(parsed.errors.map(formatLineError).join('\n'));
    return parsed.value;
  });
}

describe('the demo catalog', () => {
  it('is the same for the same count and seed, and differs for another seed', () => {
    expect(generate(300, 7)).toBe(generate(300, 7));
    expect(generate(300, 8)).not.toBe(generate(300, 7));
  });

  it('has about 30 categories first, then exactly the requested listings', () => {
    const lines = parseAll(250, 1);
    const categories = lines.filter((l) => l.kind === 'category');
    expect(categories.length).toBeGreaterThanOrEqual(25);
    expect(lines.slice(0, categories.length).every((l) => l.kind === 'category')).toBe(true);
    expect(lines.filter((l) => l.kind === 'listing')).toHaveLength(250);
    expect(parseAll(0, 1).every((l) => l.kind === 'category')).toBe(true);
  });

  it('passes the import validator on every line, with unique slugs', () => {
    const listings = parseAll(3000, 3).filter((l): l is ListingLine => l.kind === 'listing');
    expect(new Set(listings.map((l) => l.slug)).size).toBe(3000);
  });

  it('mixes statuses, plans, promos and the other variety a directory has', () => {
    const listings = parseAll(2000, 1).filter((l): l is ListingLine => l.kind === 'listing');
    const share = (pred: (l: ListingLine) => boolean) => listings.filter(pred).length / listings.length;
    expect(share((l) => l.status === 'live')).toBeGreaterThan(0.75);
    expect(share((l) => l.status === 'live')).toBeLessThan(0.95);
    for (const status of ['draft', 'pending', 'rejected', 'hidden'] as const) {
      expect(listings.some((l) => l.status === status)).toBe(true);
    }
    expect(share((l) => l.plan === 'premium')).toBeGreaterThan(0.08);
    expect(share((l) => l.plan === 'premium')).toBeLessThan(0.25);
    expect(share((l) => l.featured)).toBeGreaterThan(0.02);
    expect(share((l) => l.featured)).toBeLessThan(0.1);
    expect(share((l) => l.promo !== null)).toBeGreaterThan(0.12);
    expect(share((l) => l.promo !== null)).toBeLessThan(0.3);

    // premium listings carry the premium profile; free ones do not
    for (const l of listings) {
      if (l.plan === 'premium') expect(l.highlights.length * l.ideal_for.length * l.faq.length).toBeGreaterThan(0);
      else expect([...l.highlights, ...l.ideal_for, ...l.faq]).toEqual([]);
    }

    const expiries = listings.flatMap((l) => (l.promo ? [l.promo.expires_at] : []));
    expect(expiries.some((d) => d === null)).toBe(true);
    expect(expiries.some((d) => d !== null && d < DEMO_ANCHOR_DAY)).toBe(true);
    expect(expiries.some((d) => d !== null && d >= DEMO_ANCHOR_DAY)).toBe(true);

    // listed_at: within the three years before the anchor day, and null for never-live listings
    const anchor = Date.parse(`${DEMO_ANCHOR_DAY}T00:00:00Z`);
    for (const l of listings) {
      if (l.status === 'live' || l.status === 'hidden') {
        const t = Date.parse(l.listed_at!);
        expect(t).toBeLessThan(anchor);
        expect(t).toBeGreaterThanOrEqual(anchor - 3 * 366 * 86_400_000);
      } else {
        expect(l.listed_at).toBeNull();
      }
    }

    expect(new Set(listings.flatMap((l) => l.tags)).size).toBeGreaterThan(100);
    expect(new Set(listings.flatMap((l) => l.labels))).toEqual(new Set(['new', 'trending', 'editors-pick', 'open-source', 'popular', 'made-in-europe']));
    expect(listings.every((l) => l.tags.length >= 1 && l.tags.length <= 5)).toBe(true);
    expect(new Set(listings.map((l) => l.pricing_model)).size).toBe(5);
    expect(new Set(listings.map((l) => l.product_type)).size).toBe(3);
    expect(listings.some((l) => l.social !== null)).toBe(true);
  });

  it('reads like product copy with words that find some listings but not all', () => {
    const listings = parseAll(1000, 1).filter((l): l is ListingLine => l.kind === 'listing');
    const text = (l: ListingLine) => `${l.name} ${l.punchline} ${l.description}`.toLowerCase();
    for (const word of ['invoices', 'deploy', 'podcast', 'kanban', 'newsletter']) {
      const hits = listings.filter((l) => text(l).includes(word)).length;
      expect(hits, word).toBeGreaterThan(0);
      expect(hits, word).toBeLessThan(listings.length / 5);
    }
    expect(listings.every((l) => l.description.startsWith('<p>') && l.description.includes('<ul><li>'))).toBe(true);
  });
});

describe('catalog demo-data (the command)', () => {
  const bin = fileURLToPath(new URL('../../../bin/catalog.js', import.meta.url));
  const run = (...args: string[]) => promisify(execFile)(process.execPath, [bin, 'demo-data', ...args], { maxBuffer: 64 * 1024 * 1024 });

  it('writes the generated lines to stdout, the same on every run', async () => {
    const first = await run('--count', '40', '--seed', '9');
    expect(first.stdout).toBe(`${generate(40, 9)}\n`);
    expect((await run('--count', '40', '--seed', '9')).stdout).toBe(first.stdout);
  });

  it('refuses a count that is not a whole number', async () => {
    await expect(run('--count', 'many')).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/^--count must be a whole number/) });
  });
});
