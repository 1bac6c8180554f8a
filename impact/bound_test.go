package impact

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/latency"
	"github.com/approve-tui/approve-tui/model"
)

// wideTree makes dirs directories of files empty files each under root
// (1 + dirs + dirs*files entries).
func wideTree(tb testing.TB, root string, dirs, files int) {
	tb.Helper()
	for i := 0; i < dirs; i++ {
		emptyFiles(tb, filepath.Join(root, fmt.Sprintf("d%04d", i)), "f%04d", files)
	}
}

// flatDir makes n empty files in dir.
func flatDir(tb testing.TB, dir string, n int) {
	tb.Helper()
	emptyFiles(tb, dir, "f%06d", n)
}

// emptyFiles makes dir and n empty files in it, named by the format name
// of their number.
func emptyFiles(tb testing.TB, dir, name string, n int) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < n; i++ {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf(name, i)))
		if err != nil {
			tb.Fatal(err)
		}
		f.Close()
	}
}

// atLeastMedium fails unless p is incomplete, says so ("at least" where
// it counted something, why in Incomplete and the summary) and raises to
// MEDIUM or more.
func atLeastMedium(t *testing.T, p *Preview, why string) {
	t.Helper()
	if p.Complete || len(p.Incomplete) == 0 || !strings.Contains(strings.Join(p.Incomplete, "; "), why) {
		t.Fatalf("complete %v, incomplete %q: want incomplete saying %q", p.Complete, p.Incomplete, why)
	}
	if !strings.Contains(p.Summary, "incomplete: ") || !strings.Contains(p.Summary, why) ||
		(p.Entries > 0 && !strings.Contains(p.Summary, "at least ")) {
		t.Fatalf("summary %q", p.Summary)
	}
	if level, reason := Raise(p); level.Rank() < model.RiskMedium.Rank() || !strings.Contains(reason, "at least") {
		t.Fatalf("raised to %q (%q): what was not seen is never low", level, reason)
	}
}

// rm -f many/* over 12,000 files: every target shares one bound. Cut by
// it (here the entry bound, which does not depend on the machine's
// speed), the rest is never counted as nothing: at least MEDIUM, "at
// least", the reason named. Whole, it is HIGH, and the 12,000 targets are
// named 100 by one and the rest together.
func TestManyTargetsShareTheBound(t *testing.T) {
	dir := t.TempDir()
	flatDir(t, filepath.Join(dir, "many"), 12_000)
	p := Compute(context.Background(), "rm -f many/*", Options{Cwd: dir, MaxEntries: 500})
	atLeastMedium(t, p, "the 500-entry bound was reached")
	if p.Entries != 500 || !strings.Contains(p.Summary, "paths it names not looked at") {
		t.Fatalf("%d entries, summary %q", p.Entries, p.Summary)
	}
	p = Compute(context.Background(), "rm -f many/*", Options{Cwd: dir, MaxTime: time.Nanosecond})
	atLeastMedium(t, p, "time bound ran out")

	p = Compute(context.Background(), "rm -f many/*", Options{Cwd: dir})
	if !p.Complete {
		atLeastMedium(t, p, "time bound ran out") // a slow machine: cut, and said
		return
	}
	if level, _ := Raise(p); p.Entries != 12_000 || level != model.RiskHigh {
		t.Fatalf("%d entries, %s", p.Entries, level)
	}
	last := p.Targets[len(p.Targets)-1]
	if len(p.Targets) != MaxTargets+1 || last.Path != filepath.Join(dir, "many") || last.Entries != 12_000-MaxTargets ||
		last.Note != "11,900 more paths under it, counted together" {
		t.Fatalf("%d targets, last %+v", len(p.Targets), last)
	}
}

