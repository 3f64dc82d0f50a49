/**
 * `npm run lighthouse`: Lighthouse (pinned at 12.2.3, the last major that runs on Node.js 20) on
 * the directory's pages: home, search, a category and a listing. Prints performance,
 * accessibility, best practices and SEO for each, and exits 1 when any score is below 95.
 *
 *   npm run lighthouse                        the service on its embedded defaults, demo catalog
 *   npm run lighthouse -- --url http://127.0.0.1:8080   a service already running (loopback only)
 *   npm run lighthouse -- --json              the scores as JSON on stdout
 *   npm run lighthouse -- --preset desktop    desktop instead of mobile
 *   npm run lighthouse -- --runs 5            runs per page (default 3)
 *
 * - Without --url the service starts as a newcomer starts it: `catalog serve` with no
 *   DATABASE_URL, so an embedded PostgreSQL in a temporary data folder, the demo catalog (2,000
 *   listings), on a spare loopback port; folder and processes are removed afterwards.
 * - Mobile by default: it is Lighthouse's own default (what anyone re-running Lighthouse gets),
 *   the stricter of the two (a mid-range phone: 4× slower CPU, a slow 4G network, simulated), and
 *   phones are where a listing page is most often opened from a link.
 * - The pages are chosen from the catalog itself: the category with the most live listings, a
 *   premium listing from the newest page (the richest page: profile, promo, logo, cover), and a
 *   search for the first word of that listing's name.
 * - Chromium is Debian's (/usr/bin/chromium, or CHROMIUM_PATH), headless, and talks to loopback
 *   only, like the browser tests (test/helpers/browser.ts): host names resolve to nothing and
 *   every other address goes to a proxy on loopback. That proxy is a stand-in for the makers'
 *   sites: it answers an image request with a neutral PNG of a listing image's size, so the
 *   pages render as they would with the makers' images, and refuses anything else. Nothing
 *   leaves the machine.
 * - Each page is audited --runs times and the median run counts (Lighthouse's own choice of
 *   median, by first contentful paint and time to interactive): a performance score moves by a
 *   few points between runs, more on a busy machine. That run's full report is saved as
 *   test-artifacts/lighthouse/<page>.html.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse, { desktopConfig, generateReport, type Flags, type Result } from 'lighthouse';
import { computeMedianRun } from 'lighthouse/core/lib/median-run.js';
import { startCatalog, type CatalogProcess } from '../bench/catalog-process.ts';
import { REPO_ROOT, stopAll } from '../bench/processes.ts';
import { freePort } from '../src/db/embedded.ts';
import { startSiteStandIn, type SiteStandIn } from './lighthouse-site-stand-in.ts';

const MIN_SCORE = 95;
/** Runs of a page that may fail with a runtime error before the script gives up. */
const MAX_RETRIES = 3;
const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'] as const;
type CategoryId = (typeof CATEGORIES)[number];
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const REPORT_DIR = path.join(REPO_ROOT, 'test-artifacts', 'lighthouse');

interface Options {
  url: string | undefined;
  json: boolean;
  preset: 'mobile' | 'desktop';
  runs: number;
}

function usage(message: string): never {
  console.error(`lighthouse: ${message}\nusage: npm run lighthouse [-- --url http://127.0.0.1:PORT] [--json] [--preset mobile|desktop] [--runs N]`);
  process.exit(2);
}

function parseArgs(argv: string[]): Options {
  const options: Options = { url: undefined, json: false, preset: 'mobile', runs: 3 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--json') options.json = true;
    else if (arg === '--url') options.url = argv[++i] ?? usage('--url needs a value');
    else if (arg === '--runs') {
      options.runs = Number(argv[++i]);
      if (!Number.isInteger(options.runs) || options.runs < 1 || options.runs > 20) usage('--runs is a whole number from 1 to 20');
    }    else if (arg === '--preset') {
      const preset = argv[++i];
      if (preset !== 'mobile' && preset !== 'desktop') usage('--preset is mobile or desktop');
      options.preset = preset;
    } else usage(`unknown argument ${arg}`);
  }
  if (options.url !== undefined) {
    let host: string;
    try {
      host = new URL(options.url).hostname;
    } catch {
      usage(`--url ${options.url} is not a URL`);
    }
    // The browser reaches loopback only (see above).
    if (host !== 'localhost' && host !== '[::1]' && !/^127(?:\.\d{1,3}){3}$/.test(host)) usage('--url must be a loopback address');
    options.url = options.url.replace(/\/+$/, '');
  }
  return options;
}

