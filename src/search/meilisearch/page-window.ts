/**
 * Meilisearch gives exact totals only with page/hitsPerPage (offset/limit returns an estimate),
 * so an offset/limit slice is read as one page: the smallest page size at least `limit` whose
 * page holds the whole slice, and where the slice starts in it. Aligned slices (offset a
 * multiple of limit, as the API's pages are) are page `offset / limit + 1` of size `limit`.
 */
export function pageWindow(offset: number, limit: number): { page: number; hitsPerPage: number; skip: number } {
  if (limit <= 0) return { page: 1, hitsPerPage: 0, skip: 0 };
  const last = offset + limit - 1;
  let size = limit;
  while (Math.floor(offset / size) !== Math.floor(last / size)) size++;
  const page = Math.floor(offset / size) + 1;
  return { page, hitsPerPage: size, skip: offset - (page - 1) * size };
}
