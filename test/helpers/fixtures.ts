import type { Pool } from '../../src/db/pool.ts';

/**
 * A small catalog with known properties, written straight into the write model with SQL, for
 * REST and MCP tests. The projector turns it into the projection like any other change.
 *
 * Live listings (newest first):
 *   pixel-forge      design, premium, labels new+editors-pick, tags [ai, images], promo open-ended, featured
 *   type-scale       design, free, label new, tags [fonts], promo expired (hidden), premium profile ignored (free)
 *   query-pilot      developer-tools, free, tags [ai, database], html description
 *   code-lantern     developer-tools, premium, tags [editor], same listed_at as deploy-kite
 *   deploy-kite      developer-tools, free, tags [devops], same listed_at as code-lantern
 *   note-garden      productivity, free, label trending, tags [notes, ai], no category-specific extras
 *   nullish-widget   no category, every nullable field null, listed_at set
 * Not live: draft-idea (draft), pending-review (pending), rejected-app (rejected), hidden-gem (hidden)
 * Categories: design (2 live), developer-tools (3 live), productivity (1 live), empty-shelf (0 live)
 */

export const FIXTURE_CATEGORIES = [
  { slug: 'design', name: 'Design', noun: 'resources' },
  { slug: 'developer-tools', name: 'Developer Tools', noun: 'tools' },
  { slug: 'productivity', name: 'Productivity', noun: 'apps' },
  { slug: 'empty-shelf', name: 'Empty Shelf', noun: 'items' },
] as const;

export const LIVE_SLUGS_NEWEST_FIRST = [
  'pixel-forge',
  'type-scale',
  'query-pilot',
  // code-lantern and deploy-kite share listed_at; ties go by id ascending (ids chosen below)
  'code-lantern',
  'deploy-kite',
  'note-garden',
  'nullish-widget',
] as const;

export const NOT_LIVE_SLUGS = ['draft-idea', 'pending-review', 'rejected-app', 'hidden-gem'] as const;

export const FIXTURE_IDS: Record<string, string> = {
  'pixel-forge': '0a4f5f4e-6f0e-4b8e-9b1a-000000000001',
  'type-scale': '0a4f5f4e-6f0e-4b8e-9b1a-000000000002',
  'query-pilot': '0a4f5f4e-6f0e-4b8e-9b1a-000000000003',
  'code-lantern': '0a4f5f4e-6f0e-4b8e-9b1a-000000000004',
  'deploy-kite': '0a4f5f4e-6f0e-4b8e-9b1a-000000000005',
  'note-garden': '0a4f5f4e-6f0e-4b8e-9b1a-000000000006',
  'nullish-widget': '0a4f5f4e-6f0e-4b8e-9b1a-000000000007',
  'draft-idea': '0a4f5f4e-6f0e-4b8e-9b1a-000000000008',
  'pending-review': '0a4f5f4e-6f0e-4b8e-9b1a-000000000009',
  'rejected-app': '0a4f5f4e-6f0e-4b8e-9b1a-00000000000a',
  'hidden-gem': '0a4f5f4e-6f0e-4b8e-9b1a-00000000000b',
};

interface Row {
  slug: string;
  name: string;
  punchline: string;
  description: string;
  website: string;
  logo: string | null;
  cover: string | null;
  category: string | null;
  labels: string[];
  tags: string[];
  product_type: string | null;
  pricing_model: string | null;
  social: string | null;
  featured: boolean;
  status: string;
  plan: string;
  listed_at: string | null;
  highlights: string[];
  ideal_for: string[];
  faq: Array<{ question: string; answer: string }>;
  promo: { code: string; discount: string; url: string | null; expires_at: string | null } | null;
}

const base = {
  logo: null,
  cover: null,
  labels: [],
  tags: [],
  product_type: 'software',
  pricing_model: 'freemium',
  social: null,
  featured: false,
  plan: 'free',
  highlights: [],
  ideal_for: [],
  faq: [],
  promo: null,
};

