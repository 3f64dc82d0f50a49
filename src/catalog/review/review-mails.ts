import type { MailMessage } from '../../auth/mailer.ts';
import { LISTING_PAGES, type ListingUrls } from '../listings/listing-urls.ts';
import { BADGE_MISSING_FEEDBACK } from './review-rules.ts';

/**
 * What a maker is told by e-mail when the directory decides about one of their listings: it
 * names the listing and links the page to open next (the public page once approved, otherwise
 * the listing's edit page, where the feedback is shown too). Featuring, hiding and restoring
 * by an admin send nothing.
 */
export type MailedDecision = 'approve' | 'reject' | 'request_changes' | 'badge_hide';

export function isMailedDecision(action: string): action is MailedDecision {
  return action === 'approve' || action === 'reject' || action === 'request_changes' || action === 'badge_hide';
}

export interface DecisionMailInput {
  readonly to: string;
  readonly listing: { readonly slug: string; readonly name: string };
  readonly feedback: string | null;
  readonly urls: ListingUrls;
}

export function decisionMail(decision: MailedDecision, input: DecisionMailInput): MailMessage {
  const { listing, feedback, urls } = input;
  const publicPage = `${urls.siteUrl}/products/${listing.slug}`;
  const editPage = `${urls.publicUrl}${LISTING_PAGES.edit(listing.slug)}`;
  const note = (intro: string) => (feedback ? [intro, '', feedback, ''] : []);
  switch (decision) {
    case 'approve':
      return {
        to: input.to,
        subject: `${listing.name} is live in the directory`,
        text: [
          `Your listing ${listing.name} was approved and is live now:`,
          '',
          publicPage,
          '',
          ...note("The reviewer's note:"),
          `You can change it at any time on its edit page: ${editPage}`,
        ].join('\n'),
      };
    case 'reject':
      return {
        to: input.to,
        subject: `${listing.name} was not accepted in the directory`,
        text: [
          `Your listing ${listing.name} was reviewed and rejected.`,
          '',
          ...note("The reviewer's reason:"),
          'A rejected listing cannot be edited, and its site cannot be submitted again as a new listing. You can see it on its page in your dashboard:',
          '',
          editPage,
        ].join('\n'),
      };
    case 'request_changes':
      return {
        to: input.to,
        subject: `Changes requested for ${listing.name}`,
        text: [
          `A reviewer asks for changes to your listing ${listing.name} before it goes live.`,
          '',
          ...note('What to change:'),
          'Edit the listing on its page; saving it sends it back to review:',
          '',
          editPage,
        ].join('\n'),
      };
    case 'badge_hide':
      return {
        to: input.to,
        subject: `${listing.name} is hidden: the directory badge is missing from your site`,
        text: [`Your listing ${listing.name} is hidden from the directory.`, '', BADGE_MISSING_FEEDBACK, '', editPage].join('\n'),
      };
  }
}
