package risk

import (
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

func FuzzClassify(f *testing.F) {
	for _, c := range rowCases {
		for _, cmd := range append(c.pos, c.neg...) {
			f.Add(cmd, "low")
		}
	}
	for _, p := range []string{"", "medium", "high", "unknown", "HIGH"} {
		f.Add("DELETE FROM t;\nSELECT 1 WHERE x \x1b]0;\x07ｒｍ r''m", p)
	}
	f.Fuzz(func(t *testing.T, cmd, pinnedStr string) {
		// Long inputs only make each run slower (classification is linear;
		// see BenchmarkClassify), and slow runs make the fuzzer's input
		// minimisation, which is quadratic in the input length, stall for
		// its full minute (golang/go#48820, #52569). Truncating keeps the
		// bytes that count for coverage short.
		cmd, pinnedStr = truncate(cmd, 256), truncate(pinnedStr, 16)
		pinned := model.RiskLevel(pinnedStr)
		v := Classify(cmd)
		switch v.Level {
		case model.RiskLow, model.RiskMedium, model.RiskHigh:
		default:
			t.Fatalf("Classify(%q).Level = %q", cmd, v.Level)
		}
		max := model.RiskLow
		for _, m := range v.Matches {
			max = model.MaxRisk(max, m.Level)
			if v.Hardline == false && m.Kind == KindHardline {
				t.Fatalf("hardline match without Hardline: %+v", v)
			}
		}
		if max != v.Level || (v.Hardline && v.Level != model.RiskHigh) || (len(v.Matches) == 0) != (v.Reason() == "") {
			t.Fatalf("inconsistent verdict for %q: %+v", cmd, v)
		}
		eff := Effective(pinned, cmd, Context{Cwd: "/work"})
		if Rank(eff) < Rank(pinned) || Rank(eff) < Rank(v.Level) {
			t.Fatalf("Effective(%q, %q) = %s lowered the risk", pinned, cmd, eff)
		}
		err := Guard(pinned, cmd, Context{Cwd: "/work"})
		if wantErr := !pinned.Valid() || Rank(Judge(cmd, Context{Cwd: "/work"}).Level) > Rank(pinned); (err != nil) != wantErr {
			t.Fatalf("Guard(%q, %q) = %v", pinned, cmd, err)
		}
		if n := Normalize(cmd); strings.ContainsRune(n, 0) || strings.ContainsRune(n, 0x1b) && !strings.Contains(cmd, "\x1b") {
			t.Fatalf("Normalize(%q) = %q", cmd, n)
		}
	})
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

var sink Verdict

func BenchmarkClassify(b *testing.B) {
	long := strings.Repeat("echo 'building step' && make -j8 target_with_long_name ; ", 200) + "DELETE FROM t WHERE id=1"
	for _, bc := range []struct{ name, cmd string }{
		{"typical", "git push --force origin main"},
		{"benign", "ls -la /var/log"},
		{"long", long},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.cmd)))
			for b.Loop() {
				sink = Classify(bc.cmd)
			}
		})
	}
}
