package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// show and list say a parked proposal is parked (a mark, the words, a park
// object in --json), and a call run without approval as such; a hostile
// reason is shown escaped, never raw.
func TestShowListParkedAndRanWithoutApproval(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	if code, _, e := run(t, db, false, "", "init"); code != 0 {
		t.Fatal(e)
	}
	submit := func(cmd string) string {
		code, out, e := run(t, db, false, "", "submit", "--cwd", dir, "--ttl", "2h", "--", cmd)
		if code != 0 {
			t.Fatalf("submit %q: %s", cmd, e)
		}
		return strings.TrimSpace(out)
	}
	parked, ran, plain := submit("rm -rf /srv/app/cache"), submit("terraform destroy -auto-approve"), submit("git push --force")
	st, err := storage.Open(ctx, db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	agent := model.Actor{Surface: model.SurfaceRunner, Name: "hook@host"}
	pk, err := st.Park(ctx, parked, time.Now().Add(time.Hour), "hook timeout \x1b]0;pwn\a", agent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordRanWithoutApproval(ctx, ran, "Codex PostToolUse \x1b[2J reported it run", agent); err != nil {
		t.Fatal(err)
	}
	st.Close()
	until := model.FromEpoch(pk.Until).UTC().Format("15:04")

	code, out, e := run(t, db, false, "", "show", parked)
	if code != 0 {
		t.Fatal(e)
	}
	for _, w := range []string{
		`parked:        the agent stopped waiting at `,
		` (hook timeout \x1b]0;pwn\x07); approving lets this exact call through when it is asked again, until ` + until + " UTC",
		`waiter:        none: no process is waiting on this id; approving runs nothing now: the call goes through when it is asked again (parked)`,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("show parked lacks %q:\n%s", w, out)
		}
	}
	code, out, e = run(t, db, false, "", "show", ran)
	if code != 0 {
		t.Fatal(e)
	}
	for _, w := range []string{
		"*** RAN WITHOUT APPROVAL: its agent reported the call as run; it was not approved ***",
		`execution:     ran without approval (Codex PostToolUse \x1b[2J reported it run) `,
		"status:        expired",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("show ran lacks %q:\n%s", w, out)
		}
	}
	for _, o := range []string{out} {
		if strings.ContainsAny(o, "\x1b\a") {
			t.Errorf("a raw control was printed:\n%q", o)
		}
	}

	type parkObj struct {
		State     string   `json:"state"`
		StoppedAt *float64 `json:"stopped_at"`
		Until     float64  `json:"until"`
		Why       string   `json:"why"`
		TakenBy   *string  `json:"taken_by"`
		Words     string   `json:"words"`
	}
	type obj struct {
		ID        string   `json:"approval_id"`
		Execution string   `json:"execution_status"`
		Park      *parkObj `json:"park"`
	}
	code, out, e = run(t, db, false, "", "show", "--json", parked)
	var one obj
	if code != 0 || json.Unmarshal([]byte(out), &one) != nil {
		t.Fatalf("show --json: %s %s", out, e)
	}
	if p := one.Park; p == nil || p.State != "parked" || p.StoppedAt == nil || p.Until != pk.Until || p.Why != `hook timeout \x1b]0;pwn\x07` || p.TakenBy != nil ||
		!strings.Contains(p.Words, "approving lets this exact call through") {
		t.Fatalf("show --json park: %+v", one.Park)
	}

	code, out, e = run(t, db, false, "", "list", "--status", "all", "--json")
	var all []obj
	if code != 0 || json.Unmarshal([]byte(out), &all) != nil {
		t.Fatalf("list --json: %s %s", out, e)
	}
	seen := 0
	for _, o := range all {
		switch o.ID {
		case parked:
			seen++
			if o.Park == nil || o.Park.State != "parked" {
				t.Errorf("list --json parked: %+v", o.Park)
			}
		case ran:
			seen++
			if o.Park != nil || o.Execution != "ran_without_approval" {
				t.Errorf("list --json ran: %+v", o)
			}
		case plain:
			seen++
			if o.Park != nil {
				t.Errorf("list --json plain: %+v", o.Park)
			}
		}
	}
	if seen != 3 {
		t.Fatalf("list --json listed %d of 3:\n%s", seen, out)
	}

	code, out, e = run(t, db, false, "", "list")
	if code != 0 {
		t.Fatal(e)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(l, "\t")
		switch f[1] {
		case parked:
			if f[0] != "P" || f[3] != "pending (parked)" {
				t.Errorf("list row of the parked one: %q", l)
			}
		case plain:
			if f[0] != "" || f[3] != "pending" {
				t.Errorf("list row of another: %q", l)
			}
		}
	}
}

