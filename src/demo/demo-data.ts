import type { CategoryLineInput, ListingLineInput, ListingStatus } from '../catalog/listings/listing-input.ts';
import { SeededRandom } from './seeded-random.ts';
import { demoDescription } from './demo-description.tsx';
import { capitalize, sentence } from './demo-words.ts';
import {
  ADJECTIVES,
  DEMO_CATEGORIES,
  GENERIC_TAGS,
  INTEGRATIONS,
  NAME_PREFIXES,
  NAME_QUALIFIERS,
  NAME_SUFFIXES,
  PROMO_CODES,
  PROMO_OFFERS,
  PUNCHLINE_ENDINGS,
  type DemoCategory,
} from './demo-vocabulary.ts';

/**
 * A believable demo catalog as NDJSON lines: the categories first, then `count` listings.
 * Deterministic: the same count and seed give the same bytes on every run and machine, and
 * nothing depends on today's date (dates are placed relative to DEMO_ANCHOR_DAY). Websites use
 * the reserved `.example` top-level domain so no demo link reaches a real site.
 */

export const DEMO_ANCHOR_DAY = '2026-11-01';
export const DEMO_DEFAULT_COUNT = 2000;
export const DEMO_DEFAULT_SEED = 1;

const ANCHOR_MS = Date.parse(`${DEMO_ANCHOR_DAY}T00:00:00Z`);
const DAY_MS = 86_400_000;
const THREE_YEARS_MS = 3 * 365 * DAY_MS;

export interface DemoOptions {
  count?: number;
  seed?: number;
}

export function* demoCatalogLines(opts: DemoOptions = {}): Generator<string> {
  const count = opts.count ?? DEMO_DEFAULT_COUNT;
  const rnd = new SeededRandom(opts.seed ?? DEMO_DEFAULT_SEED);
  for (const c of DEMO_CATEGORIES) {
    const line: CategoryLineInput = { kind: 'category', slug: c.slug, name: c.name, noun: c.noun };
    yield JSON.stringify(line);
  }
  const names = new NameGenerator(rnd);
  for (let i = 0; i < count; i++) yield JSON.stringify(demoListing(rnd, names));
}

function demoListing(rnd: SeededRandom, names: NameGenerator): ListingLineInput {
  const category = rnd.pick(DEMO_CATEGORIES);
  const { name, slug } = names.next(category);
  const domain = `${slug.replace(/-/g, '')}.example`;
  const site = `https://${domain}`;
  const status = rnd.weighted<ListingStatus>({ live: 85, draft: 4, pending: 4, hidden: 4, rejected: 3 });
  // hidden listings were live once; the others never went live
  const listedAtMs = status === 'live' || status === 'hidden' ? ANCHOR_MS - 1000 * rnd.int(1, THREE_YEARS_MS / 1000) : null;
  const pricing = pricingFor(rnd, category);
  const premium = rnd.chance(0.15);
  const tags = rnd.sample(category.tags, rnd.int(1, 4));
  if (rnd.chance(0.4)) tags.push(rnd.pick(GENERIC_TAGS));

  const listing: ListingLineInput = {
    kind: 'listing',
    slug,
    name,
    punchline: punchline(rnd, category),
    description: demoDescription(rnd, category, name, site, pricing),
    website: site,
    logo: rnd.chance(0.9) ? `${site}/logo.png` : null,
    cover: rnd.chance(0.75) ? `${site}/cover.png` : null,
    category: rnd.chance(0.02) ? null : category.slug,
    labels: labels(rnd, listedAtMs, pricing),
    tags: [...new Set(tags)],
    product_type: rnd.chance(0.05) ? null : category.productType,
    pricing_model: pricing,
    social: rnd.chance(0.7) ? `@${slug.replace(/-/g, '')}${rnd.pick(['', '', 'hq', 'app', '_dev'])}` : null,
    featured: rnd.chance(0.05),
    listed_at: listedAtMs === null ? null : new Date(listedAtMs).toISOString().replace('.000Z', 'Z'),
    highlights: premium ? rnd.sample(category.features, rnd.int(3, 5)).map(sentence) : [],
    ideal_for: premium ? rnd.sample(category.audiences, rnd.int(2, 4)).map(capitalize) : [],
    faq: premium ? faq(rnd, name, pricing) : [],
    promo: rnd.chance(0.2) ? promo(rnd, site, slug) : null,
    status,
    plan: premium ? 'premium' : 'free',
  };
  return listing;
}

type Pricing = NonNullable<ListingLineInput['pricing_model']>;

function pricingFor(rnd: SeededRandom, category: DemoCategory): Pricing | null {
  if (rnd.chance(0.05)) return null;
  return category.productType === 'digital_product'
    ? rnd.weighted<Pricing>({ paid: 70, free: 25, freemium: 5, open_source: 0 })
    : rnd.weighted<Pricing>({ freemium: 40, paid: 28, free: 14, open_source: 18 });
}

