#!/bin/sh
# Runs race.tape headless on demo seed 1 and, while the tape has typed the
# id but not yet pressed enter, approves the same proposal from a second
# process: the tape loses the race and the console says so (by whom).
#
#   sh examples/run-race.sh [DIR]
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

"$bin" headless --script "$here/race.tape" --demo-seed 1 --db "$db" \
  --events "$events" --screenshot-dir "$dir" --typing-speed 20ms --plain &
pid=$!

# The id is typed and the tape sleeps before enter: approve it first.
until grep -q '"kind":"Sleep","outcome":"started"' "$events" 2>/dev/null; do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
"$bin" approve u7LxLGT73E5T --confirm u7LxLGT73E5T --db "$db" >/dev/null 2>&1 || true
wait "$pid"
