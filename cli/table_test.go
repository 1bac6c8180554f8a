package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// tableFixture is a demo database with what makes tables wide: a decision
// by an SSH key's owner (name and whole fingerprint), a long reason, a long
// session, and a tier-2 lockout with a long target.
type tableFixture struct {
	db, sshActor, session, reason, target string
}

func newTableFixture(t *testing.T) tableFixture {
	t.Helper()
	f := tableFixture{
		db:       filepath.Join(t.TempDir(), "state.db"),
		sshActor: "alice (SHA256:KBP3b58KGhZXa/axgylmak/Y+aKlwzrQQb4wgASFm0rE)",
		session:  "agent:fork:matrix:room:!opsXyZ12345:example.org:thread:987654321",
		reason:   "no piping to sh, and certainly not from a paste site at three in the morning",
		target:   "postgres-primary-eu-west-1-payments-cluster",
	}
	var out, errb bytes.Buffer
	if code := Execute([]string{"headless", "--script", "/dev/null", "--demo-seed", "1", "--db", f.db}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("seed: %d %s", code, errb.String())
	}
	py := hermesTier2(t, f.db)
	py("upgrade")
	py("lockout", "diag", f.target, "900", "invalid_confirm_limit after three wrong phrases")
	cli := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Execute(append([]string{"--db", f.db}, args...), strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("%v: %d %s", args, code, errb.String())
		}
		return strings.TrimSpace(out.String())
	}
	id := cli("submit", "--session", f.session, "--", "rm", "-rf", "/srv/app/releases/2024-11-01", "/srv/app/releases/2024-11-02")
	alice := model.Actor{Surface: model.SurfaceSSH, Name: f.sshActor}
	if code := ExecuteAs(context.Background(), []string{"deny", id, "--reason", f.reason}, f.db, alice, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("deny over ssh: %d %s", code, errb.String())
	}
	return f
}

// output runs args as on a terminal of width w (0: piped).
func (f tableFixture) output(t *testing.T, w int, env map[string]string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	a := newApp(strings.NewReader(""), &out, &errb)
	a.termW = func() int { return w }
	a.getenv = func(k string) string {
		if k == "APPROVE_TUI_DB" {
			return f.db
		}
		return env[k]
	}
	if code := a.execute(context.Background(), args); code != 0 {
		t.Fatalf("%v: %d %s", args, code, errb.String())
	}
	return out.String()
}

// On a terminal every line of list, audit and lockouts fits the width, at
// 80, 100 and 200 columns: ids and risk whole, the headers whole, what was
// cut ends with an ellipsis.
func TestTablesFitTheTerminal(t *testing.T) {
	f := newTableFixture(t)
	var ids []string
	var recs []map[string]any
	if err := json.Unmarshal([]byte(f.output(t, 0, nil, "--json", "list", "--status", "all")), &recs); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		ids = append(ids, model.Sanitize(r["approval_id"].(string), model.Line))
	}
	if len(ids) < 16 {
		t.Fatalf("only %d proposals", len(ids))
	}
	tables := []struct {
		args   []string
		header []string
	}{
		{[]string{"list", "--status", "all"}, []string{"FLAG", "ID", "RISK", "STATUS", "WHEN", "SESSION", "COMMAND"}},
		{[]string{"audit", "--limit", "30"}, []string{"SEQ", "TIME", "EVENT", "OUTCOME", "ID", "ACTOR", "DETAIL"}},
		{[]string{"lockouts"}, []string{"VERB", "TARGET", "UNTIL", "REASON"}},
	}
	for _, w := range []int{80, 100, 200} {
		for _, tb := range tables {
			for _, env := range []map[string]string{nil, {"NO_COLOR": "1"}} {
				out := f.output(t, w, env, tb.args...)
				lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
				for _, l := range lines {
					if n := cells(ansiStrip(l)); n > w {
						t.Errorf("%v at %d columns: a line of %d cells: %q", tb.args, w, n, ansiStrip(l))
					}
				}
				if got := strings.Fields(lines[0]); strings.Join(got, " ") != strings.Join(tb.header, " ") {
					t.Errorf("%v at %d columns: header %q", tb.args, w, lines[0])
				}
				if tb.args[0] == "list" {
					for _, id := range ids {
						if !strings.Contains(out, " "+id+"  ") {
							t.Errorf("list at %d columns: id %s not whole:\n%s", w, id, out)
						}
					}
					for _, l := range lines[1:] {
						if fs := strings.Fields(ansiStrip(l)); !strings.Contains("HIGH MED LOW UNKN CRIT HARD", riskOf(fs, ids)) {
							t.Errorf("list at %d columns: no whole risk in %q", w, l)
						}
					}
				}
				if w < 200 && !strings.Contains(out, "…") {
					t.Errorf("%v at %d columns: nothing cut?\n%s", tb.args, w, out)
				}
			}
		}
	}
	// The command, the column most worth reading, keeps a useful width.
	for _, l := range strings.Split(f.output(t, 80, nil, "list", "--status", "all"), "\n") {
		if i := strings.Index(l, "dd if=/dev/zero"); i >= 0 && cells(ansiStrip(l[i:])) < 15 {
			t.Errorf("command cut too short at 80 columns: %q", l)
		}
	}
}

