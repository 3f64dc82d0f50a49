import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import { parseArgs } from 'node:util';
import ipaddr from 'ipaddr.js';
import { loadConfig } from '../config/config.ts';
import { SERVICE_DESCRIPTION, SERVICE_NAME, SERVICE_TITLE, serviceIcons, type McpIcon } from '../contract/service-identity.ts';
import { SERVICE_VERSION } from '../util/version.ts';

/**
 * `catalog mcp server-json`: the MCP server's entry for an MCP registry
 * (github.com/modelcontextprotocol/registry), a `server.json` of the schema dated 2025-12-11
 * (kept beside the repository: test/helpers/server-json-schema.ts), built from the configuration alone: no database, no network.
 * docs/mcp.md, "Publishing to the MCP registry", says how to publish it.
 */

export const SERVER_SCHEMA_URL = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

/**
 * The registry's rule for a server name (its validators: a namespace and a name, each starting and
 * ending with a letter or digit) and the schema's bounds on its length.
 */
export const REGISTRY_NAME = /^[a-zA-Z0-9][a-zA-Z0-9.-]*[a-zA-Z0-9]\/[a-zA-Z0-9][a-zA-Z0-9._-]*[a-zA-Z0-9]$/;
export const REGISTRY_NAME_MIN = 3;
export const REGISTRY_NAME_MAX = 200;
const NAMESPACE = /^[a-zA-Z0-9][a-zA-Z0-9.-]*[a-zA-Z0-9]$/;
/** The schema's bound on an icon's `src`. */
const ICON_SRC_MAX = 255;

/** What a registry needs of a server name, or undefined when it has it. */
export function registryNameProblem(name: string): string | undefined {
  if (name.length < REGISTRY_NAME_MIN || name.length > REGISTRY_NAME_MAX) return `must be ${REGISTRY_NAME_MIN} to ${REGISTRY_NAME_MAX} characters`;
  if (!REGISTRY_NAME.test(name)) {
    return 'must be NAMESPACE/NAME: a namespace of letters, digits, dots and hyphens and a name of letters, digits, dots, underscores and hyphens, each starting and ending with a letter or digit';
  }
  return undefined;
}

export interface DerivedName {
  name: string;
  /** Why a registry will not take the name as the host's own, one line each. */
  warnings: string[];
}

const UNVERIFIABLE = "a registry accepts only a domain name it can verify; set PUBLIC_URL to the deployment's public https address";

/**
 * Why a registry will not accept the deployment at `publicUrl` as it is, one line each: a host it
 * cannot verify (loopback, an IP address, a name of one label) and an address that is not https.
 */
export function publicUrlWarnings(publicUrl: string): string[] {
  const url = new URL(publicUrl);
  const host = url.hostname.replace(/\.$/, '');
  const warnings: string[] = [];
  const address = host.startsWith('[') ? host.slice(1, -1) : net.isIPv4(host) ? host : undefined;
  if (address !== undefined) {
    const loopback = ipaddr.parse(address).range() === 'loopback';
    warnings.push(`PUBLIC_URL's host ${host} is ${loopback ? 'a loopback address' : 'an IP address'}: ${UNVERIFIABLE}`);
  } else if (host === 'localhost' || host.endsWith('.localhost')) {
    warnings.push(`PUBLIC_URL's host ${host} is a loopback name: ${UNVERIFIABLE}`);
  } else if (!host.includes('.')) {
    warnings.push(`PUBLIC_URL's host ${host} is not a public domain name: ${UNVERIFIABLE}`);
  }
  if (url.protocol !== 'https:') warnings.push('PUBLIC_URL is not https: a registry accepts only https addresses for websiteUrl, icons and remotes');
  return warnings;
}

/**
 * The registry name of the deployment at `publicUrl`: the reverse-DNS form of its host, then
 * `/catalog` (catalog.example.com → com.example.catalog/catalog). That is the namespace the
 * registry grants to whoever proves the host, by a DNS TXT record on it (which also covers its
 * subdomains) or by https://HOST/.well-known/mcp-registry-auth; the port plays no part.
 *
 * Every host gives a valid name: characters a name cannot hold become hyphens, an IPv6 address is
 * written out with hyphens (::1 → 0-0-0-0-0-0-0-1), and a name past 200 characters drops the
 * host's leftmost labels, which names a parent domain (a DNS proof on it covers the host). A host
 * the registry cannot verify still gives a valid name (publicUrlWarnings says why it is refused).
 */
export function deriveRegistryName(publicUrl: string): DerivedName {
  const host = new URL(publicUrl).hostname;
  const warnings: string[] = [];
  const labels = host.startsWith('[')
    ? [ipaddr.parse(host.slice(1, -1)).toNormalizedString().replace(/:/g, '-')]
    : host
        .replace(/\.$/, '')
        .split('.')
        .reverse()
        .map((label) => label.replace(/[^a-zA-Z0-9-]+/g, '-').replace(/^-+|-+$/g, ''))
        .filter((label) => label !== '');
  const suffix = `/${SERVICE_NAME}`;
  const max = REGISTRY_NAME_MAX - suffix.length;
  if (labels.join('.').length > max) {
    while (labels.length > 1 && labels.join('.').length > max) labels.pop();
    warnings.push(`PUBLIC_URL's host makes a name longer than ${REGISTRY_NAME_MAX} characters: the name is that of a parent domain; prove that domain by DNS, or choose a name with --name`);
  }
  let namespace = labels.join('.').slice(0, max).replace(/[^a-zA-Z0-9]+$/, '');
  if (!NAMESPACE.test(namespace)) namespace = namespace === '' ? 'host' : `host-${namespace}`;
  return { name: `${namespace}${suffix}`, warnings };
}