function labels(rnd: SeededRandom, listedAtMs: number | null, pricing: Pricing | null): string[] {
  const out: string[] = [];
  if (listedAtMs !== null && ANCHOR_MS - listedAtMs < 45 * DAY_MS) out.push('new');
  if (pricing === 'open_source' && rnd.chance(0.8)) out.push('open-source');
  if (rnd.chance(0.08)) out.push('trending');
  if (rnd.chance(0.1)) out.push('popular');
  if (rnd.chance(0.04)) out.push('editors-pick');
  if (rnd.chance(0.05)) out.push('made-in-europe');
  return out;
}

function punchline(rnd: SeededRandom, c: DemoCategory): string {
  switch (rnd.int(0, 3)) {
    case 0:
      return `${capitalize(rnd.pick(c.actions))} ${rnd.pick(PUNCHLINE_ENDINGS)}`;
    case 1:
      return `The ${rnd.pick(ADJECTIVES)} way for ${rnd.pick(c.audiences)} to ${rnd.pick(c.actions)}`;
    case 2:
      return `${capitalize(rnd.pick(c.features))} for ${rnd.pick(c.audiences)}`;
    default:
      return `A ${rnd.pick(ADJECTIVES)} ${rnd.pick(c.kinds)} that helps you ${rnd.pick(c.actions)}`;
  }
}

function faq(rnd: SeededRandom, name: string, pricing: Pricing | null): Array<{ question: string; answer: string }> {
  const integration = rnd.pick(INTEGRATIONS);
  const all = [
    {
      question: 'Is there a free trial?',
      answer: pricing === 'paid' ? 'Yes, every plan starts with a 14-day trial and no card is needed.' : `Yes, ${name} has a free plan you can keep as long as you like.`,
    },
    { question: `Does ${name} work with ${integration}?`, answer: `Yes. Connect ${integration} from the settings page in a couple of clicks.` },
    { question: 'Can I export my data?', answer: 'Any time, as CSV or JSON, from the account settings.' },
    { question: 'Where is my data stored?', answer: `In ${rnd.pick(['the EU (Frankfurt)', 'the US (Virginia)', 'the EU (Dublin)'])}, encrypted at rest.` },
    { question: 'Do you offer discounts for nonprofits and students?', answer: 'Yes, 50% off any plan. Write to the support team with proof of status.' },
  ];
  return rnd.sample(all, rnd.int(2, 4));
}

function promo(rnd: SeededRandom, site: string, slug: string): NonNullable<ListingLineInput['promo']> {
  const when = rnd.weighted({ expired: 30, future: 40, open: 30 });
  const expires =
    when === 'open' ? null : when === 'expired' ? ANCHOR_MS - DAY_MS * rnd.int(1, 700) : ANCHOR_MS + DAY_MS * rnd.int(0, 240);
  const code = rnd.chance(0.5) ? rnd.pick(PROMO_CODES) : `${slug.split('-')[0]!.toUpperCase()}${rnd.pick([10, 15, 20, 25, 30, 50])}`;
  return {
    code,
    discount: capitalize(rnd.pick(PROMO_OFFERS)),
    url: rnd.chance(0.5) ? `${site}/pricing` : null,
    expires_at: expires === null ? null : new Date(expires).toISOString().slice(0, 10),
  };
}

/**
 * Unique product names: a compound ("Novaflow"), a prefix with a word of the category
 * ("Pixel Canvas") or a compound with a qualifier ("Novaflow Studio"). After a few collisions a
 * number is added, so any count can be generated.
 */
class NameGenerator {
  private readonly taken = new Set<string>();

  constructor(private readonly rnd: SeededRandom) {}

  next(category: DemoCategory): { name: string; slug: string } {
    for (let attempt = 0; attempt < 8; attempt++) {
      const name = this.candidate(category);
      const slug = slugify(name);
      if (!this.taken.has(slug)) {
        this.taken.add(slug);
        return { name, slug };
      }
    }
    const base = this.candidate(category);
    for (let n = 2; ; n++) {
      const name = `${base} ${n}`;
      const slug = slugify(name);
      if (!this.taken.has(slug)) {
        this.taken.add(slug);
        return { name, slug };
      }
    }
  }

  private candidate(category: DemoCategory): string {
    const rnd = this.rnd;
    const compound = () => `${rnd.pick(NAME_PREFIXES)}${rnd.pick(NAME_SUFFIXES)}`;
    switch (rnd.weighted({ compound: 45, pair: 35, qualified: 20 })) {
      case 'compound':
        return compound();
      case 'pair':
        return `${rnd.pick(NAME_PREFIXES)} ${rnd.pick(category.nameWords)}`;
      default:
        return `${compound()} ${rnd.pick(NAME_QUALIFIERS)}`;
    }
  }
}

function slugify(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}
