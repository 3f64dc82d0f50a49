import { open, readdir, stat, type FileHandle } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';

/**
 * This host's copy of a projection snapshot, `<dir>/<snapshot id>.snapshot`, read whole; and
 * that read started as the process starts. Only Node's own modules here: a process imports this
 * before its heavier modules, so the read (kernel work on libuv's threads) runs while the main
 * thread compiles and evaluates them, instead of after.
 */
export const SNAPSHOT_FILE_SUFFIX = '.snapshot';

/** A buffer of its own memory (never a slice of Node's shared pool): snapshot views need an aligned start. */
export function snapshotBuffer(size: number): Buffer {
  return Buffer.allocUnsafeSlow(size);
}

/**
 * A whole file of `size` bytes, read in a few parts at once on libuv's threads: most of the
 * time goes to the kernel giving the new buffer its pages (about 3 ms per MB on a 2-core
 * machine), which threads share out over the cores. Undefined when the file is missing, is not
 * that size, or ends early.
 */
export async function readWholeFile(file: string, size: number): Promise<Buffer | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch {
    return undefined;
  }
  try {
    if ((await handle.stat()).size !== size) return undefined;
    const out = snapshotBuffer(size);
    const parts = Math.max(2, Math.min(4, availableParallelism()));
    const step = Math.ceil(size / parts);
    const complete = await Promise.all(
      Array.from({ length: parts }, async (_, i) => {
        const end = Math.min(size, (i + 1) * step);
        let at = i * step;
        while (at < end) {
          const { bytesRead } = await handle.read(out, at, Math.min(end - at, 1 << 30), at);
          if (bytesRead === 0) return false;
          at += bytesRead;
        }
        return true;
      }),
    );
    return complete.every(Boolean) ? out : undefined;
  } finally {
    await handle.close();
  }
}

/** A read of the newest local copy, begun before the database said which snapshot is current. */
export interface SnapshotPrefetch {
  readonly id: string;
  readonly size: number;
  /** Resolves when the read has ended, whether or not it read the whole file. */
  readonly done: Promise<void>;
  /**
   * The file's bytes (undefined when the read failed), handed out once: every later call gets
   * undefined. Whoever still holds this object (the process's start-up, the options it passed
   * on) then holds no bytes: a snapshot the mirror has moved past is not kept alive by it, nor
   * one it never used. Never rejects.
   */
  take(): Promise<Buffer | undefined>;
}

/**
 * Starts reading the newest `*.snapshot` file in `dir` (by modification time). The caller uses
 * the bytes only if the database then names that id, with that size, as the snapshot to load.
 * Resolves to undefined when the folder holds none; never rejects.
 */
export async function prefetchSnapshot(dir: string): Promise<SnapshotPrefetch | undefined> {
  try {
    let newest: { id: string; size: number; file: string; mtimeMs: number } | undefined;
    for (const name of await readdir(dir)) {
      if (!name.endsWith(SNAPSHOT_FILE_SUFFIX)) continue;
      const file = path.join(dir, name);
      const s = await stat(file).catch(() => undefined);
      if (!s?.isFile() || (newest && s.mtimeMs <= newest.mtimeMs)) continue;
      newest = { id: name.slice(0, -SNAPSHOT_FILE_SUFFIX.length), size: s.size, file, mtimeMs: s.mtimeMs };
    }
    if (!newest) return undefined;
    let bytes: Promise<Buffer | undefined> | undefined = readWholeFile(newest.file, newest.size).catch(() => undefined);
    return {
      id: newest.id,
      size: newest.size,
      done: bytes.then(() => undefined),
      take() {
        const taken = bytes ?? Promise.resolve(undefined);
        bytes = undefined;
        return taken;
      },
    };
  } catch {
    return undefined;
  }
}
