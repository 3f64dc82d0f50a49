import type { Pool } from '../src/db/pool.ts';
import type { SearchIndex } from '../src/search/port.ts';
import type { Log } from '../src/util/log.ts';
import { rebuildProjection, rebuildSearchIndex } from './reindex.ts';

export interface ProjectionOriginOptions {
  pool: () => Pool;
  /** The directory site's origin this process was given. */
  siteUrl: string;
  /** Keep the site url the projection was built with, when there is one (see ProjectorOptions). */
  keepRecordedSiteUrl: boolean;
  /** The external search index; undefined in embedded mode. */
  searchIndex: SearchIndex | undefined;
  batchSize: number;
  now: () => Date;
  log: Log;
}

/**
 * What the projection was built for, checked by each new leader before its first batch: the site
 * url its documents' links are built on, and the external index its search checkpoint
 * describes. Either one that differs from this process's is rebuilt first.
 */
export class ProjectionOrigin {
  /** The site url documents are built on. */
  siteUrl: string;
  /** Whether this process checked both since it last began to lead. */
  checked = false;

  constructor(private readonly opts: ProjectionOriginOptions) {
    this.siteUrl = opts.siteUrl;
  }

  /** Leadership was lost: the next time this process leads, it checks again. */
  forget(): void {
    this.checked = false;
  }

  /** The documents carry urls built on SITE_URL: when it changed, rebuild them all. Then the search target. */
  async check(): Promise<void> {
    const { log } = this.opts;
    const pool = this.opts.pool();
    const { rows } = await pool.query<{ site_url: string | null }>('SELECT site_url FROM projection.state');
    const recorded = rows[0]?.site_url ?? null;
    if (this.opts.keepRecordedSiteUrl && recorded !== null) this.siteUrl = recorded;
    if (recorded !== this.siteUrl) {
      log.info({ from: recorded, to: this.siteUrl }, 'site url differs from the one the projection was built with; rebuilding the projection');
      const { searchIndex, batchSize, now } = this.opts;
      const summary = await rebuildProjection({ pool, siteUrl: this.siteUrl, externalSearch: searchIndex !== undefined, batchSize, now, log });
      log.info(summary, 'projection rebuilt');
    }
    await this.checkSearchTarget();
    this.checked = true;
  }

  /**
   * The search checkpoint only means something for the index it was recorded with: an external
   * index it does not describe (first switch to Meilisearch, another index or server) is filled
   * from the projection first. Without an external index the record is cleared.
   */
  private async checkSearchTarget(): Promise<void> {
    const { searchIndex, log } = this.opts;
    const pool = this.opts.pool();
    const { rows } = await pool.query<{ target: string | null }>(`SELECT target FROM projection.checkpoints WHERE name = 'search'`);
    const recorded = rows[0]?.target ?? null;
    if (!searchIndex) {
      if (recorded !== null) await pool.query(`UPDATE projection.checkpoints SET target = NULL WHERE name = 'search'`);
      return;
    }
    if (recorded === searchIndex.target) return;
    log.info({ from: recorded, to: searchIndex.target }, 'the search index is not the one the search checkpoint describes; filling it from the projection');
    const documents = await rebuildSearchIndex(pool, searchIndex, { batchSize: this.opts.batchSize });
    log.info({ documents }, 'search index filled');
  }
}
