import type { ComponentChildren } from 'preact';

type NoticeKind = 'info' | 'success' | 'error';

/** A flash message shown once above a page's content ("Listing saved", "Link expired"). */
export interface NoticeMessage {
  kind: NoticeKind;
  message: ComponentChildren;
}

/**
 * Errors are announced at once by screen readers (role="alert"); info and success wait their
 * turn (role="status"), since they confirm what the visitor just did.
 */
export function Notice({ kind, message }: NoticeMessage) {
  return (
    <div class={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      <p>{message}</p>
    </div>
  );
}
