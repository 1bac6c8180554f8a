package impact

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/internal/latency"
)

// longHistory is a repository whose main has n commits, one a second,
// and a branch side of one commit forked from the first: deleting side
// walks main's whole history back to the fork.
func longHistory(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	git(b, dir, "init", "-q")
	var s strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&s, "commit refs/heads/main\nmark :%d\ncommitter t <t@t> %d +0000\ndata 4\nc%03d\n", i, 1_600_000_000+i*60, i%1000)
		if i > 1 {
			fmt.Fprintf(&s, "from :%d\n", i-1)
		}
		fmt.Fprintf(&s, "M 644 inline f%d.txt\ndata 2\n%d\n\n", i%50, i%10)
	}
	fmt.Fprintf(&s, "commit refs/heads/side\ncommitter t <t@t> %d +0000\ndata 4\nside\nfrom :1\n\n", 1_600_000_030)
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet")
	cmd.Stdin = strings.NewReader(s.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("fast-import: %v %s", err, out)
	}
	git(b, dir, "checkout", "-q", "main")
	return dir
}

// BenchmarkGitPreview times the git previews: go-git alone (push --force,
// branch -D over a long history) and with the sealed git (reset --hard:
// status; reset --hard HEAD~1: status and the commits left behind; clean).
func BenchmarkGitPreview(b *testing.B) {
	_, local := pushRig(b)
	long := longHistory(b, 5_000)
	for _, tc := range []struct{ name, dir, cmd string }{
		{"push-force", local, "git push --force origin main"},
		{"reset-hard", local, "git reset --hard"},
		{"reset-hard-HEAD~1", local, "git reset --hard HEAD~1"},
		{"clean-fdx", local, "git clean -fdx"},
		{"branch-D-5k-history", long, "git branch -D side"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			latency.Each(b, func(int) {
				if p := Compute(context.Background(), tc.cmd, Options{Cwd: tc.dir}); len(p.Unknown) != 0 {
					b.Fatalf("%s: %q", tc.cmd, p.Unknown)
				}
			})
		})
	}
}
