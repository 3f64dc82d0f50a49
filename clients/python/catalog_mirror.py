#!/usr/bin/env python3
"""A keyed search and a mirror of the catalog, with the Python standard library only.

  python3 catalog_mirror.py search API_URL [QUERY]    print one page of results (JSON)
  python3 catalog_mirror.py mirror API_URL FILE       keep FILE (JSON: cursor and products by slug)
                                                      equal to the live catalog, until stopped

API_URL ends in /api/v1. CATALOG_KEY, when set, is sent as `Authorization: Bearer ...`.
What it does with refusals is what docs/api-reference.md#errors says: 429 and 503 are retried
after Retry-After (plus jitter), 500 with a growing jittered back-off; 410 CURSOR_EXPIRED takes a
new export; any other refusal stops it with the error's code.
"""
import json
import os
import random
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


class CatalogError(Exception):
    def __init__(self, status, code, message):
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code = status, code


def request(url, max_retries=5):
    headers = {"Accept": "application/json"}
    key = os.environ.get("CATALOG_KEY")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    for attempt in range(1, max_retries + 2):
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as res:
                return res.read().decode("utf-8"), res.headers
        except urllib.error.HTTPError as err:
            body = err.read().decode("utf-8", "replace")
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = {}
            if err.code in (429, 500, 503) and attempt <= max_retries:
                after = err.headers.get("Retry-After")
                base = float(after) if after and err.code != 500 else 0.5 * 2 ** (attempt - 1)
                time.sleep(base + random.random() * max(1.0, base / 4))
                continue
            raise CatalogError(err.code, parsed.get("code", f"HTTP_{err.code}"), parsed.get("message", "")) from None


def search(api, q=None, limit=20):
    query = {"limit": str(limit)}
    if q:
        query["q"] = q
    body, _ = request(f"{api}/search?{urllib.parse.urlencode(query)}")
    return json.loads(body)


def export(api):
    body, headers = request(f"{api}/export")
    products = {}
    for line in body.splitlines():
        if line:
            product = json.loads(line)
            products[product["slug"]] = product
    return headers["Catalog-Cursor"], products


def save(path, cursor, products):
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"cursor": cursor, "products": products}, f)
    os.replace(tmp, path)


def mirror(api, path, wait=25):
    try:
        with open(path, encoding="utf-8") as f:
            kept = json.load(f)
        cursor, products = kept["cursor"], kept["products"]
    except (OSError, ValueError, KeyError):
        cursor, products = None, {}
    while True:
        if cursor is None:
            cursor, products = export(api)
            save(path, cursor, products)
        query = urllib.parse.urlencode({"since": cursor, "wait": str(wait)})
        try:
            body, _ = request(f"{api}/changes?{query}")
        except CatalogError as err:
            if err.code == "CURSOR_EXPIRED":
                cursor = None
                continue
            raise
        page = json.loads(body)
        for change in page["changes"]:
            if change["op"] == "upsert":
                products[change["slug"]] = change["product"]
            else:
                products.pop(change["slug"], None)
        cursor = page["cursor"]
        save(path, cursor, products)


def main(argv):
    if len(argv) >= 2 and argv[0] == "search":
        print(json.dumps(search(argv[1], argv[2] if len(argv) > 2 else None)))
    elif len(argv) == 3 and argv[0] == "mirror":
        mirror(argv[1], argv[2], wait=int(os.environ.get("CATALOG_WAIT", "25")))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except CatalogError as err:
        print(f"refused: {err}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
