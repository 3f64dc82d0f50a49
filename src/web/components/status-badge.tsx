/**
 * The states a listing shows to its maker and to reviewers. `changes_requested` is a pending
 * listing a reviewer sent back with feedback.
 */
export type ListingStatus = 'draft' | 'pending' | 'live' | 'rejected' | 'hidden' | 'changes_requested';

export const STATUS_LABELS: Readonly<Record<ListingStatus, string>> = {
  draft: 'Draft',
  pending: 'In review',
  live: 'Live',
  rejected: 'Rejected',
  hidden: 'Hidden',
  changes_requested: 'Changes requested',
};

/** The state as words, coloured by kind; the words alone carry the meaning. */
export function StatusBadge({ status }: { status: ListingStatus }) {
  return <span class={`badge badge-${status}`}>{STATUS_LABELS[status]}</span>;
}
