import type { ComponentChildren } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { ADJECTIVES, INTEGRATIONS, OUTCOMES, SECTION_TITLES, type DemoCategory } from './demo-vocabulary.ts';
import { article, capitalize } from './demo-words.ts';
import type { ListingLineInput } from '../catalog/listings/listing-input.ts';
import type { SeededRandom } from './seeded-random.ts';

type Pricing = NonNullable<ListingLineInput['pricing_model']>;

/**
 * A demo listing's description, as the HTML a maker would write. The random draws happen in a
 * fixed order before anything is rendered: the same seed must keep giving the same catalog.
 */
export function demoDescription(rnd: SeededRandom, c: DemoCategory, name: string, site: string, pricing: Pricing | null): string {
  const kind = rnd.pick(c.kinds);
  const adjective = rnd.pick(ADJECTIVES);
  const [first, second] = rnd.sample(c.actions, 2);
  const [one, two] = rnd.sample(INTEGRATIONS, 2);
  const audience = rnd.pick(c.audiences);
  const outcome = rnd.pick(OUTCOMES);
  const sectionTitle = rnd.pick(SECTION_TITLES);
  const features = rnd.sample(c.features, rnd.int(3, 5));
  const setupMinutes = rnd.pick(['five', 'ten', 'fifteen']);
  const price = pricingSentence(rnd, pricing);
  const links = rnd.chance(0.6);
  return renderToString(
    <>
      <p>
        {name} is {article(adjective)} {adjective} {kind} for {audience}. It helps you {first} and {second}, so {outcome}.
      </p>
      <h3>{sectionTitle}</h3>
      <ul>
        {features.map((f) => (
          <li>{capitalize(f)}</li>
        ))}
      </ul>
      <p>
        Setup takes about {setupMinutes} minutes, and {name} works with <strong>{one}</strong> and <strong>{two}</strong> out of the
        box. {price}
      </p>
      {links && (
        <p>
          Read the <a href={site + '/docs'}>getting started guide</a> or <a href={site + '/changelog'}>see what shipped recently</a>.
        </p>
      )}
    </>,
  );
}

function pricingSentence(rnd: SeededRandom, pricing: Pricing | null): ComponentChildren {
  switch (pricing) {
    case 'free':
      return (
        <>
          It is <em>completely free</em>, with no usage limits.
        </>
      );
    case 'freemium':
      return `The free plan covers solo use; paid plans add ${rnd.pick(['team workspaces', 'unlimited history', 'priority support', 'custom branding'])}.`;
    case 'paid':
      return `Plans start at $${rnd.pick([5, 9, 12, 19, 29, 49])} per month, with a 14-day trial.`;
    case 'open_source':
      return 'The source code is available under the MIT license, and a hosted version is offered for teams.';
    default:
      return 'Pricing is available on request.';
  }
}