// Approving a parked proposal says that nothing runs now and the call
// asked again runs it; once its park window is over, the approval is
// refused, clearly, and the proposal stays pending.
func TestApproveParked(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	if code, _, e := run(t, db, false, "", "init"); code != 0 {
		t.Fatal(e)
	}
	var ids []string
	for _, c := range []string{"rm -rf /srv/app/cache", "rm -rf /srv/app/logs"} {
		code, out, e := run(t, db, false, "", "submit", "--cwd", dir, "--ttl", "2h", "--", c)
		if code != 0 {
			t.Fatal(e)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	st, err := storage.Open(ctx, db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hook := model.Actor{Surface: model.SurfaceRunner, Name: "hook@host"}
	for _, id := range ids {
		if _, err := st.Park(ctx, id, time.Now().Add(time.Hour), "hook timeout", hook); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	code, out, e := run(t, db, false, "", "approve", ids[0], "--confirm", ids[0])
	if code != 0 || !strings.Contains(out, "approved "+ids[0]) ||
		!strings.Contains(e, "note: "+ids[0]+": its agent stopped waiting (parked): nothing runs now; the same call, asked again, runs it once, until ") {
		t.Fatalf("approve parked: %d\n%s\n%s", code, out, e)
	}
	code, out, _ = run(t, db, false, "", "show", ids[0])
	if code != 0 || !strings.Contains(out, "; approved: this exact call goes through when it is asked again, until ") {
		t.Fatalf("show approved parked:\n%s", out)
	}

	// The window of the other ends (the clock moves past it).
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE approve_tui_parks SET park_until = ? WHERE approval_id = ?`, float64(time.Now().Add(-time.Minute).Unix()), ids[1]); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	code, out, e = run(t, db, false, "", "approve", ids[1], "--confirm", ids[1])
	if code == 0 || !strings.Contains(e, "park window ended at") || !strings.Contains(e, "approving it now would let nothing through") {
		t.Fatalf("approve after the window: %d\n%s\n%s", code, out, e)
	}
	code, out, _ = run(t, db, false, "", "show", ids[1])
	if code != 0 || !strings.Contains(out, "status:        pending") || !strings.Contains(out, ": an approval is refused") {
		t.Fatalf("show after a refused approval:\n%s", out)
	}
	code, out, _ = run(t, db, false, "", "list")
	if code != 0 || !strings.Contains(out, "pending (park over)") {
		t.Fatalf("list:\n%s", out)
	}
}

// Approving a proposal closed because its agent ran the command says so
// (not "expired in 1h", its time to live), and show says why it ended.
func TestApproveRanWithoutApprovalSaysSo(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	if code, _, e := run(t, db, false, "", "init"); code != 0 {
		t.Fatal(e)
	}
	code, out, e := run(t, db, false, "", "submit", "--cwd", dir, "--ttl", "2h", "--", "rm -rf /srv/app/cache")
	if code != 0 {
		t.Fatal(e)
	}
	id := strings.TrimSpace(out)
	st, err := storage.Open(ctx, db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordRanWithoutApproval(ctx, id, "Codex PostToolUse \x1b[2J reported it run", model.Actor{Surface: model.SurfaceHook, Name: "hook@host"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	code, _, e = run(t, db, false, "", "approve", id, "--confirm", id)
	if code != ExitNotPending || !strings.Contains(e, "not approved: proposal "+id+" was closed because its agent reported running the command without approval (Codex PostToolUse \\x1b[2J reported it run); approving it would run nothing") {
		t.Fatalf("approve: %d %q", code, e)
	}
	code, out, _ = run(t, db, false, "", "show", id)
	if code != 0 || !strings.Contains(out, "ended:         closed: its agent reported running the command without approval") {
		t.Fatalf("show:\n%s", out)
	}
	code, _, e = run(t, db, false, "", "deny", id)
	if code != ExitNotPending || strings.Contains(e, "expired in") {
		t.Fatalf("deny: %d %q", code, e)
	}
}
