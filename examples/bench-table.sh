#!/bin/sh
# bench-table.sh [OUTDIR]: every figure of the performance table in
# BENCHMARKS.md ("The performance table"), measured in one run on this
# machine, each next to its peer measured in the same run.
#
# Needs: Go, tmux, python3 and gcc (the peers: Hermes' transaction in
# Python, the same statements in C against the system SQLite). The raw
# `go test -bench` output of each step goes to OUTDIR (default
# ./bench-results/DATE), the table to OUTDIR/table.md and to stdout.
#
# Run it on a quiet machine: every figure is a timing or a CPU share.
# Takes about 22 minutes on 2 vCPUs (the idle console alone is
# 5 x APPROVE_TUI_BENCH_IDLE_SECONDS, default 120: a window holds one of
# the Go runtime's forced garbage collections, every two minutes, as the
# long run does).
set -eu

cd "$(dirname "$0")/.."
out=${1:-bench-results/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
: "${APPROVE_TUI_BENCH_IDLE_SECONDS:=120}"
export APPROVE_TUI_BENCH_IDLE_SECONDS
unset APPROVE_TUI_TEST_POSTGRES # the table is SQLite's (PostgreSQL has its own section)

for tool in go tmux python3 gcc; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "bench-table.sh: $tool is needed (apt-get install $tool)" >&2
		exit 2
	}
done

{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') x $(nproc)"
	echo "memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
	echo "kernel: $(uname -sr)"
	echo "go: $(go version | cut -d' ' -f3-)"
	echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/machine.txt"

# step NAME PACKAGE BENCH-REGEX BENCHTIME: one go test -bench run.
step() {
	# The previous step's files (the first-open step writes a 1M-row
	# database) go to disk before this step's timings, not during them.
	sync
	sleep 3
	echo "== $1: go test -run '^\$' -bench '$3' -benchtime $4 $2" >&2
	go test -run '^$' -bench "$3" -benchtime "$4" -timeout 60m "$2" | tee "$out/$1.txt" >&2
}

step consume ./storage/ 'BenchmarkConsumePeers' 3x
step walframes ./storage/ 'BenchmarkConsumeWALFrames' 3x
step expire ./storage/ 'BenchmarkExpire' 1x
step startup ./cli/ 'BenchmarkStartup' 300x
step firstopen ./tui/ 'BenchmarkFirstFrame' 3x
step frame ./cli/ 'BenchmarkCommitToFrame' 300x
step idle ./cli/ 'BenchmarkConsoleIdle' 1x

# m FILE NAME-REGEX UNIT: the value a benchmark line whose name matches
# reports in UNIT (the number just before it), "?" when missing.
m() {
	awk -v name="$2" -v unit="$3" '
		$1 ~ "^Benchmark" && $1 ~ name {
			for (i = 3; i <= NF; i++) if ($i == unit) { v = $(i - 1); found = 1; exit }
		}
		END { print (found ? v : "?") }' "$out/$1"
}
# ms FILE NAME-REGEX: ns/op in milliseconds.
ms() { m "$1" "$2" ns/op | awk '{ if ($1 == "?") print "?"; else printf "%.1f", $1 / 1e6 }'; }

{
	echo "| figure | measured | peer, same run | goal |"
	echo "| --- | --- | --- | --- |"
	echo "| consume throughput ÷ Hermes' Python, NORMAL / FULL | $(m consume.txt 'sync=NORMAL' store/python)× / $(m consume.txt 'sync=FULL' store/python)× | Python $(m consume.txt 'sync=NORMAL' python-ops/s) / $(m consume.txt 'sync=FULL' python-ops/s) ops/s | ≥ 1.0× |"
	echo "| consume CPU ÷ C, NORMAL / FULL | $(m consume.txt 'sync=NORMAL' store-cpu/c-cpu)× / $(m consume.txt 'sync=FULL' store-cpu/c-cpu)× | bare modernc Go ÷ C: $(m consume.txt 'sync=NORMAL' bare-go-cpu/c-cpu)× / $(m consume.txt 'sync=FULL' bare-go-cpu/c-cpu)× | ≤ 1.3× |"
	echo "| WAL frames per consume, 200 pending | $(m walframes.txt 'pending=200/store-' frames/consume) | same statements bare: $(m walframes.txt 'pending=200/bare-sql' frames/consume); Hermes: $(m walframes.txt 'pending=200/hermes-minimal' frames/consume) | only what the guarantees need |"
	echo "| WAL frames per consume, 10k pending, top / spread | $(m walframes.txt 'top/store-' frames/consume) / $(m walframes.txt 'spread/store-' frames/consume) | Hermes: $(m walframes.txt 'top/hermes-minimal' frames/consume) / $(m walframes.txt 'spread/hermes-minimal' frames/consume) | |"
	echo "| console idle CPU, 10 / 10k pending | $(m idle.txt 'pending=10-' %core) % / $(m idle.txt 'pending=10000-' %core) % of a core | noisy directory: $(m idle.txt 'pending=10/noisy' %core) % / $(m idle.txt 'pending=10000/noisy' %core) % | ≤ 0.1 % |"
	echo "| console idle CPU, countdowns to the second (10 pending, a frame every second) | $(m idle.txt 'pending=10/seconds' %core) % of a core | | ≤ 0.1 % |"
	echo "| commit → frame in tmux, p50 / p99, 15 pending | $(m frame.txt 'pending=15' p50-ms) / $(m frame.txt 'pending=15' p99-ms) ms | tmux's own floor: $(m frame.txt 'pending=15' floor-p50-ms) / $(m frame.txt 'pending=15' floor-p99-ms) ms | p99 ≤ 20 ms |"
	echo "| commit → frame in tmux, p50 / p99, 10k pending | $(m frame.txt 'pending=10000' p50-ms) / $(m frame.txt 'pending=10000' p99-ms) ms | floor: $(m frame.txt 'pending=10000' floor-p50-ms) / $(m frame.txt 'pending=10000' floor-p99-ms) ms | p99 ≤ 20 ms |"
	echo "| first-ever open of a 1M-row file (100k pending) to the first frame | $(ms firstopen.txt 'first-open-ever') ms (ranked in the background in $(m firstopen.txt 'first-open-ever' ranked-ms) ms) | every later start: $(ms firstopen.txt '/ranked') ms | ≤ 1 s |"
	echo "| expire 100k due rows ÷ bare UPDATE | $(m expire.txt 'Expire' store/bare)× ($(m expire.txt 'Expire' store-ms) ms) | ÷ bare UPDATE + the audit rows: $(m expire.txt 'Expire' store/bare-audit)× | ≤ 1.5× |"
	echo "| process start-up, --help p50 / p99 | $(m startup.txt '/help' p50-µs) / $(m startup.txt '/help' p99-µs) µs | trivial Go binary: $(m startup.txt '/help' floor-p50-µs) / $(m startup.txt '/help' floor-p99-µs) µs | ≤ 15 ms |"
	echo "| agent hook process (classify one command), p50 / p99 | $(m startup.txt '/hook-pass' p50-µs) / $(m startup.txt '/hook-pass' p99-µs) µs | trivial Go binary: $(m startup.txt '/hook-pass' floor-p50-µs) / $(m startup.txt '/hook-pass' floor-p99-µs) µs | |"
} >"$out/table.md"

echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
cat "$out/machine.txt" "$out/table.md"
