import { describe, expect, it } from 'vitest';
import { AppliedVersions, type AppliedVersion } from '../../../src/read/mirror-applied.ts';

/** After a version is applied, the mirror's listeners hear of it, in the order they came, until they leave. */

const version = (to: number, over: Partial<AppliedVersion> = {}): AppliedVersion => ({ from: to - 1, to, full: false, delivery: undefined, traceparent: null, began: 0, ...over });

describe('applied versions', () => {
  it('are announced to every listener in the order they came, with the delivery when there is one', () => {
    const applied = new AppliedVersions();
    const heard: string[] = [];
    applied.subscribe((v, d) => heard.push(`a ${v} ${d ? d.applied : '-'}`));
    applied.subscribe((v) => heard.push(`b ${v}`));
    applied.announce(version(3, { delivery: { projected: 0.1, applied: 0.2 } }));
    applied.announce(version(9, { full: true }));
    expect(heard).toEqual(['a 3 0.2', 'b 3', 'a 9 -', 'b 9']);
  });

  it('a listener that left hears nothing more', () => {
    const applied = new AppliedVersions();
    const heard: number[] = [];
    const leave = applied.subscribe((v) => heard.push(v));
    applied.announce(version(1));
    leave();
    applied.announce(version(2));
    expect(heard).toEqual([1]);
  });

  it('a listener that throws stops the ones after it, and the announcement fails', () => {
    const applied = new AppliedVersions();
    const heard: number[] = [];
    applied.subscribe(() => {
      throw new Error('listener failed');
    });
    applied.subscribe((v) => heard.push(v));
    expect(() => applied.announce(version(1))).toThrow('listener failed');
    expect(heard).toEqual([]);
  });
});