/** The document: the fields of the 2025-12-11 schema that the deployment fills. */
export interface ServerJson {
  $schema: string;
  name: string;
  title: string;
  description: string;
  version: string;
  websiteUrl: string;
  icons: McpIcon[];
  remotes: { type: 'streamable-http'; url: string }[];
}

export function buildServerJson(publicUrl: string, name: string): { document: ServerJson; warnings: string[] } {
  const base = publicUrl.replace(/\/+$/, '');
  const warnings: string[] = [];
  const icons = serviceIcons(base).filter((icon) => icon.src.length <= ICON_SRC_MAX);
  if (icons.length < serviceIcons(base).length) warnings.push(`icons whose address is longer than ${ICON_SRC_MAX} characters (the schema's limit) are left out`);
  return {
    document: {
      $schema: SERVER_SCHEMA_URL,
      name,
      title: SERVICE_TITLE,
      description: SERVICE_DESCRIPTION,
      version: SERVICE_VERSION,
      websiteUrl: base,
      icons,
      remotes: [{ type: 'streamable-http', url: `${base}/api/mcp` }],
    },
    warnings,
  };
}

const HELP = `usage: catalog mcp server-json [--name NAME] [--out FILE]

The MCP server's entry for an MCP registry (github.com/modelcontextprotocol/registry):
server-json prints a server.json (schema of 2025-12-11) for this deployment, from PUBLIC_URL:

  name          PUBLIC_URL's host in reverse-DNS form, then /${SERVICE_NAME}: catalog.example.com
                gives com.example.catalog/${SERVICE_NAME}, the namespace the registry lets publish
                whoever proves the domain (a DNS TXT record, or a file at
                https://HOST/.well-known/mcp-registry-auth)
  title, description  the service's own
  version       the service's version (catalog --version)
  websiteUrl    PUBLIC_URL
  icons         PUBLIC_URL/icon.svg and /icons/icon-{48,192,512}.png
  remotes       streamable-http at PUBLIC_URL/api/mcp

options:
  --name NAME   the registry name to use instead, NAMESPACE/NAME (e.g. com.example/catalog)
  --out FILE    write the document to FILE rather than to stdout

A host a registry cannot verify (loopback, an IP address) and an http PUBLIC_URL still give a
valid document, with a warning on stderr. Publishing it with mcp-publisher, and when to publish
again: docs/mcp.md, "Publishing to the MCP registry".`;

/** One line about bad options: what is wrong, naming the option. */
function optionProblem(err: unknown): string {
  const e = err as Error & { code?: string };
  const quoted = /'([^']+)'/.exec(e.message)?.[1];
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${quoted ?? e.message}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return `option ${quoted?.split(' ')[0] ?? e.message} needs a value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${quoted ?? e.message}`;
    default:
      return e.message;
  }
}

function writeProblem(e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case 'ENOENT':
      return 'its folder does not exist';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a folder';
    default:
      return e.message;
  }
}

async function serverJsonCommand(args: string[]): Promise<number> {
  const fail = (line: string) => {
    console.error(`catalog mcp server-json: ${line} (catalog mcp --help)`);
    return 2;
  };
  let values: { name?: string | undefined; out?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({ args, options: { name: { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true }));
  } catch (err) {
    return fail(optionProblem(err));
  }
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (values.name !== undefined) {
    const problem = registryNameProblem(values.name);
    if (problem) return fail(`--name ${JSON.stringify(values.name)} ${problem}`);
  }
  if (values.out !== undefined && values.out.trim() === '') return fail('--out needs a file name');

  const config = loadConfig();
  const warnings: string[] = [];
  if (!process.env.PUBLIC_URL) warnings.push(`PUBLIC_URL is not set: the document names ${config.publicUrl}, the address of one local process`);
  warnings.push(...publicUrlWarnings(config.publicUrl));
  let name = values.name;
  if (name === undefined) {
    const derived = deriveRegistryName(config.publicUrl);
    name = derived.name;
    warnings.push(...derived.warnings);
  }
  const built = buildServerJson(config.publicUrl, name);
  warnings.push(...built.warnings);
  const text = `${JSON.stringify(built.document, null, 2)}\n`;

  for (const warning of warnings) console.error(`catalog mcp server-json: warning: ${warning}`);
  if (values.out === undefined) {
    process.stdout.write(text);
    return 0;
  }
  try {
    await writeFile(values.out, text);
  } catch (err) {
    console.error(`catalog mcp server-json: --out ${values.out}: cannot write it: ${writeProblem(err as NodeJS.ErrnoException)}`);
    return 1;
  }
  console.error(`catalog mcp server-json: wrote ${values.out} (${built.document.name} ${built.document.version})`);
  return 0;
}

const USAGE = `usage: catalog mcp server-json [--name NAME] [--out FILE]

The MCP server at PUBLIC_URL/api/mcp as others list it.

commands:
  server-json   print the server.json an MCP registry publishes (catalog mcp server-json --help)`;

export default async function mcpCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h' || sub === 'help') {
    console.log(`${USAGE}\n\n${HELP}`);
    return 0;
  }
  if (sub === 'server-json') return serverJsonCommand(rest);
  console.error(sub === undefined ? USAGE : `catalog mcp: unknown command '${sub}' (catalog mcp --help)`);
  return 2;
}