// A glob that would read more than maxGlobEntries is not expanded (its
// matching and sorting could not be stopped at the bound): unknown, so at
// least MEDIUM. (The bound is lowered here: the outcome is the same at
// 50,000.)
func TestAGlobPastItsBoundIsUnknown(t *testing.T) {
	was := maxGlobEntries
	maxGlobEntries = 100
	t.Cleanup(func() { maxGlobEntries = was })
	dir := t.TempDir()
	flatDir(t, filepath.Join(dir, "many"), 101)
	p := Compute(context.Background(), "rm -f many/*", Options{Cwd: dir})
	if len(p.Targets) != 0 || len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], "many/* (a glob: it reads more than 100 entries)") {
		t.Fatalf("%d targets, unknown %q", len(p.Targets), p.Unknown)
	}
	if level, _ := Raise(p); level != model.RiskMedium {
		t.Fatalf("raised to %q", level)
	}
	maxGlobEntries = 101
	if p := Compute(context.Background(), "rm -f many/*", Options{Cwd: dir}); len(p.Targets) != 101 || len(p.Unknown) != 0 {
		t.Fatalf("within the bound: %d targets, unknown %q", len(p.Targets), p.Unknown)
	}
}

// A part not previewed raises to MEDIUM on its own; a preview whose
// context ended before it began says it is incomplete.
func TestUnknownAndStoppedAreNeverLow(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"a": "x"}, nil)
	p := Compute(context.Background(), `rm -f "$TARGET"`, Options{Cwd: dir})
	if level, why := Raise(p); level != model.RiskMedium || !strings.Contains(why, "could not preview") {
		t.Fatalf("unknown only: %q %q", level, why)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	atLeastMedium(t, Compute(ctx, "rm -f a", Options{Cwd: dir}), "time bound ran out")
	if p := Compute(context.Background(), "rm -f a", Options{Cwd: dir}); !p.Complete || len(p.Incomplete) != 0 {
		t.Fatalf("whole: %+v", p)
	}
}

// Approved whole, incomplete now: what it touches cannot be told, so it
// counts as grown. Approved as "at least", the counts are compared only by
// the thresholds they reach.
func TestGrewWhenItCannotBeTold(t *testing.T) {
	whole := &Preview{Complete: true, Entries: 10}
	cut := &Preview{Complete: false, Entries: 5, Incomplete: []string{"could not read 1 directory (/d)"}}
	if g := Grew(whole, cut); len(g) != 1 || !strings.Contains(g[0], "incomplete (could not read 1 directory (/d))") {
		t.Fatalf("%q", g)
	}
	if g := Grew(cut, &Preview{Complete: false, Entries: 50}); len(g) != 0 {
		t.Fatalf("%q", g)
	}
	// Unless what is counted now crosses a threshold: at least 12,000
	// entries now is HIGH, whatever "at least 5" was approved as.
	if g := Grew(cut, &Preview{Complete: false, Entries: 12_000}); len(g) != 1 || !strings.Contains(g[0], "at least 12,000 entries") {
		t.Fatalf("%q", g)
	}
}

// previewHelperEnv carries the command a helper process previews (as
// another user, in its working directory).
const previewHelperEnv = "APPROVE_TUI_IMPACT_HELPER"

