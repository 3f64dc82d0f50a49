export declare const ROOT: string;
export declare const DIST_CLI: string;
export declare const STAMP: string;
export declare function fingerprint(kind: 'stat' | 'content'): string;
export declare function sourcesPresent(): boolean;
export declare function buildState(): 'current' | 'missing' | 'stale';
