package cli

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The CLI on a file of Hermes' tier-2 revision, against Hermes' own SQL
// from Python: a bare approve refused, the phrase approves, wrong phrases
// count and block with a lockout Python sees, lockouts listed and cleared,
// armed rows shown, denied and expired as Hermes does.
func TestTier2CLI(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	py := hermesTier2(t, db)
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Execute(append([]string{"--db", db}, args...), strings.NewReader(""), &out, &errb); code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, out.String(), errb.String())
		}
		return out.String(), errb.String()
	}
	run(0, "init")
	py("upgrade")

	id := py("submit", "restart-tier2", "vaultwarden", "0427")
	out, _ := run(0, "--json", "show", "--", id)
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v["risk_level"] != "tier2_critical" || v["phrase"] != "RESTART-TIER2 VAULTWARDEN 0427" || v["corrupt"] != "" || v["requires_text_confirm"] != true {
		t.Fatalf("show --json: %v", v)
	}
	if out, _ := run(0, "show", "--", id); !strings.Contains(out, "approved only by typing the phrase: RESTART-TIER2 VAULTWARDEN 0427") {
		t.Fatalf("show:\n%s", out)
	}
	if out, _ := run(0, "list"); !strings.Contains(out, "CRIT") {
		t.Fatalf("list:\n%s", out)
	}
	_, e := run(1, "approve", "--confirm", id, "--", id)
	if !strings.Contains(e, "never by its id") {
		t.Fatalf("bare approve: %s", e)
	}
	_, e = run(5, "approve", "--phrase", "restart-tier2 vaultwarden 1234", "--", id)
	if !strings.Contains(e, "wrong phrase 1 of 3") {
		t.Fatalf("wrong phrase: %s", e)
	}
	if out, _ := run(0, "list"); !strings.Contains(out, id) {
		t.Fatalf("the armed row is not listed:\n%s", out)
	}
	run(0, "approve", "--phrase", "RESTART-TIER2 VAULTWARDEN 0427", "--", id)
	if !strings.Contains(py("get", id), `"status": "consumed"`) {
		t.Fatal("python does not read consumed")
	}

	bad := py("submit", "diag", "postgres", "1111")
	run(5, "approve", "--phrase", "DIAG POSTGRES 2", "--", bad)
	run(5, "approve", "--phrase", "DIAG POSTGRES 3", "--", bad)
	_, e = run(1, "approve", "--phrase", "DIAG POSTGRES 4", "--", bad)
	if !strings.Contains(e, "blocked") {
		t.Fatalf("third wrong phrase: %s", e)
	}
	if g := py("get", bad); !strings.Contains(g, `"status": "blocked"`) || !strings.Contains(g, "invalid_confirm_limit") {
		t.Fatalf("python reads %s", g)
	}
	if py("check", "diag", "postgres") == "none" {
		t.Fatal("python sees no lockout")
	}
	out, _ = run(0, "--json", "lockouts")
	if !strings.Contains(out, `"verb": "diag"`) {
		t.Fatalf("lockouts: %s", out)
	}
	run(6, "--read-only", "lockouts", "clear", "diag", "postgres")
	run(0, "lockouts", "clear", "diag", "postgres")
	run(3, "lockouts", "clear", "diag", "postgres")
	if out, _ := run(0, "lockouts"); !strings.Contains(out, "no active lockouts") {
		t.Fatalf("after clearing: %s", out)
	}
	out, _ = run(0, "--json", "audit", "--limit", "1")
	if !strings.Contains(out, `"event": "lockout"`) {
		t.Fatalf("the clear is not audited: %s", out)
	}

	armed := py("submit", "diag", "cloudflared", "2222")
	py("arm", armed, "$ev", "1796000000000")
	out, _ = run(0, "show", "--", armed)
	if !strings.Contains(out, "armed") || !strings.Contains(out, "$ev") {
		t.Fatalf("armed row:\n%s", out)
	}
	run(0, "deny", "--reason", "not now", "--", armed)
	if g := py("get", armed); !strings.Contains(g, `"terminal_reason": "denied_explicit"`) {
		t.Fatalf("python reads %s", g)
	}
}

// The phrase approve in a real terminal: the console in tmux on a tier-2
// file written by Hermes' SQL; a wrong phrase is counted and the prompt
// stays; the right one approves, and Python reads it consumed.
func TestTier2PhraseInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed for the end-to-end console test (apt-get install tmux)")
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	db := filepath.Join(dir, "state.db")
	if out, err := exec.Command(bin, "--db", db, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v %s", err, out)
	}
	py := hermesTier2(t, db)
	py("upgrade")
	id := py("submit", "restart-tier2", "vaultwarden", "0427")
	tm := startConsoleInTmux(t, bin, 80, 24, []string{"TERM=xterm-256color"}, "--db", db)
	tm.waitFor("CRIT")
	tm.key("Enter", "PageDown", "PageDown", "a") // read it all, then approve
	tm.waitFor("Tier-2: type the phrase")
	tm.typeID("restart-tier2 vaultwarden 9999")
	tm.key("Enter")
	tm.waitFor("wrong phrase 1 of 3")
	tm.key("BSpace", "BSpace", "BSpace", "BSpace")
	tm.typeID("0427")
	tm.key("Enter")
	tm.waitFor("approved " + id)
	if g := py("get", id); !strings.Contains(g, `"status": "consumed"`) || !strings.Contains(g, `"invalid_attempts": 1`) {
		t.Fatalf("python reads %s", g)
	}
}

// hermesTier2 runs the Python stand-in of Hermes' tier-2 store on db.
func hermesTier2(t *testing.T, db string) func(args ...string) string {
	script, _ := filepath.Abs("../storage/testdata/hermes_tier2.py")
	return func(args ...string) string {
		t.Helper()
		out, err := exec.Command("python3", append([]string{script, db}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("hermes_tier2.py %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
}