// riskOf is the field after the id in a list line's fields.
func riskOf(fields, ids []string) string {
	for i, f := range fields {
		for _, id := range ids {
			if f == id && i+1 < len(fields) {
				return fields[i+1]
			}
		}
	}
	return "?"
}

// Piped, list, audit and lockouts print one tab-separated line per row with
// every field whole: cut -f gives the session, the decider and the
// reason as they are, however long.
func TestPipedTablesAreWhole(t *testing.T) {
	f := newTableFixture(t)
	field := func(out string, col int, has string) string {
		t.Helper()
		for _, l := range strings.Split(out, "\n") {
			fs := strings.Split(l, "\t")
			if strings.Contains(l, has) && col < len(fs) {
				return fs[col]
			}
		}
		t.Fatalf("no line with %q in\n%s", has, out)
		return ""
	}
	list := f.output(t, 0, nil, "list", "--status", "all")
	if got := field(list, 5, "releases/2024-11-01"); got != f.session {
		t.Errorf("list | cut -f6: %q, want %q", got, f.session)
	}
	if got := field(list, 4, "releases/2024-11-01"); !strings.HasSuffix(got, " by "+f.sshActor+" via ssh") {
		t.Errorf("list | cut -f5: %q, want the whole decider", got)
	}
	if got := field(list, 6, "releases/2024-11-01"); got != "rm -rf /srv/app/releases/2024-11-01 /srv/app/releases/2024-11-02" {
		t.Errorf("list | cut -f7: %q", got)
	}
	audit := f.output(t, 0, nil, "audit")
	if got := field(audit, 5, f.reason); got != f.sshActor+" via ssh" {
		t.Errorf("audit | cut -f6: %q", got)
	}
	if got := field(audit, 6, f.reason); !strings.Contains(got, `reason="`+f.reason+`"`) {
		t.Errorf("audit | cut -f7: %q", got)
	}
	lockouts := f.output(t, 0, nil, "lockouts")
	if got := field(lockouts, 1, "diag"); got != f.target {
		t.Errorf("lockouts | cut -f2: %q", got)
	}
	if got := field(lockouts, 3, "diag"); got != "invalid_confirm_limit after three wrong phrases" {
		t.Errorf("lockouts | cut -f4: %q", got)
	}
	for _, out := range []string{list, audit, lockouts} {
		if strings.Contains(out, "…") || strings.Contains(out, "\x1b") || strings.Contains(out, "  ") && !strings.Contains(out, "\t") {
			t.Errorf("piped output cut, coloured or aligned:\n%s", out)
		}
	}
}

// fitColumns: whole columns keep their width, the others share the rest by
// weight, a column needing less than its share gives the rest away, and
// the total never passes the room while there is any to give.
func TestFitColumns(t *testing.T) {
	cols := []column{{name: "ID", whole: true}, {name: "A", min: 4}, {name: "B", min: 4, weight: 2}}
	row := func(cs ...string) []string { return cs }
	rows := [][]string{row("ID", "A", "B"), row("abcdefghijkl", strings.Repeat("a", 40), strings.Repeat("b", 100))}
	for _, tc := range []struct {
		room int
		want []int
	}{
		{200, []int{12, 40, 100}},
		{80, []int{12, 21, 43}},
		{40, []int{12, 8, 16}},
		{24, []int{12, 4, 4}},
		{20, []int{12, 2, 2}},
	} {
		if got := fitColumns(cols, rows, tc.room); !slices.Equal(got, tc.want) {
			t.Errorf("room %d: widths %v, want %v", tc.room, got, tc.want)
		}
	}
	// A short column takes only what it needs; the long one the rest.
	rows[1][1] = "short"
	if got := fitColumns(cols, rows, 80); got[1] != 5 || got[2] != 80-12-5-4 {
		t.Errorf("short column: %v", got)
	}
}
