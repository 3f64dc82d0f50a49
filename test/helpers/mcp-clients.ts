import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * The official MCP clients, one per protocol era, behind one small interface so a test can run
 * its cases against both: the v1 SDK client (`@modelcontextprotocol/sdk`, the 2025-11-25
 * handshake) and the v2 client (`@modelcontextprotocol/client`) pinned to 2026-07-28 (no
 * handshake, `server/discover`, the `_meta` envelope and the request headers on every call).
 */
export type Era = 'legacy' | 'modern';
export const ERAS: readonly Era[] = ['legacy', 'modern'];

export interface McpTestClient {
  readonly era: Era;
  callTool(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  listTools(): Promise<{ tools: Array<Record<string, unknown> & { name: string; inputSchema: Record<string, unknown>; outputSchema?: Record<string, unknown> }> }>;
  listResourceTemplates(): Promise<{ resourceTemplates: Array<{ name: string; uriTemplate: string; mimeType?: string }> }>;
  listResources(): Promise<{ resources: Array<{ uri: string; name: string; title?: string }> }>;
  readResource(uri: string): Promise<{ contents: Array<{ uri: string; mimeType?: string; text?: string }> }>;
  complete(ref: { type: 'ref/resource'; uri: string } | { type: 'ref/prompt'; name: string }, argument: { name: string; value: string }): Promise<{ completion: { values: string[]; total?: number; hasMore?: boolean } }>;
  /** The server's identity and instructions as the client received them. */
  serverInfo(): Record<string, unknown> | undefined;
  close(): Promise<void>;
}

export interface ConnectOptions {
  headers?: Record<string, string>;
}

export async function connectMcp(era: Era, baseUrl: string | URL, opts: ConnectOptions = {}): Promise<McpTestClient> {
  const url = new URL('/api/mcp', baseUrl);
  const requestInit = opts.headers ? { headers: opts.headers } : undefined;
  if (era === 'legacy') {
    const client = new LegacyClient({ name: 'catalog-test', version: '1.0.0' });
    await client.connect(new LegacyTransport(url, requestInit ? { requestInit } : undefined));
    return {
      era,
      callTool: async (name, args) => (await client.callTool({ name, ...(args !== undefined && { arguments: args }) })) as CallToolResult,
      listTools: async () => (await client.listTools()) as Awaited<ReturnType<McpTestClient['listTools']>>,
      listResourceTemplates: async () => await client.listResourceTemplates(),
      listResources: async () => await client.listResources(),
      readResource: async (uri) => (await client.readResource({ uri })) as Awaited<ReturnType<McpTestClient['readResource']>>,
      complete: async (ref, argument) => await client.complete({ ref, argument }),
      serverInfo: () => client.getServerVersion() as Record<string, unknown> | undefined,
      close: () => client.close(),
    };
  }
  const client = new ModernClient({ name: 'catalog-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new ModernTransport(url, requestInit ? { requestInit } : undefined));
  return {
    era,
    callTool: async (name, args) => (await client.callTool({ name, ...(args !== undefined && { arguments: args }) })) as unknown as CallToolResult,
    listTools: async () => (await client.listTools()) as unknown as Awaited<ReturnType<McpTestClient['listTools']>>,
    listResourceTemplates: async () => await client.listResourceTemplates(),
    listResources: async () => await client.listResources(),
    readResource: async (uri) => (await client.readResource({ uri })) as Awaited<ReturnType<McpTestClient['readResource']>>,
    complete: async (ref, argument) => await client.complete({ ref, argument }),
    serverInfo: () => client.getServerVersion() as Record<string, unknown> | undefined,
    close: () => client.close(),
  };
}
