/**
 * A reason a process cannot start that the operator can fix (a port taken, a data folder out of
 * reach): its message is one line naming the cause and the fix, printed as it is by the
 * `catalog` command (src/cli/start-failure.ts), never with a stack.
 */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}