const FIXTURE_ROWS: Row[] = [
  {
    ...base,
    slug: 'pixel-forge',
    name: 'Pixel Forge',
    punchline: 'Generate crisp illustrations from a sketch',
    description: '<p>Pixel Forge turns rough sketches into <strong>vector illustrations</strong>.</p>',
    website: 'https://pixelforge.example.com',
    logo: 'https://cdn.example.com/pixel-forge/logo.png',
    cover: 'https://cdn.example.com/pixel-forge/cover.png',
    category: 'design',
    labels: ['new', 'editors-pick'],
    tags: ['ai', 'images'],
    product_type: 'software',
    pricing_model: 'paid',
    social: 'pixelforge',
    featured: true,
    status: 'live',
    plan: 'premium',
    listed_at: '2026-10-20T12:00:00Z',
    highlights: ['Sketch to vector in seconds', 'Exports SVG and PNG'],
    ideal_for: ['Illustrators', 'Marketing teams'],
    faq: [{ question: 'Is there a free trial?', answer: 'Yes, 14 days.' }],
    promo: { code: 'FORGE20', discount: '20% off the first year', url: null, expires_at: null },
  },
  {
    ...base,
    slug: 'type-scale',
    name: 'Type Scale',
    punchline: 'Harmonious font sizes for every screen',
    description: '<p>Pick a ratio and get a complete typographic scale.</p>',
    website: 'https://typescale.example.com',
    category: 'design',
    labels: ['new'],
    tags: ['fonts'],
    pricing_model: 'free',
    status: 'live',
    plan: 'free',
    listed_at: '2026-10-10T08:30:00Z',
    // a premium profile on a free listing is not shown
    highlights: ['Should not show'],
    promo: { code: 'OLD10', discount: '10% off', url: 'https://typescale.example.com/redeem', expires_at: '2026-01-31' },
  },
  {
    ...base,
    slug: 'query-pilot',
    name: 'Query Pilot',
    punchline: 'Write database queries in plain English',
    description:
      '<p>Query Pilot explains and writes SQL.</p><ul><li>Works with PostgreSQL</li><li>Keeps a history</li></ul><p><a href="https://querypilot.example.com/docs">Read the docs</a></p>',
    website: 'https://querypilot.example.com',
    category: 'developer-tools',
    tags: ['ai', 'database'],
    pricing_model: 'freemium',
    status: 'live',
    listed_at: '2026-09-01T00:00:00Z',
  },
  {
    ...base,
    slug: 'code-lantern',
    name: 'Code Lantern',
    punchline: 'Shine a light on legacy code',
    description: '<p>Maps call graphs of large codebases.</p>',
    website: 'https://codelantern.example.com',
    category: 'developer-tools',
    tags: ['editor'],
    pricing_model: 'open_source',
    status: 'live',
    plan: 'premium',
    listed_at: '2026-08-15T10:00:00Z',
    highlights: ['Call graphs', 'Dead code finder'],
    ideal_for: ['Maintainers'],
    faq: [],
    promo: { code: 'LANTERN', discount: 'Free onboarding call', url: 'https://codelantern.example.com/promo', expires_at: '2099-12-31' },
  },
  {
    ...base,
    slug: 'deploy-kite',
    name: 'Deploy Kite',
    punchline: 'Ship previews for every branch',
    description: '<p>Preview environments without the yaml.</p>',
    website: 'https://deploykite.example.com',
    category: 'developer-tools',
    tags: ['devops'],
    product_type: 'software',
    pricing_model: 'paid',
    status: 'live',
    listed_at: '2026-08-15T10:00:00Z',
  },
  {
    ...base,
    slug: 'note-garden',
    name: 'Note Garden',
    punchline: 'Grow ideas from daily notes',
    description: '<p>Linked notes that bloom into documents.</p>',
    website: 'https://notegarden.example.com',
    category: 'productivity',
    labels: ['trending'],
    tags: ['notes', 'ai'],
    product_type: 'digital_product',
    pricing_model: 'freemium',
    status: 'live',
    listed_at: '2026-07-04T09:15:30Z',
  },
  {
    ...base,
    slug: 'nullish-widget',
    name: 'Nullish Widget',
    punchline: 'A listing with every optional field empty',
    description: '<p>Nothing more to say.</p>',
    website: 'https://nullish.example.com',
    category: null,
    product_type: null,
    pricing_model: null,
    status: 'live',
    listed_at: '2026-01-02T03:04:05Z',
  },
  { ...base, slug: 'draft-idea', name: 'Draft Idea', punchline: 'Not ready yet', description: '<p>Draft</p>', website: 'https://draft.example.com', category: 'design', status: 'draft', listed_at: null },
  { ...base, slug: 'pending-review', name: 'Pending Review', punchline: 'Waiting for review', description: '<p>Pending</p>', website: 'https://pending.example.com', category: 'design', status: 'pending', listed_at: null },
  { ...base, slug: 'rejected-app', name: 'Rejected App', punchline: 'Did not pass review', description: '<p>Rejected</p>', website: 'https://rejected.example.com', category: 'productivity', status: 'rejected', listed_at: null },
  { ...base, slug: 'hidden-gem', name: 'Hidden Gem', punchline: 'Was live, now hidden', description: '<p>Hidden</p>', website: 'https://hidden.example.com', category: 'productivity', status: 'hidden', listed_at: '2025-05-05T05:05:05Z' },
];

/** Writes the fixture catalog into the write model (one transaction). */
export async function seedFixtureCatalog(pool: Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    for (const c of FIXTURE_CATEGORIES) {
      await client.query('INSERT INTO catalog.categories (slug, name, noun) VALUES ($1, $2, $3)', [c.slug, c.name, c.noun]);
    }
    for (const r of FIXTURE_ROWS) {
      for (const l of r.labels) await client.query('INSERT INTO catalog.labels (slug) VALUES ($1) ON CONFLICT DO NOTHING', [l]);
      for (const t of r.tags) await client.query('INSERT INTO catalog.tags (slug) VALUES ($1) ON CONFLICT DO NOTHING', [t]);
      await client.query(
        `INSERT INTO catalog.listings (id, slug, name, punchline, description, website, logo, cover, category, labels, tags,
           product_type, pricing_model, social, featured, status, plan, listed_at, highlights, ideal_for, faq,
           promo_code, promo_discount, promo_url, promo_expires_at)
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25)`,
        [
          FIXTURE_IDS[r.slug],
          r.slug,
          r.name,
          r.punchline,
          r.description,
          r.website,
          r.logo,
          r.cover,
          r.category,
          r.labels,
          r.tags,
          r.product_type,
          r.pricing_model,
          r.social,
          r.featured,
          r.status,
          r.plan,
          r.listed_at,
          r.highlights,
          r.ideal_for,
          JSON.stringify(r.faq),
          r.promo?.code ?? null,
          r.promo?.discount ?? null,
          r.promo?.url ?? null,
          r.promo?.expires_at ?? null,
        ],
      );
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
}