interface Page {
  name: string;
  path: string;
}

interface ProductLike {
  slug: string;
  name: string;
  highlights: string[];
  promo: unknown;
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  return (await res.json()) as T;
}

/** Home, a search, the largest category and a premium listing, found through the REST API. */
async function choosePages(base: string): Promise<Page[]> {
  const { categories } = await getJson<{ categories: Array<{ slug: string; count: number }> }>(`${base}/api/v1/categories`);
  const category = [...categories].sort((a, b) => b.count - a.count)[0];
  const { products } = await getJson<{ products: ProductLike[] }>(`${base}/api/v1/search?limit=50`);
  const listing = products.find((p) => p.highlights.length > 0 && p.promo !== null) ?? products.find((p) => p.highlights.length > 0) ?? products[0];
  if (!category || !listing) throw new Error(`the catalog at ${base} has no live listing or no category`);
  const word = (listing.name.split(/\s+/).find((w) => w.length >= 2) ?? listing.name).toLowerCase();
  return [
    { name: 'home', path: '/' },
    { name: 'search', path: `/search?q=${encodeURIComponent(word)}` },
    { name: 'category', path: `/categories/${category.slug}` },
    { name: 'listing', path: `/products/${listing.slug}` },
  ];
}

interface PageScores {
  page: string;
  url: string;
  scores: Record<CategoryId, number>;
  /** Audits that cost points: "category: audit id (score)". */
  lost: string[];
}

function scoresOf(page: Page, lhr: Result): PageScores {
  const scores = {} as Record<CategoryId, number>;
  const lost: string[] = [];
  for (const id of CATEGORIES) {
    const category = lhr.categories[id];
    scores[id] = Math.round((category?.score ?? 0) * 100);
    for (const ref of category?.auditRefs ?? []) {
      const audit = lhr.audits[ref.id];
      if (ref.weight > 0 && audit && audit.score !== null && audit.score < 1) lost.push(`${id}: ${ref.id} (${audit.score}${audit.displayValue ? `, ${audit.displayValue}` : ''})`);
    }
  }
  return { page: page.name, url: lhr.finalDisplayedUrl, scores, lost };
}

function printTable(results: PageScores[], options: Options, base: string): void {
  const headers = ['page', 'performance', 'accessibility', 'best practices', 'SEO'];
  const rows = results.map((r) => [`${r.page} (${new URL(r.url).pathname}${new URL(r.url).search})`, ...CATEGORIES.map((c) => String(r.scores[c]))]);
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`Lighthouse ${lighthouseVersion}, ${options.preset}, ${base}`);
  console.log(line(headers));
  for (const row of rows) console.log(line(row));
  for (const r of results) for (const audit of r.lost) console.log(`  ${r.page}: ${audit}`);
}