// TestPreviewHelper is not a test: run by TestUnreadableDirectories as
// another user, it prints the preview of the command it is given.
func TestPreviewHelper(t *testing.T) {
	spec := os.Getenv(previewHelperEnv)
	if spec == "" {
		t.Skip("a helper process of TestUnreadableDirectories")
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	p := Compute(context.Background(), spec, Options{Cwd: dir})
	level, why := Raise(p)
	out, _ := json.Marshal(map[string]any{"preview": p, "level": level, "why": why})
	fmt.Printf("PREVIEW %s\n", out)
}

// Directories the previewing user cannot read (a tree owned by root, its
// subdirectories mode 0700, previewed as nobody, as sudo rm -rf data would
// be): the preview says it is incomplete, names them, and is at least
// MEDIUM; a glob over one is unknown.
func TestUnreadableDirectories(t *testing.T) {
	base := nobodyTree(t, "impact-unreadable-")
	tree(t, base, map[string]string{"data/a/secret": "s", "data/b/c/deep": "d", "data/pub/x": "x", "data/top": "t"}, nil)
	for _, d := range []string{"data/a", "data/b"} {
		if err := os.Chmod(filepath.Join(base, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// As root, the whole tree: complete.
	if p := Compute(context.Background(), "rm -rf data", Options{Cwd: base}); !p.Complete || p.Entries != 9 {
		t.Fatalf("as root: complete %v, %d entries", p.Complete, p.Entries)
	}
	p, level, why := previewAsNobody(t, base, "rm -rf data")
	t.Logf("as nobody: %s (%s: %s)", p.Summary, level, why)
	want := "could not read 2 directories (" + filepath.Join(base, "data/a") + ", " + filepath.Join(base, "data/b") + ")"
	if p.Complete || len(p.Incomplete) != 1 || p.Incomplete[0] != want {
		t.Fatalf("as nobody: complete %v, incomplete %q, want %q", p.Complete, p.Incomplete, want)
	}
	if !strings.Contains(p.Summary, "deletes at least 4 directories, 2 files") || !strings.Contains(p.Summary, "incomplete: "+want) {
		t.Fatalf("summary %q", p.Summary)
	}
	if level.Rank() < model.RiskMedium.Rank() || !strings.Contains(why, "at least 6 entries") || !strings.Contains(why, "could not read 2 directories") {
		t.Fatalf("raised to %q (%q)", level, why)
	}
	// A glob over an unreadable directory matches nothing for nobody; bash
	// as root would match its entries: unknown, never "nothing".
	p, level, _ = previewAsNobody(t, base, "rm -rf data/a/*")
	if len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], "could not read "+filepath.Join(base, "data/a")) || level.Rank() < model.RiskMedium.Rank() {
		t.Fatalf("glob as nobody: unknown %q, %q", p.Unknown, level)
	}
	// A path under one cannot even be looked at.
	p, level, _ = previewAsNobody(t, base, "rm -f data/a/secret")
	if p.Complete || !strings.Contains(strings.Join(p.Incomplete, ""), "could not look at 1 path") || level.Rank() < model.RiskMedium.Rank() {
		t.Fatalf("path as nobody: %+v, %q", p, level)
	}
}

// A tree of a million entries: the walk stops at its bound and says so
// (at least), never reading the whole tree.
func TestBoundOnAMillionEntries(t *testing.T) {
	dir := t.TempDir()
	wideTree(t, filepath.Join(dir, "big"), 1000, 1000)
	p := Compute(context.Background(), "rm -rf big", Options{Cwd: dir})
	if p.Complete || p.Entries > DefaultMaxEntries || p.Entries == 0 {
		t.Fatalf("complete %v, %d entries (bound %d)", p.Complete, p.Entries, DefaultMaxEntries)
	}
	if !strings.Contains(p.Summary, "deletes at least ") {
		t.Fatalf("summary %q", p.Summary)
	}
	if r, _ := Raise(p); r != "high" {
		t.Fatalf("a cut walk past 10,000 entries raises to high, got %q", r)
	}
}

// BenchmarkPreview is the preview of rm -rf on trees of 10, 10,000 and
// 1,000,000 entries (the last cut by the default bound).
func BenchmarkPreview(b *testing.B) {
	for _, c := range []struct {
		name        string
		dirs, files int
	}{{"10", 1, 8}, {"10k", 10, 999}, {"1M", 1000, 1000}} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			wideTree(b, filepath.Join(dir, "t"), c.dirs, c.files)
			latency.Each(b, func(int) {
				if p := Compute(context.Background(), "rm -rf t", Options{Cwd: dir}); p.Entries == 0 {
					b.Fatal("nothing counted")
				}
			})
		})
	}
}

