#!/usr/bin/env bash
# Issue #31 probe: the server-side price of the parts of fence-guard's CLOCK_FLOORED lock pair on PostgreSQL,
# each variant a pgbench script of one acquire and one release (two round trips, as the lock client sends),
# 8 clients on keys of their own, synchronous_commit off for the session (PGOPTIONS) as in the ladder's row 1.
# Variants run in turn, round after round, so load that comes and goes falls on each alike.
# Usage: run.sh SECONDS ROUNDS [CLIENTS [VARIANTS]]   (own schema fg_probe31 in database test, dropped at the end)
# By default each statement is sent with its bound in one simple-protocol query (as fence-guard sends them in one
# round trip; the server parses and plans each). MODE=prepared sends the statements alone, prepared (planned once,
# as pgjdbc does after five runs), to price the statements' execution: the bound cannot ride along there.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-10}; rounds=${2:-3}; clients=${3:-8}; variants=${4:-[0-9]_*.sql}; mode=${MODE:-simple}
work=$(mktemp -d)
psql() { command psql -h 127.0.0.1 -U postgres -d test -qX -v ON_ERROR_STOP=1 "$@"; }
psql -c "DROP SCHEMA IF EXISTS fg_probe31 CASCADE" -c "CREATE SCHEMA fg_probe31" \
  -c "CREATE TABLE fg_probe31.hand (k TEXT PRIMARY KEY, fence BIGINT NOT NULL, owner TEXT, until TIMESTAMPTZ)"
for t in fg4 fg5 fg6 fg7 fg8; do
  psql -c "CREATE TABLE fg_probe31.$t (lock_key TEXT NOT NULL PRIMARY KEY,
    fence BIGINT NOT NULL CHECK (fence BETWEEN 1 AND 900000000000000), lock_id TEXT NULL, expires_at TIMESTAMPTZ NULL,
    acquired_at TIMESTAMPTZ NULL, CHECK ((lock_id IS NULL) = (expires_at IS NULL)))"
done
trap 'psql -c "DROP SCHEMA IF EXISTS fg_probe31 CASCADE"; rm -rf "$work"' EXIT
for f in $variants; do
  if [ "$mode" = prepared ]; then sed 's/^SELECT set_config.*\\; //' "$f" > "$work/$f"; else cp "$f" "$work/$f"; fi
done
for r in $(seq 1 "$rounds"); do
  for f in $variants; do
    tps=$(PGOPTIONS='-c synchronous_commit=off' pgbench -h 127.0.0.1 -U postgres -n -M "$mode" -c "$clients" \
      -j "$(( clients < 2 ? 1 : 2 ))" -T "$secs" -f "$work/$f" test 2>&1 | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
    printf 'round %d  %-26s %10s pairs/s  load %s\n' "$r" "${f%.sql}" "$tps" "$(cut -d' ' -f1 /proc/loadavg)"
  done
done
