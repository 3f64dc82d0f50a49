/** The logger the projector writes to: pino's, or anything with the same three methods. */
export interface ProjectorLog {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

export const silentLog: ProjectorLog = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