// BenchmarkPreviewPrograms is the preview of the analysers that once
// asked a program and now read files: a forced push and a branch deletion
// (refs and commits read with go-git), and terraform apply PLAN (the plan
// file decoded; no terraform runs).
func BenchmarkPreviewPrograms(b *testing.B) {
	_, local := pushRig(b)
	cases := []struct{ name, cmd, dir string }{
		{"git-push-force", "git push --force origin main", local},
		{"git-branch-D", "git branch -D feature", local},
	}
	if _, err := exec.LookPath("terraform"); err == nil {
		dir := terraformDir(b)
		writeTF(b, dir, `resource "terraform_data" "a" { input = "changed" }`)
		tf(b, dir, "plan", "-input=false", "-out=p.tfplan")
		cases = append(cases, struct{ name, cmd, dir string }{"terraform-apply-plan", "terraform apply p.tfplan", dir})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			latency.Each(b, func(int) {
				if p := Compute(context.Background(), c.cmd, Options{Cwd: c.dir}); len(p.Targets) != 1 {
					b.Fatalf("%s: %+v %q", c.cmd, p.Targets, p.Unknown)
				}
			})
		})
	}
}

// BenchmarkPreviewBound is the preview end to end (glob expansion, every
// target, every walk) of rm -f many/* and rm -rf many over directories of
// 12,000 and 200,000 empty files, within a hook's bound (1 s) and run's
// (2 s): p50, p99 and the slowest run, with how many runs were complete
// and the level the last one raised to (0 none, 2 MEDIUM, 3 HIGH).
func BenchmarkPreviewBound(b *testing.B) {
	dir := b.TempDir()
	for _, n := range []int{12_000, 200_000} {
		many := filepath.Join(dir, strconv.Itoa(n), "many")
		flatDir(b, many, n)
		for _, cmd := range []string{"rm -f many/*", "rm -rf many"} {
			for _, bound := range []time.Duration{time.Second, 2 * time.Second} {
				name := fmt.Sprintf("%dk/%s/%s", n/1000, strings.ReplaceAll(strings.Fields(cmd)[1], "-", ""), bound)
				b.Run(name, func(b *testing.B) {
					lat := make(latency.Latencies, 0, b.N)
					complete := 0
					var level model.RiskLevel
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						t0 := time.Now()
						p := Compute(context.Background(), cmd, Options{Cwd: filepath.Dir(many), MaxTime: bound})
						lat = append(lat, time.Since(t0))
						if p.Complete && len(p.Unknown) == 0 {
							complete++
						}
						level, _ = Raise(p)
					}
					b.StopTimer()
					lat.Report(b)
					b.ReportMetric(float64(slices.Max(lat).Microseconds()), "max-µs")
					b.ReportMetric(float64(complete), "whole-runs")
					rank := 0 // raised nothing
					if level != "" {
						rank = level.Rank()
					}
					b.ReportMetric(float64(rank), "level")
				})
			}
		}
	}
}

// nobodyTree makes a directory every user can search, for a tree owned
// by root previewed as user nobody; it skips unless the test runs as root.
func nobodyTree(t *testing.T, prefix string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the tree is root's, previewed as user nobody")
	}
	if _, err := user.Lookup("nobody"); err != nil {
		t.Skipf("no user nobody to preview as: %v", err)
	}
	base, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	return base
}

// previewAsNobody previews command in base as user nobody, running a copy
// of the test binary (where nobody can run it) as TestPreviewHelper.
func previewAsNobody(t *testing.T, base, command string) (*Preview, model.RiskLevel, string) {
	t.Helper()
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	bin := filepath.Join(base, "impact.test")
	if _, err := os.Stat(bin); err != nil {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(self)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-test.run=^TestPreviewHelper$")
	cmd.Dir = base
	cmd.Env = []string{previewHelperEnv + "=" + command, "PATH=/usr/bin:/bin", "HOME=/"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper as nobody: %v\n%s", err, out)
	}
	_, js, ok := strings.Cut(string(out), "PREVIEW ")
	if !ok {
		t.Fatalf("helper printed no preview:\n%s", out)
	}
	js, _, _ = strings.Cut(js, "\n")
	var res struct {
		Preview *Preview
		Level   model.RiskLevel
		Why     string
	}
	if err := json.Unmarshal([]byte(js), &res); err != nil {
		t.Fatal(err)
	}
	return res.Preview, res.Level, res.Why
}
