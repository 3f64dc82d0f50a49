/** What a part of the service logs to: pino's logger, or anything with its info, warn and error. */
export interface Log {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

export const silentLog: Log = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
