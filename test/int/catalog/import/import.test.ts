import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoCatalogLines } from '../../../../src/demo/demo-data.ts';
import { importCatalog, isCatalogEmpty } from '../../../../src/catalog/import/import-catalog.ts';
import { formatLineError } from '../../../../src/catalog/listings/listing-input.ts';
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const NOW = new Date('2026-06-15T12:00:00Z');

let db: TestDatabase;
let tmp: string;

beforeAll(async () => {
  db = await createTestDatabase();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'catalog-import-'));
});
afterAll(async () => {
  await db?.drop();
  await rm(tmp, { recursive: true, force: true });
});
beforeEach(async () => {
  await db.pool.query('TRUNCATE catalog.listings, catalog.categories, catalog.labels, catalog.tags, catalog.makers, catalog.outbox CASCADE');
});

const category = (slug: string, name = slug, noun = 'tools') => ({ kind: 'category', slug, name, noun });
const listing = (slug: string, fields: Record<string, unknown> = {}) => ({
  kind: 'listing',
  slug,
  name: `Name of ${slug}`,
  punchline: `Punchline of ${slug}`,
  description: `<p>About ${slug}</p>`,
  website: `https://${slug}.example`,
  ...fields,
});
const ndjson = (...docs: unknown[]) => docs.map((d) => (typeof d === 'string' ? d : JSON.stringify(d)));

async function counts() {
  const { rows } = await db.pool.query<Record<string, number>>(`SELECT
    (SELECT count(*) FROM catalog.categories)::int AS categories, (SELECT count(*) FROM catalog.listings)::int AS listings,
    (SELECT count(*) FROM catalog.labels)::int AS labels, (SELECT count(*) FROM catalog.tags)::int AS tags,
    (SELECT count(*) FROM catalog.makers)::int AS makers, (SELECT count(*) FROM catalog.outbox)::int AS outbox`);
  return rows[0]!;
}
const nothingWritten = { categories: 0, listings: 0, labels: 0, tags: 0, makers: 0, outbox: 0 };

async function stored(slug: string) {
  const { rows } = await db.pool.query('SELECT * FROM catalog.listings WHERE slug = $1', [slug]);
  return rows[0];
}

