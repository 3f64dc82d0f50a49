import { describe, expect, it, vi } from 'vitest';
import { interactiveLaneStart, ProjectionLanes, rowsLeftForMainLane, type LaneOptions } from '../../../projector/lanes.ts';
import type { OutboxRow } from '../../../projector/outbox-reader.ts';

/** The lanes' own rules (docs/freshness.md): where the interactive lane reads from, what the main lane passes over, and how the two take turns. */

function row(txid: number, seq: number, bulk = false): OutboxRow {
  return { txid: String(txid), seq, bulk, listing_id: `listing-${seq}`, category_slug: null, created_at: new Date(0) };
}

describe('where the interactive lane reads from', () => {
  it('the main checkpoint when it knows no position of its own (a new leader)', () => {
    expect(interactiveLaneStart(undefined, { txid: '10', seq: 4 })).toEqual({ txid: '10', seq: 4 });
  });

  it('its own position when that is past the main checkpoint', () => {
    expect(interactiveLaneStart({ txid: '12', seq: 9 }, { txid: '10', seq: 4 })).toEqual({ txid: '12', seq: 9 });
    // Transaction ids compare as numbers, not as text.
    expect(interactiveLaneStart({ txid: '100', seq: 1 }, { txid: '99', seq: 7 })).toEqual({ txid: '100', seq: 1 });
  });

  it('the main checkpoint once the main lane has caught up with it or passed it', () => {
    expect(interactiveLaneStart({ txid: '10', seq: 4 }, { txid: '10', seq: 4 })).toEqual({ txid: '10', seq: 4 });
    expect(interactiveLaneStart({ txid: '10', seq: 4 }, { txid: '11', seq: 1 })).toEqual({ txid: '11', seq: 1 });
  });
});

describe('what the main lane projects of a batch', () => {
  const rows = [row(5, 1), row(5, 2, true), row(6, 3), row(7, 4, true), row(8, 5), row(9, 6)];

  it('every row while the interactive lane has projected nothing', () => {
    expect(rowsLeftForMainLane(rows, undefined)).toBe(rows);
  });

  it('bulk rows, and rows after the interactive lane’s position; not the rows it projected', () => {
    expect(rowsLeftForMainLane(rows, { txid: '7', seq: 4 }).map((r) => r.seq)).toEqual([2, 4, 5, 6]);
  });

  it('only the bulk rows when the interactive lane is past the whole batch', () => {
    expect(rowsLeftForMainLane(rows, { txid: '20', seq: 1 }).map((r) => r.seq)).toEqual([2, 4]);
  });
});

describe('how the lanes take turns', () => {
  /** Lanes whose batches answer from scripts: the main lane's sizes, the interactive lane's, whether rows are held back. */
  function scripted(script: { main: number[]; interactive: number[]; heldBack: boolean }, opts: { active?: () => boolean } = {}) {
    const lanes = new ProjectionLanes({ batchSize: 10, bulkBatchSize: 100, active: opts.active ?? (() => true) } as LaneOptions);
    const calls: string[] = [];
    vi.spyOn(lanes, 'mainBatch').mockImplementation(async () => {
      calls.push('main');
      return script.main.shift() ?? 0;
    });
    vi.spyOn(lanes, 'interactiveBatch').mockImplementation(async () => {
      calls.push('interactive');
      return script.interactive.shift() ?? 0;
    });
    vi.spyOn(lanes as unknown as { rowsHeldBack(): Promise<boolean> }, 'rowsHeldBack').mockImplementation(async () => {
      calls.push('held back?');
      return script.heldBack;
    });
    return { lanes, calls };
  }

  it('with nothing held back, the main lane alone projects everything', async () => {
    const { lanes, calls } = scripted({ main: [40], interactive: [], heldBack: false });
    expect(await lanes.run()).toEqual({ projected: 40, heldBack: false });
    expect(calls).toEqual(['main', 'held back?']);
  });

  it('between two full batches of a backlog, the interactive lane runs until it has nothing more', async () => {
    const { lanes, calls } = scripted({ main: [100, 100, 30], interactive: [10, 10, 3, 0], heldBack: false });
    expect(await lanes.run()).toEqual({ projected: 230, heldBack: false });
    expect(calls).toEqual(['main', 'interactive', 'interactive', 'interactive', 'main', 'interactive', 'main', 'held back?']);
  });

  it('when committed rows wait behind an open transaction, the interactive lane takes those it may', async () => {
    const { lanes, calls } = scripted({ main: [0], interactive: [10, 2], heldBack: true });
    expect(await lanes.run()).toEqual({ projected: 0, heldBack: true });
    expect(calls).toEqual(['main', 'held back?', 'interactive', 'interactive']);
  });

  it('stops between two batches once the process no longer leads (or stops)', async () => {
    let leading = true;
    const { lanes, calls } = scripted({ main: [100, 100], interactive: [], heldBack: false }, { active: () => leading });
    vi.mocked(lanes.mainBatch).mockImplementation(async () => {
      calls.push('main');
      leading = false;
      return 100;
    });
    expect(await lanes.run()).toBeUndefined();
    expect(calls).toEqual(['main']);
  });
});
