package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/risk"
)

// show says why the command got its level, in the judgement's words, and
// --json carries the judgement.
func TestShowSaysWhy(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	if code, _, e := run(t, db, false, "", "init"); code != 0 {
		t.Fatal(e)
	}
	for _, c := range []string{"rm -rf /srv/app \x1b]0;pwn\a", "git status", "shred -u secrets.txt"} {
		code, out, e := run(t, db, false, "", "submit", "--cwd", dir, "--", c)
		if code != 0 {
			t.Fatalf("submit %q: %s", c, e)
		}
		id := strings.TrimSpace(out)
		j := risk.Judge(c, risk.Context{Cwd: dir})
		code, out, e = run(t, db, false, "", "show", id)
		if code != 0 {
			t.Fatalf("show: %s", e)
		}
		want := []string{"why " + strings.ToUpper(string(j.Level)) + ":"}
		for _, f := range j.Findings {
			want = append(want, findingText(f))
		}
		if j.ReadOnly {
			want = append(want, "read-only:     yes")
		} else {
			want = append(want, "read-only:     no")
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("show %q lacks %q:\n%s", c, w, out)
			}
		}
		if strings.ContainsAny(out, "\x1b\a") {
			t.Errorf("show printed a raw control:\n%q", out)
		}
		code, out, e = run(t, db, false, "", "show", "--json", id)
		if code != 0 {
			t.Fatalf("show --json: %s", e)
		}
		var o struct {
			Judgement *classifyObject `json:"judgement"`
		}
		if err := json.Unmarshal([]byte(out), &o); err != nil || o.Judgement == nil {
			t.Fatalf("show --json: no judgement (%v): %s", err, out)
		}
		g := o.Judgement
		if g.Level != string(j.Level) || g.ReadOnly != j.ReadOnly || g.Hardline != j.Hardline || len(g.Findings) != len(j.Findings) {
			t.Errorf("show --json judgement %+v, the engine says %+v", g, j)
		}
		for i, f := range j.Findings {
			if g.Findings[i].Rule != f.Rule || g.Findings[i].Why != f.Why || g.Findings[i].Level != string(f.Level) {
				t.Errorf("finding %d: %+v, want %+v", i, g.Findings[i], f)
			}
		}
	}
}