describe('importCatalog', () => {
  it('marks what it writes as bulk, and nothing written afterwards on the same connections', async () => {
    const result = await importCatalog(db.pool, ndjson(category('tools'), listing('bulk-one', { category: 'tools' }), listing('bulk-two')), { now: NOW });
    expect(result.ok).toBe(true);
    const { rows } = await db.pool.query<{ bulk: boolean; n: number }>('SELECT bulk, count(*)::int AS n FROM catalog.outbox GROUP BY bulk');
    expect(rows).toEqual([{ bulk: true, n: 3 }]);
    // The mark lasts only as long as the import's transaction: the pool's connections write
    // interactive rows again.
    await Promise.all([1, 2, 3, 4].map((i) => db.pool.query(`UPDATE catalog.listings SET punchline = $1 WHERE slug = 'bulk-one'`, [`After ${i}`])));
    const { rows: after } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog.outbox WHERE NOT bulk');
    expect(after[0]!.n).toBe(4);
  });

  it('reports every invalid line with its number and field path, and writes nothing', async () => {
    const lines = ndjson(
      category('design'), // 1
      listing('good-one', { category: 'design', labels: ['new'], tags: ['ai'], maker_email: 'a@b.example' }), // 2
      '', // 3: blank lines are skipped but counted
      '{"kind":"listing",', // 4
      '"just a string"', // 5
      { slug: 'no-kind' }, // 6
      { kind: 'review', slug: 'x' }, // 7
      listing('bad-promo', { promo: { code: 'X', discount: 'Y', expires_at: '2026-02-30' } }), // 8
      listing('Bad Slug', { website: 'https://bad-slug.example' }), // 9
      listing('bad-fields', { name: '', website: 'javascript:alert(1)', status: 'archived', colour: 'red' }), // 10
      listing('bad-faq', { faq: [{ question: 'Q?', answer: 'A.' }, { question: '', answer: 'A.' }], listed_at: 'yesterday' }), // 11
      listing('bad-category', { category: 'nowhere' }), // 12
      category('Bad Category', 'Bad'), // 13
      listing('bad-lists', { labels: 'new', tags: ['ok', 'Not OK'], featured: 'yes', product_type: 'hardware', pricing_model: 'cheap' }), // 14
      listing('bad-id', { id: 'nope', plan: 'gold', social: 'two words', maker_email: 'nobody' }), // 15
    );
    const result = await importCatalog(db.pool, lines, { now: NOW, batchSize: 2 });
    expect(result.ok).toBe(false);
    expect(result.lines).toBe(15);
    expect(result.errors.map(formatLineError)).toEqual([
      expect.stringMatching(/^line 4: json: is not valid JSON \(.+\)$/),
      'line 5: json: must be a JSON object',
      'line 6: kind: is required: category or listing',
      'line 7: kind: must be category or listing',
      'line 8: promo.expires_at: must be a calendar date yyyy-mm-dd',
      'line 9: slug: must be a slug: lowercase letters and digits in words joined by single hyphens',
      'line 10: name: must not be empty',
      'line 10: website: must be an http(s) URL with a domain name',
      'line 10: status: must be one of draft, pending, live, rejected, hidden',
      'line 10: colour: is not a known field',
      'line 11: listed_at: must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T09:00:00Z',
      'line 11: faq.1.question: must not be empty',
      "line 12: category: no category 'nowhere': define it on an earlier line or import it first",
      'line 13: slug: must be a slug: lowercase letters and digits in words joined by single hyphens',
      'line 14: labels: must be an array of label slugs',
      'line 14: tags.1: must be a slug: lowercase letters and digits in words joined by single hyphens',
      'line 14: product_type: must be software or digital_product',
      'line 14: pricing_model: must be one of free, freemium, paid, open_source',
      'line 14: featured: must be true or false',
      'line 15: id: must be a UUID',
      'line 15: social: must be a handle such as "pixelforge": not empty, no spaces, no URL',
      'line 15: plan: must be free or premium',
      'line 15: maker_email: must be an e-mail address',
    ]);
    expect(result.listings).toEqual({ created: 0, updated: 0 });
    expect(await counts()).toEqual(nothingWritten);
  });

  it('rolls back batches already written when a later line is invalid', async () => {
    const good = Array.from({ length: 9 }, (_, i) => listing(`listing-${i}`, { category: 'design', tags: [`tag-${i}`] }));
    const result = await importCatalog(db.pool, ndjson(category('design'), ...good, listing('late', { website: 'nope' }), ...good), {
      batchSize: 3,
    });
    expect(result.errors.map(formatLineError)).toEqual(['line 11: website: must be an http(s) URL with a domain name']);
    expect(await counts()).toEqual(nothingWritten);
  });

  it('reports an unknown category, and one defined only on a later line', async () => {
    const result = await importCatalog(db.pool, ndjson(listing('early', { category: 'design' }), category('design'), listing('late', { category: 'design' })));
    expect(result.errors.map(formatLineError)).toEqual([
      "line 1: category: no category 'design': define it on an earlier line or import it first",
    ]);
  });

  it('reports an unknown category on a line that fails for other reasons too', async () => {
    const result = await importCatalog(db.pool, ndjson(listing('two-problems', { category: 'nope', social: 'https://x.example/me' })));
    expect(result.errors.map(formatLineError)).toEqual([
      'line 1: social: must be a handle such as "pixelforge": not empty, no spaces, no URL',
      "line 1: category: no category 'nope': define it on an earlier line or import it first",
    ]);
  });

  it('accepts a category defined earlier in the file or already stored', async () => {
    const first = await importCatalog(db.pool, ndjson(category('design', 'Design', 'resources'), listing('one', { category: 'design' })));
    expect(first).toMatchObject({ ok: true, categories: 1, listings: { created: 1, updated: 0 } });
    const second = await importCatalog(db.pool, ndjson(listing('two', { category: 'design' })));
    expect(second).toMatchObject({ ok: true, categories: 0, listings: { created: 1, updated: 0 } });
    const { rows } = await db.pool.query('SELECT slug, name, noun FROM catalog.categories');
    expect(rows).toEqual([{ slug: 'design', name: 'Design', noun: 'resources' }]);
  });

  it('updates a category by slug', async () => {
    await importCatalog(db.pool, ndjson(category('design', 'Design', 'resources')));
    const result = await importCatalog(db.pool, ndjson(category('design', 'Design & UX', 'tools')));
    expect(result.ok).toBe(true);
    const { rows } = await db.pool.query('SELECT slug, name, noun FROM catalog.categories');
    expect(rows).toEqual([{ slug: 'design', name: 'Design & UX', noun: 'tools' }]);
  });

  it('applies the defaults', async () => {
    const result = await importCatalog(db.pool, ndjson(listing('plain'), listing('a-draft', { status: 'draft' })), { now: NOW });
    expect(result.ok).toBe(true);
    const row = await stored('plain');
    expect(row).toMatchObject({
      logo: null,
      cover: null,
      category: null,
      labels: [],
      tags: [],
      product_type: null,
      pricing_model: null,
      social: null,
      featured: false,
      status: 'live',
      plan: 'free',
      listed_at: NOW,
      highlights: [],
      ideal_for: [],
      faq: [],
      promo_code: null,
      promo_discount: null,
      promo_url: null,
      promo_expires_at: null,
      maker_id: null,
    });
    expect((await stored('a-draft')).listed_at).toBeNull();
  });

  it('stores every field as given, and creates labels, tags and the maker on first use', async () => {
    const full = listing('full', {
      category: 'design',
      logo: 'https://full.example/logo.png',
      cover: 'https://full.example/cover.png',
      labels: ['new', 'editors-pick'],
      tags: ['ai', 'images'],
      product_type: 'digital_product',
      pricing_model: 'paid',
      social: '@fullhq',
      featured: true,
      listed_at: '2026-01-31T10:00:00+01:00',
      highlights: ['Fast'],
      ideal_for: ['Designers'],
      faq: [{ question: 'Free?', answer: 'No.' }],
      promo: { code: 'LAUNCH', discount: '20% off', url: 'https://full.example/pricing', expires_at: '2026-12-31' },
      status: 'pending',
      plan: 'premium',
      maker_email: 'Maker@Full.example',
    });
    const result = await importCatalog(db.pool, ndjson(category('design'), full, listing('sibling', { maker_email: 'maker@full.EXAMPLE', tags: ['ai'] })));
    expect(result.ok).toBe(true);
    const row = await stored('full');
    expect(row).toMatchObject({
      labels: ['new', 'editors-pick'],
      tags: ['ai', 'images'],
      product_type: 'digital_product',
      pricing_model: 'paid',
      social: 'fullhq',
      featured: true,
      listed_at: new Date('2026-01-31T09:00:00Z'),
      highlights: ['Fast'],
      ideal_for: ['Designers'],
      faq: [{ question: 'Free?', answer: 'No.' }],
      promo_code: 'LAUNCH',
      promo_discount: '20% off',
      promo_url: 'https://full.example/pricing',
      status: 'pending',
      plan: 'premium',
    });
    expect((await db.pool.query("SELECT to_char(promo_expires_at, 'YYYY-MM-DD') AS d FROM catalog.listings WHERE slug = 'full'")).rows[0].d).toBe(
      '2026-12-31',
    );
    const makers = await db.pool.query('SELECT id, email FROM catalog.makers');
    expect(makers.rows).toEqual([{ id: row.maker_id, email: 'maker@full.example' }]);
    expect((await stored('sibling')).maker_id).toBe(row.maker_id);
    expect((await db.pool.query('SELECT slug FROM catalog.labels ORDER BY slug')).rows.map((r) => r.slug)).toEqual(['editors-pick', 'new']);
    expect((await db.pool.query('SELECT slug FROM catalog.tags ORDER BY slug')).rows.map((r) => r.slug)).toEqual(['ai', 'images']);
  });

  it('sanitizes the description before storing it', async () => {
    const description =
      '<h2 onclick="x()">Why</h2><p style="color:red">Fast <strong>and</strong> <em>safe</em><script>alert(1)</script></p>' +
      '<ul><li><a href="javascript:alert(1)">bad</a> <a href="https://ok.example" onmouseover="x()">good</a></li></ul><img src=x onerror=alert(1)>';
    await importCatalog(db.pool, ndjson(listing('html', { description })));
    expect((await stored('html')).description).toBe(
      '<h2>Why</h2><p>Fast <strong>and</strong> <em>safe</em></p><ul><li>bad <a href="https://ok.example" rel="nofollow noopener" target="_blank">good</a></li></ul>',
    );
  });

  it('updates a listing by slug and keeps its id, its maker and its listed_at', async () => {
    await importCatalog(db.pool, ndjson(listing('kept', { maker_email: 'm@kept.example', tags: ['a'] })), { now: NOW });
    const before = await stored('kept');
    const result = await importCatalog(db.pool, ndjson(listing('kept', { name: 'Renamed', tags: ['b'] }), listing('fresh')), {
      now: new Date('2026-07-01T00:00:00Z'),
    });
    expect(result).toMatchObject({ ok: true, listings: { created: 1, updated: 1 } });
    const after = await stored('kept');
    expect(after).toMatchObject({ id: before.id, name: 'Renamed', tags: ['b'], maker_id: before.maker_id, listed_at: NOW });
  });

  it('counts a slug repeated in one file once, and the last line wins', async () => {
    const result = await importCatalog(db.pool, ndjson(listing('twice', { name: 'First' }), listing('twice', { name: 'Second' }), listing('other')), {
      batchSize: 2,
    });
    expect(result).toMatchObject({ ok: true, listings: { created: 2, updated: 0 } });
    expect((await stored('twice')).name).toBe('Second');
    const again = await importCatalog(db.pool, ndjson(listing('twice', { name: 'Third' }), listing('twice', { name: 'Fourth' })));
    expect(again).toMatchObject({ ok: true, listings: { created: 0, updated: 1 } });
    expect((await stored('twice')).name).toBe('Fourth');
  });

  it('uses an explicit id, and rejects one that belongs to another listing', async () => {
    const id = '5d0c2c1e-8a4b-4c1e-9f3a-1b2c3d4e5f60';
    const other = '5d0c2c1e-8a4b-4c1e-9f3a-1b2c3d4e5f61';
    expect((await importCatalog(db.pool, ndjson(listing('with-id', { id: id.toUpperCase() }), listing('no-id')))).ok).toBe(true);
    expect((await stored('with-id')).id).toBe(id);
    // the same id again for the same slug is an ordinary update
    expect((await importCatalog(db.pool, ndjson(listing('with-id', { id, name: 'Again' })))).ok).toBe(true);

    const noIdRow = await stored('no-id');
    const result = await importCatalog(
      db.pool,
      ndjson(
        listing('thief', { id }), // 1: id of with-id
        listing('with-id', { id: other }), // 2: with-id has another id
        listing('new-one', { id: other }), // 3: fine
        listing('new-two', { id: other }), // 4: id just given to new-one on line 3
        listing('new-one'), // 5: fine, keeps the id of line 3
        listing('new-three'), // 6: fine, gets a generated id
        listing('new-three', { id: noIdRow.id }), // 7: id of no-id
      ),
    );
    expect(result.errors.map(formatLineError)).toEqual([
      "line 1: id: already belongs to the listing 'with-id'",
      `line 2: id: does not match the listing 'with-id': its id is ${id}`,
      "line 4: id: already belongs to the listing 'new-one'",
      "line 7: id: already belongs to the listing 'no-id'",
    ]);
    expect(await importCatalog(db.pool, ndjson(listing('gen'), listing('gen', { id: other })))).toMatchObject({
      ok: false,
      errors: [{ line: 2, field: 'id', message: "does not match the listing 'gen': line 1 gives it no id, so a new one is generated" }],
    });
    expect((await db.pool.query('SELECT count(*)::int AS n FROM catalog.listings')).rows[0].n).toBe(2);
  });

  it('skips blank lines and a byte-order mark, and counts every line', async () => {
    const result = await importCatalog(db.pool, [`\uFEFF${JSON.stringify(category('design'))}`, '', '   ', JSON.stringify(listing('x', { status: 'wrong' }))]);
    expect(result.errors.map(formatLineError)).toEqual(['line 4: status: must be one of draft, pending, live, rejected, hidden']);
    expect(result.lines).toBe(4);
  });

  it('tells whether the catalog is empty', async () => {
    expect(await isCatalogEmpty(db.pool)).toBe(true);
    await importCatalog(db.pool, ndjson(category('design')));
    expect(await isCatalogEmpty(db.pool)).toBe(false);
  });

  it('imports a generated demo catalog of 2000 listings cleanly', async () => {
    const result = await importCatalog(db.pool, demoCatalogLines({ count: 2000, seed: 1 }));
    expect(result.errors).toEqual([]);
    expect(result).toMatchObject({ ok: true, categories: 30, listings: { created: 2000, updated: 0 } });
    const { rows } = await db.pool.query<{ n: number; live: number; outbox: number }>(`SELECT count(*)::int AS n,
      count(*) FILTER (WHERE status = 'live')::int AS live, (SELECT count(*)::int FROM catalog.outbox) AS outbox FROM catalog.listings`);
    expect(rows[0]!.n).toBe(2000);
    expect(rows[0]!.live).toBeGreaterThan(1500);
    expect(rows[0]!.outbox).toBe(2030);
    // importing it again changes nothing public: updates only, no new outbox rows
    const again = await importCatalog(db.pool, demoCatalogLines({ count: 2000, seed: 1 }));
    expect(again).toMatchObject({ ok: true, listings: { created: 0, updated: 2000 } });
    expect((await db.pool.query('SELECT count(*)::int AS n FROM catalog.outbox')).rows[0].n).toBe(2030);
  });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCatalog(args: string[], stdin?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/catalog.js'), ...args], {
      cwd: tmp,
      env: { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'warn' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

describe('catalog import (the command)', () => {
  it('prints each problem and exits 1 on invalid input, writing nothing', async () => {
    const file = path.join(tmp, 'bad.ndjson');
    await writeFile(file, `${ndjson(category('design'), listing('ok', { category: 'design' }), listing('bad', { promo: { code: 'X', discount: 'Y', expires_at: '2026-13-01' } }), '{oops').join('\n')}\n`);
    const run = await runCatalog(['import', file]);
    expect(run.code).toBe(1);
    expect(run.stderr.split('\n')).toEqual(
      expect.arrayContaining(['line 3: promo.expires_at: must be a calendar date yyyy-mm-dd', expect.stringMatching(/^line 4: json: is not valid JSON/)]),
    );
    expect(run.stdout).toMatch(/^imported nothing from .*bad\.ndjson: 2 errors on 2 lines \(4 lines checked in \d+\.\d s\)\n$/);
    expect(await counts()).toEqual(nothingWritten);
  });

  it('imports a valid file and prints the summary line', async () => {
    const file = path.join(tmp, 'good.ndjson');
    await writeFile(file, `${ndjson(category('design'), listing('one', { category: 'design' }), listing('two')).join('\r\n')}\r\n`);
    const run = await runCatalog(['import', file]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^imported 2 listings \(2 new, 0 updated\) and 1 category from .*good\.ndjson in \d+\.\d s\n$/);
    expect(await counts()).toMatchObject({ categories: 1, listings: 2 });
  });

  it('reads stdin when the file is -', async () => {
    const run = await runCatalog(['import', '-'], `${ndjson(category('design'), listing('from-stdin', { category: 'design' })).join('\n')}\n`);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^imported 1 listing \(1 new, 0 updated\) and 1 category from stdin in \d+\.\d s\n$/);
    expect((await stored('from-stdin')).category).toBe('design');
  });

  it('fails at once on a missing file, and explains itself with --help', async () => {
    const missing = await runCatalog(['import', path.join(tmp, 'missing.ndjson')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot read .*missing\.ndjson/);
    const folder = await runCatalog(['import', tmp]);
    expect(folder.code).toBe(1);
    expect(folder.stderr).toContain(`cannot read ${tmp}: it is a directory, not an NDJSON file`);
    expect(folder.stderr).not.toMatch(/EISDIR|at async/);
    const help = await runCatalog(['import', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: catalog import FILE\|-/);
  });
});
