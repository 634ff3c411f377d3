#!/usr/bin/env bash
# The compat suite's reference Redis: builds redis-server 8.6.3 from Debian's source package
# (the upstream tarball Debian ships as redis_8.6.3.orig.tar.gz, checked against the SHA-256
# its .dsc lists) and prints the path of the binary.
#
#   tools/build-redis-reference.sh          # prints e.g. ~/.cache/redis-reference/redis-8.6.3/src/redis-server
#   RESPLITE_REFERENCE_SERVER=$(tools/build-redis-reference.sh) make test
#
# The build is cached under $REDIS_REFERENCE_CACHE (default ~/.cache/redis-reference): a
# second run prints the path at once. It needs curl (or an already downloaded tarball in the
# cache), a C toolchain and make; about 5 minutes on 2 cores. No TLS, no system install.
# REDIS_REFERENCE_URL overrides where the tarball is downloaded from (a mirror, or
# snapshot.debian.org once Debian's pool has moved on); the checksum still applies.
set -euo pipefail

VERSION=8.6.3
SHA256=58d0d1eb49a1ea6c2179659707fec171b1e2e2b8d5157ed2ec59d1d66ad5a654
TARBALL=redis_${VERSION}.orig.tar.gz
URL=${REDIS_REFERENCE_URL:-https://deb.debian.org/debian/pool/main/r/redis/$TARBALL}
CACHE=${REDIS_REFERENCE_CACHE:-$HOME/.cache/redis-reference}
DIR=$CACHE/redis-$VERSION
EXE=$DIR/src/redis-server

if [ -x "$EXE" ]; then
  echo "$EXE"
  exit 0
fi

mkdir -p "$CACHE"
cd "$CACHE"
if ! echo "$SHA256  $TARBALL" | sha256sum --check --status 2>/dev/null; then
  echo "downloading $URL" >&2
  curl -fsSL --retry 3 -o "$TARBALL.part" "$URL"
  mv "$TARBALL.part" "$TARBALL"
  if ! echo "$SHA256  $TARBALL" | sha256sum --check --status; then
    echo "$TARBALL: SHA-256 differs from Debian's ($SHA256)" >&2
    exit 1
  fi
fi

# A partial tree from an interrupted build is built again from scratch.
rm -rf "$DIR"
tar xzf "$TARBALL"
LOG=$CACHE/build-$VERSION.log
echo "building Redis $VERSION in $DIR (log: $LOG)" >&2
if ! make -C "$DIR" -j"$(nproc)" BUILD_TLS=no >"$LOG" 2>&1; then
  tail -n 30 "$LOG" >&2
  exit 1
fi
echo "$EXE"
