import type { UsageDay } from '../../auth/consumer-keys/consumer-keys.ts';

/**
 * A consumer key's requests per UTC day as a bar chart: server-rendered SVG, no script. Each
 * day's bar stacks the requests answered (searches, other calls, exports, change-feed requests)
 * and above them the requests refused (429). The SVG is one image to assistive technology
 * (role="img", named by its title and described by its totals); the numbers themselves are in
 * the table under it, in a <details> that opens without script and reads without CSS.
 *
 * Colours come from the stylesheet's classes (the pages' CSP allows no inline style); the
 * presentation attributes beside them are the fallback when the stylesheet is not applied.
 */
export interface UsageChartProps {
  /** The key's name, used in the chart's title and its element ids. */
  name: string;
  /** Oldest first, every day listed (zeros where nothing was counted). */
  days: readonly UsageDay[];
}

/** Each day's answered requests, every family together. */
function answeredOf(day: UsageDay): number {
  return day.search + day.other + day.export + day.changes;
}

/** The top of the chart's scale: 1, 2 or 5 times a power of ten, at least the busiest day. */
export function scaleTop(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

const n = (v: number) => v.toLocaleString('en-US');

/** The chart's geometry in its own units (the viewBox); the stylesheet stretches it to the column. */
const SLOT = 10;
const BAR = 7;
const HEIGHT = 100;

const dayLabel = (date: string) => {
  const d = new Date(`${date}T00:00:00Z`);
  return d.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
};

export function UsageChart({ name, days }: UsageChartProps) {
  const id = `usage-${name}`;
  const totals = days.reduce((t, d) => ({ answered: t.answered + answeredOf(d), refused: t.refused + d.refused }), { answered: 0, refused: 0 });
  const busiest = days.reduce<UsageDay | undefined>((best, d) => (best === undefined || answeredOf(d) + d.refused > answeredOf(best) + best.refused ? d : best), undefined);
  const busiestTotal = busiest ? answeredOf(busiest) + busiest.refused : 0;
  const top = scaleTop(busiestTotal);
  const first = days[0]?.date ?? '';
  const last = days.at(-1)?.date ?? '';
  const width = Math.max(1, days.length) * SLOT;
  /** A bar's height in chart units: a day with any request shows at least one unit. */
  const heightOf = (v: number) => (v <= 0 ? 0 : Math.max(1, Math.round((v / top) * HEIGHT * 10) / 10));
  const summary =
    totals.answered + totals.refused === 0
      ? `No requests from ${first} to ${last} (UTC).`
      : `${n(totals.answered)} requests answered and ${n(totals.refused)} refused from ${first} to ${last} (UTC); the busiest day was ${busiest!.date} with ${n(busiestTotal)}.`;
  return (
    <figure class="usage-chart" id={id}>
      <figcaption>Requests per day, last {days.length} days (UTC)</figcaption>
      <div class="usage-chart-frame">
        <div class="usage-chart-scale" aria-hidden="true">
          <span>{n(top)}</span>
          <span>0</span>
        </div>
        <svg
          xmlns="http://www.w3.org/2000/svg"
          role="img"
          aria-labelledby={`${id}-title ${id}-desc`}
          viewBox={`0 0 ${width} ${HEIGHT}`}
          preserveAspectRatio="none"
          focusable="false"
        >
          <title id={`${id}-title`}>{`Requests per day to the key ${name}, ${first} to ${last}`}</title>
          <desc id={`${id}-desc`}>{summary}</desc>
          <line class="usage-grid" x1="0" y1="0.5" x2={width} y2="0.5" stroke="#d9dde3" vector-effect="non-scaling-stroke" />
          <line class="usage-grid" x1="0" y1={HEIGHT / 2} x2={width} y2={HEIGHT / 2} stroke="#d9dde3" vector-effect="non-scaling-stroke" />
          {days.map((d, i) => {
            const answered = answeredOf(d);
            const a = heightOf(answered);
            const r = heightOf(d.refused);
            const x = i * SLOT + (SLOT - BAR) / 2;
            return (
              <g class="usage-day">
                <title>{`${d.date}: ${n(answered)} answered, ${n(d.refused)} refused`}</title>
                {a > 0 && <rect class="usage-bar-answered" x={x} y={HEIGHT - a} width={BAR} height={a} fill="#0b57d0" />}
                {r > 0 && <rect class="usage-bar-refused" x={x} y={Math.max(0, HEIGHT - a - r)} width={BAR} height={r} fill="#b3261e" />}
              </g>
            );
          })}
          <line class="usage-axis" x1="0" y1={HEIGHT - 0.5} x2={width} y2={HEIGHT - 0.5} stroke="#5d6673" vector-effect="non-scaling-stroke" />
        </svg>
        <div class="usage-chart-days" aria-hidden="true">
          <span>{first && dayLabel(first)}</span>
          <span>{last && dayLabel(last)}</span>
        </div>
      </div>
      <ul class="chart-legend">
        <li>
          <span class="chart-swatch chart-swatch-answered" aria-hidden="true" />
          Answered: {n(totals.answered)}
        </li>
        <li>
          <span class="chart-swatch chart-swatch-refused" aria-hidden="true" />
          Refused (429): {n(totals.refused)}
        </li>
      </ul>
      <details class="usage-numbers">
        <summary>The numbers, day by day</summary>
        <div class="table-wrap">
          <table class="numbers">
            <caption class="visually-hidden">{`Requests per day to the key ${name} (UTC)`}</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">Searches</th>
                <th scope="col">Other</th>
                <th scope="col">Exports</th>
                <th scope="col">Change feed</th>
                <th scope="col">Refused</th>
              </tr>
            </thead>
            <tbody>
              {days.map((d) => (
                <tr>
                  <th scope="row">{d.date}</th>
                  <td>{n(d.search)}</td>
                  <td>{n(d.other)}</td>
                  <td>{n(d.export)}</td>
                  <td>{n(d.changes)}</td>
                  <td>{n(d.refused)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
