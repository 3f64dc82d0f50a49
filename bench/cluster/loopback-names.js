// Loaded with `node --import` into the catalog processes a cluster run starts (never into the
// service otherwise). The makers' sites of a run are served on loopback by the run itself under
// names ending in `.cluster.example`; this answers those names with 127.0.0.1, as a hosts file
// would, so that the service's own SSRF-guarded fetcher (with FETCH_ALLOW_LOOPBACK) reaches them
// and no DNS query leaves the machine. Every other name is resolved as usual.
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';

export const LOOPBACK_SUFFIX = '.cluster.example';

const lookup = dns.promises.lookup;
dns.promises.lookup = function lookupClusterNames(hostname, options) {
  if (typeof hostname === 'string' && hostname.toLowerCase().replace(/\.$/, '').endsWith(LOOPBACK_SUFFIX)) {
    const answer = { address: '127.0.0.1', family: 4 };
    return Promise.resolve(typeof options === 'object' && options !== null && options.all ? [answer] : answer);
  }
  return lookup.call(this, hostname, options);
};
// ES modules importing `lookup` from node:dns/promises see the same function.
syncBuiltinESMExports();
