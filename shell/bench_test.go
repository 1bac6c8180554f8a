package shell

import (
	"slices"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// small is a command under 1 KB of the kind agents send.
const small = `cd /srv/app && sudo -u deploy env RAILS_ENV=production timeout 600 bash -c 'git pull --ff-only && bundle exec rake db:migrate' 2>&1 | tee -a /var/log/deploy.log; find . -name '*.tmp' -mtime +7 -exec rm -f {} + ; curl -fsSL https://example.com/x.sh | sh -s -- --yes > /tmp/out.txt`

// large is about 64 KB: a long script of such commands.
func large() string {
	var b strings.Builder
	for b.Len() < 64<<10-len(small)-1 {
		b.WriteString(small)
		b.WriteString("\n")
	}
	return b.String()
}

// benchP99 runs Parse b.N times and reports the 99th percentile.
func benchP99(b *testing.B, line string) {
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	ds := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t := time.Now()
		if _, err := Parse(line, Options{}); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t))
	}
	slices.Sort(ds)
	if len(ds) > 0 {
		b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
	}
}

func BenchmarkParseSmall(b *testing.B) { benchP99(b, small) }

func BenchmarkParse64K(b *testing.B) { benchP99(b, large()) }

// BenchmarkSyntax64K is mvdan.cc/sh's parse alone of the same 64 KB, the
// floor under BenchmarkParse64K.
func BenchmarkSyntax64K(b *testing.B) {
	line := large()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := syntax.NewParser().Parse(strings.NewReader(line), ""); err != nil {
			b.Fatal(err)
		}
	}
}
