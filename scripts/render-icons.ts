/**
 * Renders the service's PNG icons from its SVG mark (src/web/assets/icons/icon.svg): one PNG for
 * each raster size src/contract/service-identity.ts lists, on a transparent background, written
 * next to the SVG. Run it after editing the mark and commit what it writes:
 *
 *   node bin/run-ts.js scripts/render-icons.ts
 *
 * The renderer is Debian's Chromium (/usr/bin/chromium, or CHROMIUM_PATH; `apt-get install -y
 * chromium`) driven by playwright-core, headless. The page is built in memory and shows the SVG
 * from a data: URL; the browser may send nothing anywhere (host names resolve to nothing, every
 * address goes to a closed port on loopback, and any request the page makes is refused).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { SERVED_ICONS } from '../src/contract/service-identity.ts';
import { projectPath } from '../src/util/project-file.ts';

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ICON_DIR = projectPath('src/web/assets/icons');

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  // Nothing leaves the machine: the page needs no network at all.
  '--proxy-server=http://127.0.0.1:9',
  '--host-resolver-rules=MAP * ~NOTFOUND',
];

/** The PNGs to make: file name (the served path's last part) and edge in pixels. */
function rasterSizes(): { file: string; size: number }[] {
  return SERVED_ICONS.filter((icon) => icon.mimeType === 'image/png').map((icon) => {
    const match = /^(\d+)x(\d+)$/.exec(icon.sizes[0] ?? '');
    if (!match || match[1] !== match[2]) throw new Error(`${icon.path}: expected one square size, got ${icon.sizes.join(' ')}`);
    return { file: path.posix.basename(icon.path), size: Number(match[1]) };
  });
}

async function main(): Promise<void> {
  const svg = readFileSync(path.join(ICON_DIR, 'icon.svg'));
  const src = `data:image/svg+xml;base64,${svg.toString('base64')}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS });
  try {
    for (const { file, size } of rasterSizes()) {
      const context = await browser.newContext({ viewport: { width: size, height: size }, deviceScaleFactor: 1 });
      await context.route('**/*', (route) => route.abort('blockedbyclient'));
      const page = await context.newPage();
      await page.setContent(
        `<!doctype html><html><head><style>html,body{margin:0;background:transparent}img{display:block}</style></head>` +
          `<body><img src="${src}" width="${size}" height="${size}" alt=""></body></html>`,
      );
      await page.evaluate(() => document.images[0]!.decode());
      const png = await page.screenshot({ omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } });
      const out = path.join(ICON_DIR, file);
      writeFileSync(out, png);
      console.log(`${path.relative(process.cwd(), out)}: ${size}×${size}, ${png.length} bytes`);
      await context.close();
    }
  } finally {
    await browser.close();
  }
}

await main();
