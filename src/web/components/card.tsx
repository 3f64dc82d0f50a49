import type { ComponentChildren } from 'preact';

export interface CardProps {
  /** The card's heading (an h2). */
  title?: ComponentChildren;
  /** An anchor, so a page can link to the card. */
  id?: string;
  /** Extra classes after `card`. */
  class?: string;
  children?: ComponentChildren;
}

/** A bordered block grouping one thing: a listing on the dashboard, a step, a summary. */
export function Card({ title, id, class: extra, children }: CardProps) {
  return (
    <section class={extra ? `card ${extra}` : 'card'} id={id}>
      {title !== undefined && <h2 class="card-title">{title}</h2>}
      {children}
    </section>
  );
}
