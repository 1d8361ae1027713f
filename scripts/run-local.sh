#!/bin/sh
# `make run`: evictd in the foreground, dry-run, on this machine's real cgroup tree with the
# shipped configuration, until Ctrl-C.  Without root it cannot read every pod descriptor or
# cgroup, so it says so and runs anyway.
set -eu
evictd=$1
[ "$(id -u)" -eq 0 ] || echo "make run: not root; evictd will see only what this user can read" >&2
echo "make run: $evictd --config conf/evictd.conf --dry-run (Ctrl-C to stop)" >&2
exec "$evictd" --config conf/evictd.conf --dry-run