let lighthouseVersion = '';

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2));
  // Lighthouse times the page's tasks by the clock: on a machine whose cores are taken by others
  // a task waits for the CPU and counts as long, and performance drops. Read before this run adds
  // load of its own.
  const load = os.loadavg()[0] ?? 0;
  let dataDir: string | undefined;
  let service: CatalogProcess | undefined;
  let standIn: SiteStandIn | undefined;
  let chrome: chromeLauncher.LaunchedChrome | undefined;
  try {
    let base = options.url;
    if (base === undefined) {
      // Nothing of the caller's deployment leaks into the service under audit.
      for (const name of ['DATABASE_URL', 'REDIS_URL', 'MEILI_URL', 'MEILI_KEY', 'PUBLIC_URL', 'SITE_URL', 'SMTP_URL', 'STRIPE_SECRET_KEY']) delete process.env[name];
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-lighthouse-'));
      if (!options.json) console.error('lighthouse: starting catalog serve on its embedded defaults (embedded PostgreSQL, the demo catalog)');
      // A port of its own rather than PORT=0, so the default PUBLIC_URL (canonical links,
      // sitemap) names the address the pages are really served from.
      service = await startCatalog({ command: 'serve', dataDir, demo: true, env: { PORT: String(await freePort()) }, timeoutMs: 300_000 });
      base = service.url;
    }
    const pages = await choosePages(base);
    standIn = await startSiteStandIn();
    chrome = await chromeLauncher.launch({
      chromePath: CHROMIUM_PATH,
      chromeFlags: [
        '--headless=new',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-pings',
        // Loopback only, as in test/helpers/browser.ts: Chromium sends loopback addresses past
        // the proxy itself; everything else goes to the stand-in.
        `--proxy-server=http://127.0.0.1:${standIn.port}`,
        '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1 , EXCLUDE [::1]',
        // The stand-in answers https with a certificate of its own.
        '--ignore-certificate-errors',
      ],
    });
    const flags: Flags = { port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: [...CATEGORIES] };
    await mkdir(REPORT_DIR, { recursive: true });
    const results: PageScores[] = [];
    for (const page of pages) {
      if (!options.json) console.error(`lighthouse: ${page.name} ${base}${page.path} (${options.runs} run${options.runs === 1 ? '' : 's'})`);
      const runs: Result[] = [];
      for (let attempt = 1; runs.length < options.runs; attempt++) {
        const run = await lighthouse(`${base}${page.path}`, flags, options.preset === 'desktop' ? desktopConfig : undefined);
        if (!run) throw new Error(`Lighthouse gave no result for ${page.path}`);
        const error = run.lhr.runtimeError;
        if (!error) {
          runs.push(run.lhr);
          continue;
        }
        // A run whose trace came out broken (NO_NAVSTART, NO_FCP on a busy machine) is run again, a few times.
        if (attempt >= options.runs + MAX_RETRIES) throw new Error(`Lighthouse on ${page.path}: ${error.code} ${error.message}`);
        if (!options.json) console.error(`lighthouse: ${page.name}: ${error.code}, running again`);
      }
      const median = computeMedianRun(runs);
      lighthouseVersion = median.lighthouseVersion;
      await writeFile(path.join(REPORT_DIR, `${page.name}.html`), generateReport(median, 'html'));
      results.push(scoresOf(page, median));
    }
    const busy = load > os.cpus().length ? `the machine was busy when the run began (load ${load.toFixed(1)} on ${os.cpus().length} cores): performance scores are lower than on an idle one` : undefined;
    const below = results.flatMap((r) => CATEGORIES.filter((c) => r.scores[c] < MIN_SCORE).map((c) => `${r.page} ${c} ${r.scores[c]}`));
    if (options.json) {
      console.log(JSON.stringify({ lighthouse: lighthouseVersion, preset: options.preset, minimum: MIN_SCORE, pages: results, below, ...(busy && { warning: busy }) }, null, 2));
    } else {
      printTable(results, options, base);
      // Chromium's own background requests (updates, accounts) end here too.
      const refusedHosts = [...new Set(standIn.refused.map((u) => new URL(u).host))];
      if (refusedHosts.length > 0) console.log(`refused by the stand-in, never sent on: ${refusedHosts.join(', ')}`);
      if (busy) console.log(`warning: ${busy}`);
      console.log(below.length === 0 ? `every score is ${MIN_SCORE} or more` : `below ${MIN_SCORE}: ${below.join('; ')}`);
    }
    return below.length === 0 ? 0 : 1;
  } finally {
    chrome?.kill();
    await standIn?.close();
    await service?.stop();
    await stopAll();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
