import packageJson from '../../package.json' with { type: 'json' };

/**
 * The service's version: package.json's, read once when the process loads its modules (the
 * build inlines it). `catalog --version` prints it and `/healthz` reports it.
 */
export const SERVICE_VERSION: string = packageJson.version;
