import type { Task } from 'meilisearch';

/**
 * A write the Meilisearch index did not confirm: a task that failed or was canceled, or a
 * request that did not reach it. `cause` carries the task's error or the client's error.
 */
export class SearchIndexWriteError extends Error {
  readonly taskUid: number | undefined;
  readonly code: string | undefined;

  constructor(message: string, options: { cause?: unknown; taskUid?: number; code?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SearchIndexWriteError';
    this.taskUid = options.taskUid;
    this.code = options.code;
  }

  static fromTask(what: string, task: Task): SearchIndexWriteError {
    const reason = task.error ? `${task.error.code}: ${task.error.message}` : `task ${task.status}`;
    return new SearchIndexWriteError(`Meilisearch could not ${what} (task ${task.uid}, ${reason})`, {
      cause: task.error ?? undefined,
      taskUid: task.uid,
      code: task.error?.code,
    });
  }
}
