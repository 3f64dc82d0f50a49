import { renderToString } from 'preact-render-to-string';
import { describe, expect, it } from 'vitest';
import type { UsageDay } from '../../../../src/auth/consumer-keys/consumer-keys.ts';
import { UsageChart, scaleTop } from '../../../../src/web/admin/usage-chart.tsx';
import { parsePage } from '../../../helpers/html.ts';

const day = (date: string, counts: Partial<UsageDay> = {}): UsageDay => ({ date, search: 0, other: 0, export: 0, changes: 0, refused: 0, ...counts });

describe('scaleTop', () => {
  it('is 1, 2 or 5 times a power of ten, at least the busiest day', () => {
    expect([0, 1, 3, 5, 7, 10, 11, 50, 51, 199, 200, 201, 12_345].map(scaleTop)).toEqual([1, 1, 5, 5, 10, 10, 20, 50, 100, 200, 200, 500, 20_000]);
  });
});

describe('UsageChart', () => {
  it('draws each day answered below refused, scaled to the top, as one image named and described', () => {
    const days = [day('2026-11-01', { search: 60, other: 20 }), day('2026-11-02'), day('2026-11-03', { export: 1, refused: 20 })];
    const html = renderToString(<UsageChart name="acme" days={days} />);
    expect(html).toContain(' viewBox="0 0 30 100" preserveAspectRatio="none"');
    expect(html).not.toMatch(/style=|<script/);
    const page = parsePage(html);
    const svg = page.all('svg')[0]!;
    expect(page.attr(svg, 'role')).toBe('img');
    expect(page.text(page.byId('usage-acme-title')!)).toBe('Requests per day to the key acme, 2026-11-01 to 2026-11-03');
    expect(page.text(page.byId('usage-acme-desc')!)).toBe('81 requests answered and 20 refused from 2026-11-01 to 2026-11-03 (UTC); the busiest day was 2026-11-01 with 80.');
    // top of the scale 100: 80 answered; on the third day one answered (at least one unit) under 20 refused
    const bars = page.all('rect', svg).map((r) => [page.attr(r, 'class'), page.attr(r, 'x'), page.attr(r, 'y'), page.attr(r, 'height')]);
    expect(bars).toEqual([
      ['usage-bar-answered', '1.5', '20', '80'],
      ['usage-bar-answered', '21.5', '99', '1'],
      ['usage-bar-refused', '21.5', '79', '20'],
    ]);
    // the numbers, day by day, for readers of text
    const rows = page.all('tr').slice(1).map((tr) => [...page.all('th', tr), ...page.all('td', tr)].map((cell) => page.text(cell)));
    expect(rows).toEqual([
      ['2026-11-01', '60', '20', '0', '0', '0'],
      ['2026-11-02', '0', '0', '0', '0', '0'],
      ['2026-11-03', '0', '0', '1', '0', '20'],
    ]);
  });

  it('says so when nothing was asked', () => {
    const page = parsePage(renderToString(<UsageChart name="idle" days={[day('2026-11-01'), day('2026-11-02')]} />));
    expect(page.all('rect')).toEqual([]);
    expect(page.text(page.byId('usage-idle-desc')!)).toBe('No requests from 2026-11-01 to 2026-11-02 (UTC).');
  });
});
