import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

/**
 * HTML documents, for every page the service serves: the directory's and the maker's pages
 * (src/web) and the API reference (docs-page.tsx). preact-render-to-string escapes every text
 * and attribute value.
 */
export const HTML_CONTENT_TYPE = 'text/html; charset=utf-8';

/** The whole document: the doctype, then the page's <html> element. */
export function renderPage(page: VNode): string {
  return '<!doctype html>' + renderToString(page);
}
