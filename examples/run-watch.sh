#!/bin/sh
# Runs watch.tape headless as a watcher (--read-only) on demo seed 1 and,
# once the tape waits for it, denies the proposal the tape watches from a
# second process: the watcher sees the decision appear live.
#
#   sh examples/run-watch.sh [DIR]
#
# DIR keeps the database, the event log and the screenshots (default: a
# temporary directory, removed at the end). APPROVE_TUI names the binary
# (default: approve-tui on PATH). Exit status: the headless run's.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${APPROVE_TUI:-approve-tui}
if ! command -v "$bin" >/dev/null 2>&1; then
  echo "$0: $bin is not on PATH: install it with 'go install ./cmd/approve-tui' and add \$(go env GOPATH)/bin to PATH (README, Install), or name the binary in APPROVE_TUI" >&2
  exit 127
fi
if [ $# -gt 0 ]; then dir=$1; else dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT; fi
db=$dir/state.db
events=$dir/events.jsonl
rm -f "$db" "$db-wal" "$db-shm" "$events"

"$bin" headless --read-only --script "$here/watch.tape" --demo-seed 1 --db "$db" \
  --events "$events" --screenshot-dir "$dir" --typing-speed 20ms --plain &
pid=$!

# The tape's last Wait has started: decide from another process.
until grep -q '"outcome":"started","detail":"/u7LxLGT73E5T was denied elsewhere' "$events" 2>/dev/null; do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
"$bin" deny u7LxLGT73E5T --db "$db" --reason "change freeze" >/dev/null || true
wait "$pid"
