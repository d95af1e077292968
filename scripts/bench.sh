#!/usr/bin/env bash
# Measures groundwork on a generated pool next to its floors, as
# BENCHMARKS.md reports: import + checks on SQLite and Postgres against
# encoding/json alone and json + COPY alone, then page latency under 16
# concurrent clients (CPU per request of the server and of Postgres) and the
# server's peak RSS.
#
#   scripts/bench.sh [TRAJECTORIES]      (default 35000)
#
# Needs Postgres at $BENCH_PG (default postgres://postgres@127.0.0.1:5432);
# a scratch database is created and dropped.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-35000}
PG=${BENCH_PG:-postgres://postgres@127.0.0.1:5432}
work=$(mktemp -d)
db="gw_bench_$$"
cleanup() {
  [ -n "${server:-}" ] && kill "$server" 2>/dev/null || true
  psql "$PG/postgres?sslmode=disable" -qc "DROP DATABASE IF EXISTS $db" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== $(date -u +%F) on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(go version | cut -d' ' -f3)"
go build -o "$work/groundwork" .
go build -o "$work/bench" ./scripts/bench
"$work/groundwork" gen --trajectories "$N" --seed 1 --kind mixed > "$work/pool.jsonl"
echo "pool: $N trajectories, $(du -m "$work/pool.jsonl" | cut -f1) MB (groundwork gen --trajectories $N --seed 1 --kind mixed)"
psql "$PG/postgres?sslmode=disable" -qc "CREATE DATABASE $db"
PGDB="$PG/$db?sslmode=disable"

echo "== floors"
# The floors run under the collector setting the import runs under
# (web/batchgc.go: GOGC=400 for the batch commands), so the ratio compares
# the work, not two GC settings; the decoding floor gains about a third
# from it.
GOGC=400 "$work/bench" floor-json "$work/pool.jsonl"
GOGC=400 "$work/bench" floor-copy --db "$PGDB" "$work/pool.jsonl"

echo "== import + checks"
/usr/bin/time -f "  SQLite peak RSS %M KB" "$work/groundwork" import --data "$work/sqlite" --run pool "$work/pool.jsonl"
/usr/bin/time -f "  Postgres peak RSS %M KB" "$work/groundwork" import --db "$PGDB" --run pool "$work/pool.jsonl"
# The import leaves half a gigabyte of WAL whose checkpoint Postgres spreads
# over the next minutes: take it now, so the page latencies below are those
# of a settled database (the goal is latency once warm), not of one still
# writing back the import. (Measured without this, the review screen's p99
# was 232 ms while the timed checkpoint ran.)
psql "$PGDB" -qc CHECKPOINT

# serve DSN_FLAGS...: start a server, wait for it, set $server and $password.
serve() {
  "$work/groundwork" serve --addr 127.0.0.1:18181 --no-demo "$@" > "$work/serve.out" 2>"$work/serve.err" &
  server=$!
  for _ in $(seq 1 300); do grep -q "serving on" "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
  if ! grep -q "serving on" "$work/serve.out"; then
    echo "serve did not start:" >&2; cat "$work/serve.err" >&2; exit 1
  fi
  password=$(awk '$1 == "password" {print $2}' "$work/serve.out")
}

pages() {
  local mid=$((N / 2))
  local paths=(/runs "/runs/1?after=gen-retail-0$((N * 3 / 4))" "/runs/1?verdict=ambiguous&domain=airline" "/trajectories/$mid" "/trajectories/$((mid + 1))/decisions?from=0" /queue /coverage)
  "$work/bench" load --url http://127.0.0.1:18181 --user admin --password "$password" --pid "$server" --clients 16 --requests 2000 "${paths[@]}"
  # The review screen as sixteen annotators, each holding a claim of their own.
  "$work/bench" load --url http://127.0.0.1:18181 --user ann --users 16 --password "$password" --pid "$server" --clients 16 --requests 2000 /review
}

# annotators DB_FLAGS...: sixteen annotator accounts ann1..ann16 with $password.
annotators() {
  for i in $(seq 1 16); do
    echo "$password" | "$work/groundwork" user add "ann$i" --role annotator "$@" >/dev/null
  done
}

for where in sqlite postgres; do
  echo "== page latency, $where, 16 clients"
  if [ "$where" = sqlite ]; then
    serve --data "$work/sqlite"
    annotators --data "$work/sqlite"
  else
    # A fresh admin for the Postgres database: user add reads the password from stdin.
    echo "bench-password-$$" | "$work/groundwork" user add admin --role admin --db "$PGDB" >/dev/null
    serve --db "$PGDB"
    password="bench-password-$$" # serve printed none: the database had an account
    annotators --db "$PGDB"
  fi
  pages
  kill "$server"; wait "$server" 2>/dev/null || true; server=
done
