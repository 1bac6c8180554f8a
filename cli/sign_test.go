package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/sshtest"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/storage"
)

// trustRig is a store under trust: mode required, with a trust file that
// names alice and bob (real ed25519 keys made by ssh-keygen), alice the
// one policy signer, and a key of carol's the trust file does not know.
type trustRig struct {
	dir, db, config, signers string
	// keys: private key files by name (alice, bob, carol, alice2).
	keys map[string]string
	pubs map[string]string
}

func needSSHTools(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"ssh-keygen", "ssh-agent", "ssh-add"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (package openssh-client): signed approvals need the real OpenSSH tools", tool)
		}
	}
}

func newTrustRig(t testing.TB) *trustRig {
	t.Helper()
	needSSHTools(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &trustRig{dir: dir, db: filepath.Join(dir, "state.db"), config: filepath.Join(dir, "config.yaml"),
		signers: filepath.Join(dir, "allowed_signers"), keys: map[string]string{}, pubs: map[string]string{}}
	var trusted strings.Builder
	for _, name := range []string{"alice", "bob", "carol", "alice2"} {
		key := sshtest.Keygen(t, filepath.Join(dir, "id_"+name), "ed25519", name+"@laptop")
		pub, err := os.ReadFile(key + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		r.keys[name], r.pubs[name] = key, strings.TrimSpace(string(pub))
		switch name {
		case "alice", "bob":
			trusted.WriteString(name + " " + r.pubs[name] + "\n")
		case "alice2": // a second key of alice's
			trusted.WriteString("alice " + r.pubs[name] + "\n")
		}
	}
	if err := os.WriteFile(r.signers, []byte(trusted.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r.writeConfig(t, "trust:\n  allowed_signers: allowed_signers\n  policy_signers: [alice]\n  store: test-store\n")
	if code, _, stderr := r.run(t, nil, "", "init"); code != 0 {
		t.Fatal(stderr)
	}
	return r
}

func (r *trustRig) writeConfig(t testing.TB, src string) {
	t.Helper()
	if err := os.WriteFile(r.config, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
}

// run executes the CLI in-process with environment env (nothing else of
// this process's), no terminal, and the rig's configuration file.
func (r *trustRig) run(t testing.TB, env map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := newApp(strings.NewReader(stdin), &out, &errb)
	a.isTTY = func() bool { return false }
	a.getenv = r.getenv(env)
	// No system configuration, whatever the host has at
	// config.SystemConfigPath (anchor_e2e_test.go tests one).
	a.systemPath = filepath.Join(r.dir, "etc", "config.yaml")
	code := a.execute(context.Background(), append([]string{"--db", r.db, "--config", r.config}, args...))
	return code, out.String(), errb.String()
}

// getenv is env, with the operator's state directory (the policy memory)
// in the rig's own directory unless env names one.
func (r *trustRig) getenv(env map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := env[k]; ok || k != "XDG_STATE_HOME" {
			return v
		}
		return filepath.Join(r.dir, "state")
	}
}

// submit proposes a command and returns its id.
func (r *trustRig) submit(t testing.TB, command ...string) string {
	t.Helper()
	code, out, stderr := r.run(t, nil, "", append([]string{"submit", "--requester", "ci-bot", "--"}, command...)...)
	if code != 0 {
		t.Fatalf("submit: %d %s", code, stderr)
	}
	return strings.TrimSpace(out)
}

// agent starts a real ssh-agent holding the named keys and returns the
// environment that reaches it.
func (r *trustRig) agent(t testing.TB, names ...string) map[string]string {
	t.Helper()
	var keys []string
	for _, n := range names {
		keys = append(keys, r.keys[n])
	}
	return map[string]string{"SSH_AUTH_SOCK": sshtest.Agent(t, keys...)}
}

// signatures are the store's signature rows of id.
func (r *trustRig) signatures(t testing.TB, id string) []storage.SignatureRecord {
	t.Helper()
	s, err := storage.Open(context.Background(), r.db, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sigs, err := s.Signatures(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return sigs
}

// status is id's effective status.
func (r *trustRig) status(t testing.TB, id string) string {
	t.Helper()
	code, out, stderr := r.run(t, nil, "", "show", "--json", "--", id)
	if code != 0 {
		t.Fatalf("show: %d %s", code, stderr)
	}
	i := strings.Index(out, `"status": "`)
	if i < 0 {
		t.Fatalf("no status in %s", out)
	}
	rest := out[i+len(`"status": "`):]
	return rest[:strings.IndexByte(rest, '"')]
}

// approve under trust required signs with the one key of the agent the
// trust file knows; the signature is stored with the approval and names
// alice, the store, the id and the payload read.
func TestApproveSigned(t *testing.T) {
	r := newTrustRig(t)
	id := r.submit(t, "rm", "-rf", "/srv/data")
	// The agent holds carol's key too, which the trust file does not know.
	env := r.agent(t, "carol", "alice")
	code, out, stderr := r.run(t, env, "", "approve", "--confirm", id, "--", id)
	if code != 0 || out != "approved "+id+"\n" || !strings.Contains(stderr, "signed by alice (SHA256:") {
		t.Fatalf("approve: %d %q %q", code, out, stderr)
	}
	sigs := r.signatures(t, id)
	if len(sigs) != 1 || sigs[0].Principal != "alice" || sigs[0].Event != storage.EventApprove {
		t.Fatalf("signatures: %+v", sigs)
	}
	st := string(sigs[0].Statement)
	for _, want := range []string{"store=test-store\n", "decision=approve\n", "id=" + id + "\n", "principal=alice\n", "payload_sha256="} {
		if !strings.Contains(st, want) {
			t.Errorf("statement %q has no %q", st, want)
		}
	}
	if !strings.HasPrefix(sigs[0].Armored, "-----BEGIN SSH SIGNATURE-----") {
		t.Errorf("armored: %q", sigs[0].Armored)
	}
	// show names the signer, as checked against the trust file.
	code, out, _ = r.run(t, nil, "", "show", "--", id)
	if code != 0 || !regexp.MustCompile(`(?m)^signed: +approve by alice, key SHA256:\S+: verifies$`).MatchString(out) {
		t.Fatalf("show: %d %q", code, out)
	}
	code, out, _ = r.run(t, nil, "", "show", "--json", "--", id)
	if code != 0 || !strings.Contains(out, `"signers": [{"principal": "alice"`) || !strings.Contains(out, `"verified": true`) {
		t.Fatalf("show --json: %d %q", code, out)
	}
}

// Without a key to sign with, nothing is approved, and the message says
// what to do: no agent, an agent of unknown keys only, an agent with two
// keys the trust file knows, a key file the trust file does not know.
func TestApproveUnsignedRefused(t *testing.T) {
	r := newTrustRig(t)
	id := r.submit(t, "rm", "-rf", "/srv/data")
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no agent", nil, nil, "no ssh-agent: SSH_AUTH_SOCK is not set"},
		{"agent gone", map[string]string{"SSH_AUTH_SOCK": filepath.Join(r.dir, "nosock")}, nil, "cannot reach the ssh-agent"},
		{"empty agent", r.agent(t), nil, "the ssh-agent holds no keys"},
		{"unknown key", r.agent(t, "carol"), nil, "none of the ssh-agent's keys (SHA256:"},
		{"two known keys", r.agent(t, "alice", "bob"), nil, "the ssh-agent holds 2 keys the trust file knows"},
		{"unknown key file", nil, []string{"--key", r.keys["carol"]}, "is not in the trust file"},
		{"missing key file", nil, []string{"--key", filepath.Join(r.dir, "nokey")}, "key file"},
	} {
		code, out, stderr := r.run(t, c.env, "", append(append([]string{"approve", "--confirm", id}, c.args...), "--", id)...)
		if code != ExitError || out != "" || !strings.Contains(stderr, "not approved: cannot sign: ") || !strings.Contains(stderr, c.want) ||
			!strings.Contains(stderr, "ssh-add") || !strings.Contains(stderr, id+" is still pending") {
			t.Errorf("%s: %d %q %q", c.name, code, out, stderr)
		}
	}
	if got := r.status(t, id); got != "pending" {
		t.Fatalf("after the refusals: %s", got)
	}
	if sigs := r.signatures(t, id); len(sigs) != 0 {
		t.Fatalf("signatures: %+v", sigs)
	}
	// A key file the trust file knows signs.
	code, _, stderr := r.run(t, nil, "", "approve", "--confirm", id, "--key", r.keys["bob"], "--", id)
	if code != 0 || !strings.Contains(stderr, "signed by bob") {
		t.Fatalf("--key: %d %q", code, stderr)
	}
}

// deny signs where it can; with no key it denies unsigned, saying so.
func TestDenySignedOrUnsigned(t *testing.T) {
	r := newTrustRig(t)
	a, b := r.submit(t, "rm", "-rf", "/a"), r.submit(t, "rm", "-rf", "/b")
	code, out, stderr := r.run(t, r.agent(t, "bob"), "", "deny", "--", a)
	if code != 0 || out != "denied "+a+"\n" || !strings.Contains(stderr, "signed by bob") {
		t.Fatalf("deny signed: %d %q %q", code, out, stderr)
	}
	if sigs := r.signatures(t, a); len(sigs) != 1 || sigs[0].Principal != "bob" || !strings.Contains(string(sigs[0].Statement), "decision=deny\n") {
		t.Fatalf("deny's signature: %+v", sigs)
	}
	code, out, stderr = r.run(t, nil, "", "deny", "--", b)
	if code != 0 || out != "denied "+b+"\n" || !strings.Contains(stderr, "warning: this deny is unsigned (no ssh-agent") {
		t.Fatalf("deny unsigned: %d %q %q", code, out, stderr)
	}
	if sigs := r.signatures(t, b); len(sigs) != 0 {
		t.Fatalf("unsigned deny's signatures: %+v", sigs)
	}
	// A key named with --key must sign: its failure denies nothing.
	c := r.submit(t, "rm", "-rf", "/c")
	code, _, stderr = r.run(t, nil, "", "deny", "--key", r.keys["carol"], "--", c)
	if code != ExitError || !strings.Contains(stderr, "not denied: cannot sign with --key") || r.status(t, c) != "pending" {
		t.Fatalf("deny --key unknown: %d %q", code, stderr)
	}
}

// policy set signs by a policy signer; another principal's key is
// refused before it signs, and nothing is set.
func TestPolicySetSigned(t *testing.T) {
	r := newTrustRig(t)
	file := filepath.Join(r.dir, "policy.yaml")
	if err := os.WriteFile(file, []byte(twoPersonPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := r.run(t, r.agent(t, "bob"), "", "policy", "set", file)
	if code != ExitError || out != "" || !strings.Contains(stderr, "policy not set: bob (SHA256:") ||
		!strings.Contains(stderr, "trust: policy_signers is [alice]") {
		t.Fatalf("bob: %d %q %q", code, out, stderr)
	}
	code, out, stderr = r.run(t, nil, "", "policy", "set", file)
	if code != ExitError || !strings.Contains(stderr, "policy not set: cannot sign: no ssh-agent") {
		t.Fatalf("no agent: %d %q %q", code, out, stderr)
	}
	code, out, stderr = r.run(t, r.agent(t, "alice"), "", "policy", "set", file)
	if code != 0 || !strings.HasPrefix(out, "policy v1 in force") || !strings.Contains(stderr, "signed by alice") {
		t.Fatalf("alice: %d %q %q", code, out, stderr)
	}
	sigs := r.signatures(t, storage.PolicyRef)
	if len(sigs) != 1 || sigs[0].Event != storage.EventPolicySet || !strings.Contains(string(sigs[0].Statement), "decision=policy\npolicy_sha256="+sha256Text([]byte(twoPersonPolicy))+"\n") {
		t.Fatalf("policy signatures: %+v", sigs)
	}
	// policy show names who signed the version in force.
	code, out, _ = r.run(t, nil, "", "policy", "show")
	if code != 0 || !regexp.MustCompile(`(?m)^signed by: +alice \(SHA256:\S+\), `).MatchString(out) {
		t.Fatalf("policy show: %d %q", code, out)
	}
	code, out, _ = r.run(t, nil, "", "policy", "show", "--json")
	if code != 0 || !strings.Contains(out, `"signed_by": "alice"`) {
		t.Fatalf("policy show --json: %d %q", code, out)
	}
}

// A trust file others may write, or none at all, stops every command that
// opens the store, saying which file and where it is configured.
func TestTrustFileRefused(t *testing.T) {
	r := newTrustRig(t)
	id := r.submit(t, "true")
	if err := os.Chmod(r.signers, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"approve", "--confirm", id, "--", id}, {"list"}, {"submit", "--", "ls"}} {
		code, _, stderr := r.run(t, r.agent(t, "alice"), "", args...)
		if code != ExitError || !strings.Contains(stderr, r.config+":1: trust: allowed_signers") || !strings.Contains(stderr, r.signers) {
			t.Errorf("%v: %d %q", args, code, stderr)
		}
	}
	if err := os.Remove(r.signers); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := r.run(t, r.agent(t, "alice"), "", "approve", "--confirm", id, "--", id)
	if code != ExitError || !strings.Contains(stderr, "allowed_signers") {
		t.Errorf("missing trust file: %d %q", code, stderr)
	}
	// Mode off: no trust file needed, nothing signed.
	r.writeConfig(t, "trust: {mode: off, allowed_signers: allowed_signers}\n")
	code, _, stderr = r.run(t, nil, "", "approve", "--confirm", id, "--", id)
	if code != 0 || strings.Contains(stderr, "signed") {
		t.Fatalf("mode off: %d %q", code, stderr)
	}
	if sigs := r.signatures(t, id); len(sigs) != 0 {
		t.Fatalf("mode off signatures: %+v", sigs)
	}
}

// show --signatures prints each signature with the lines that check it:
// run as printed, in a shell, the real ssh-keygen -Y verify accepts it; a
// forged row is shown as not verifying, and ssh-keygen refuses it too.
func TestShowSignaturesVerifyWithSSHKeygen(t *testing.T) {
	r := newTrustRig(t)
	id := r.submit(t, "rm", "-rf", "/srv/data")
	if code, _, stderr := r.run(t, r.agent(t, "alice"), "", "approve", "--confirm", id, "--", id); code != 0 {
		t.Fatalf("approve: %d %s", code, stderr)
	}
	code, out, stderr := r.run(t, nil, "", "show", "--signatures", "--json", "--", id)
	if code != 0 {
		t.Fatalf("show --signatures --json: %d %s", code, stderr)
	}
	var got struct {
		ID, Store  string
		TrustFile  string `json:"trust_file"`
		Signatures []struct {
			Principal, Decision, Key, Statement, Signature, Event string
			Verified                                              bool
			Problem                                               *string
			WriteStatement                                        string `json:"write_statement"`
			WriteSignature                                        string `json:"write_signature"`
			VerifyCommand                                         string `json:"verify_command"`
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.ID != id || got.Store != "test-store" || got.TrustFile != r.signers || len(got.Signatures) != 1 {
		t.Fatalf("%s", out)
	}
	sg := got.Signatures[0]
	if sg.Principal != "alice" || sg.Decision != "approve" || sg.Event != "approve" || !sg.Verified || sg.Problem != nil ||
		!strings.HasPrefix(sg.Key, "SHA256:") || !strings.HasPrefix(sg.Signature, "-----BEGIN SSH SIGNATURE-----") {
		t.Fatalf("signature: %+v", sg)
	}
	want := "ssh-keygen -Y verify -f " + r.signers + " -I alice -n approve-tui -s sig-1.sig < sig-1.statement"
	if sg.VerifyCommand != want {
		t.Fatalf("verify command %q, want %q", sg.VerifyCommand, want)
	}
	sh := func(script string) (string, error) {
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = t.TempDir()
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	if out, err := sh(sg.WriteStatement + "\n" + sg.WriteSignature + "\n" + sg.VerifyCommand); err != nil || !strings.Contains(out, `Good "approve-tui" signature for alice`) {
		t.Fatalf("ssh-keygen -Y verify: %v %s", err, out)
	}
	// The text says the same, and its lines run as they are.
	code, text, _ := r.run(t, nil, "", "show", "--signatures", "--", id)
	if code != 0 || !strings.Contains(text, "signature 1 of 1 on "+id+": approve, signed ") ||
		!strings.Contains(text, "verifies against "+r.signers+": yes (line 1)") {
		t.Fatalf("text: %d %s", code, text)
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "echo ") || strings.HasPrefix(l, "ssh-keygen ") {
			lines = append(lines, l)
		}
	}
	if out, err := sh(strings.Join(lines, "\n")); len(lines) != 3 || err != nil || !strings.Contains(out, "Good") {
		t.Fatalf("the text's lines %q: %v %s", lines, err, out)
	}

	// A row rewritten to name bob: not verified, and ssh-keygen, asked
	// for bob as the printed line does, refuses it.
	db, err := sql.Open("sqlite", r.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmt := strings.Replace(string(mustStatement(t, r, id)), "principal=alice", "principal=bob", 1)
	if _, err := db.Exec(`UPDATE approve_tui_signatures SET principal = 'bob', statement = ? WHERE approval_id = ?`, stmt, id); err != nil {
		t.Fatal(err)
	}
	code, out, _ = r.run(t, nil, "", "show", "--signatures", "--json", "--", id)
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("%d %v %s", code, err, out)
	}
	sg = got.Signatures[0]
	if sg.Verified || sg.Problem == nil || !strings.Contains(*sg.Problem, "bad_signature") || sg.Principal != "bob" {
		t.Fatalf("forged row: %+v", sg)
	}
	if out, err := sh(sg.WriteStatement + "\n" + sg.WriteSignature + "\n" + sg.VerifyCommand); err == nil {
		t.Fatalf("ssh-keygen accepted the forged row: %s", out)
	}
}

// mustStatement is the statement stored with id's one signature.
func mustStatement(t *testing.T, r *trustRig, id string) []byte {
	t.Helper()
	sigs := r.signatures(t, id)
	if len(sigs) != 1 {
		t.Fatalf("signatures of %s: %+v", id, sigs)
	}
	return sigs[0].Statement
}

// rechain recomputes the audit log's keyless hash chain and head, as
// anyone who may write the file can.
func rechain(t *testing.T, db *sql.DB) {
	t.Helper()
	rows, err := db.Query(`SELECT seq, at, approval_id, event, outcome, reason, actor, surface, detail FROM approve_tui_audit ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		seq                                                    int64
		at                                                     float64
		id, event, outcome, reason, actor, surface, detail, hh string
	}
	var evs []ev
	for rows.Next() {
		var e ev
		if err := rows.Scan(&e.seq, &e.at, &e.id, &e.event, &e.outcome, &e.reason, &e.actor, &e.surface, &e.detail); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	rows.Close()
	prev := strings.Repeat("0", 64)
	for _, e := range evs {
		var b []byte
		for _, f := range []string{strconv.FormatInt(e.seq, 10), strconv.FormatFloat(e.at, 'g', -1, 64), e.id, e.event, e.outcome, e.reason, e.actor, e.surface, e.detail, prev} {
			b = binary.BigEndian.AppendUint64(b, uint64(len(f)))
			b = append(b, f...)
		}
		sum := sha256.Sum256(b)
		h := hex.EncodeToString(sum[:])
		if _, err := db.Exec(`UPDATE approve_tui_audit SET prev_hash = ?, hash = ? WHERE seq = ?`, prev, h, e.seq); err != nil {
			t.Fatal(err)
		}
		prev = h
	}
	if _, err := db.Exec(`UPDATE approve_tui_meta SET value = ? WHERE key = 'audit_head'`, fmt.Sprintf("%d:%s", evs[len(evs)-1].seq, prev)); err != nil {
		t.Fatal(err)
	}
}

// audit --verify --signers checks every signature against the log: a
// rewritten signer with the chain recomputed (the keyless chain says
// intact), a signature copied onto another proposal with a forged approve
// event, a signature row with no decision, and a forged approve event with
// no signature are each reported, and audit exits 7.
func TestAuditVerifySigners(t *testing.T) {
	r := newTrustRig(t)
	file := filepath.Join(r.dir, "policy.yaml")
	if err := os.WriteFile(file, []byte(twoPersonPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	alice, bob := r.agent(t, "alice"), r.agent(t, "bob")
	if code, _, stderr := r.run(t, alice, "", "policy", "set", file); code != 0 {
		t.Fatal(stderr)
	}
	a, b, c := r.submit(t, "rm", "-rf", "/a"), r.submit(t, "rm", "-rf", "/b"), r.submit(t, "rm", "-rf", "/c")
	if code, _, stderr := r.run(t, alice, "", "approve", "--confirm", a, "--", a); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := r.run(t, bob, "", "deny", "--", b); code != 0 {
		t.Fatal(stderr)
	}
	code, out, stderr := r.run(t, nil, "", "audit", "--verify", "--signers", r.signers)
	if code != 0 || !strings.Contains(out, "signatures valid: 3 of 3 against "+r.signers) {
		t.Fatalf("clean: %d %q %q", code, out, stderr)
	}
	if code, _, stderr := r.run(t, nil, "", "audit", "--signers", r.signers); code != ExitUsage || !strings.Contains(stderr, "--signers goes with --verify") {
		t.Fatalf("--signers alone: %d %q", code, stderr)
	}

	db, err := sql.Open("sqlite", r.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// The approval of a rewritten as bob's: the event's actor and detail
	// and the signature row; the chain recomputed.
	exec(`UPDATE approve_tui_audit SET actor = 'bob (SHA256:forged)', detail = json_set(detail, '$.signed_by', 'bob') WHERE approval_id = ? AND event = 'approve'`, a)
	exec(`UPDATE approve_tui_signatures SET principal = 'bob' WHERE approval_id = ?`, a)
	rechain(t, db)
	if code, out, _ := r.run(t, nil, "", "audit", "--verify"); code != 0 || !strings.HasPrefix(out, "audit log intact") {
		t.Fatalf("the recomputed chain: %d %q", code, out)
	}
	code, out, _ = r.run(t, nil, "", "audit", "--verify", "--signers", r.signers)
	if code != ExitTampered || !strings.Contains(out, "on "+a+" (approve, by bob)") || !strings.Contains(out, "the row says principal bob, the signature alice") {
		t.Fatalf("rewritten signer: %d %q", code, out)
	}
	// The row put back, the event still says bob.
	exec(`UPDATE approve_tui_signatures SET principal = 'alice' WHERE approval_id = ?`, a)
	code, out, _ = r.run(t, nil, "", "audit", "--verify", "--signers", r.signers)
	if code != ExitTampered || !strings.Contains(out, "says it was signed by bob") {
		t.Fatalf("rewritten event: %d %q", code, out)
	}
	exec(`UPDATE approve_tui_audit SET detail = json_remove(detail, '$.signed_by') WHERE approval_id = ? AND event = 'approve'`, a)
	rechain(t, db)
	if code, out, _ := r.run(t, nil, "", "audit", "--verify", "--signers", r.signers); code != 0 {
		t.Fatalf("put back: %d %q", code, out)
	}

	// c approved by the agent: a's signature copied onto it, an approve
	// event forged, the chain recomputed.
	exec(`UPDATE gateway_approvals SET status = 'consumed' WHERE approval_id = ?`, c)
	exec(`INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at)
		SELECT ?, event, principal, key_fp, statement, signature, at FROM approve_tui_signatures WHERE approval_id = ?`, c, a)
	exec(`INSERT INTO approve_tui_audit (at, approval_id, event, outcome, reason, actor, surface, detail, prev_hash, hash)
		SELECT at + 1, ?, event, outcome, reason, actor, surface, detail, '', '' FROM approve_tui_audit WHERE approval_id = ? AND event = 'approve'`, c, a)
	// A signature row that no decision stands for, and a forged approve
	// event with none.
	exec(`INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at) VALUES (?, 'vote', 'alice', 'SHA256:x', 'x', 'x', 0)`, b)
	exec(`INSERT INTO approve_tui_audit (at, approval_id, event, outcome, reason, actor, surface, detail, prev_hash, hash)
		VALUES (?, ?, 'approve', 'ok', '', 'alice', 'cli', '{}', '', '')`, float64(time.Now().Unix()), b)
	rechain(t, db)
	code, out, _ = r.run(t, nil, "", "audit", "--verify", "--signers", r.signers)
	for _, want := range []string{
		"on " + c + " (approve, by alice), audit event ", "statement_mismatch", // a's statement names a
		"on " + b + " (vote, by alice): the audit log records no such decision for it",
		"(approve of " + b + " by alice) carries no signature",
	} {
		if code != ExitTampered || !strings.Contains(out, want) {
			t.Errorf("forgeries: %d, no %q in\n%s", code, want, out)
		}
	}
	code, out, _ = r.run(t, nil, "", "audit", "--verify", "--json", "--signers", r.signers)
	var res struct {
		OK         bool
		Signatures struct {
			Checked, Valid int
			Problems       []string
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != ExitTampered || res.OK || res.Signatures.Checked != 5 || res.Signatures.Valid != 3 || len(res.Signatures.Problems) != 3 {
		t.Fatalf("--json: %d %v %s", code, err, out)
	}
}

// config check says which trust mode is in force and why, whether the
// agent reached holds a key the trust file knows, and which policy
// signers the trust file does not name; a trust file others may write is
// a problem.
func TestConfigCheckTrust(t *testing.T) {
	r := newTrustRig(t)
	code, out, stderr := r.run(t, r.agent(t, "alice", "carol"), "", "config", "check")
	for _, want := range []string{
		"trust: required: trust: allowed_signers is set (line 1)",
		"trust file " + r.signers + ": 3 keys, principals alice, bob",
		"store identity in statements: test-store",
		"policy signers: alice",
		": alice in the trust file",
		": not usable: key SHA256:",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("no %q in (%d)\n%s%s", want, code, out, stderr)
		}
	}
	// This user holds alice's key, and the configuration does not say
	// this user signs as alice: an agent running as this user could
	// approve its own proposals with it.
	me := agent.RequesterNames()
	if len(me) == 0 {
		t.Skip("this user has no name in the user database")
	}
	if !strings.Contains(out, "warning: this user ("+me[0]+") holds alice's key in its ssh-agent") {
		t.Errorf("no warning of the user's own key:\n%s", out)
	}
	r.writeConfig(t, "trust:\n  allowed_signers: allowed_signers\n  policy_signers: [alice]\n  store: test-store\n  users: {"+me[0]+": alice}\n")
	_, out, _ = r.run(t, r.agent(t, "alice", "carol"), "", "config", "check")
	// No system configuration here: the one warning says the agent side's
	// trust can be turned off by whoever writes this file.
	if strings.Count(out, "warning:") != 1 || !strings.Contains(out, "warning: no system configuration at "+filepath.Join(r.dir, "etc", "config.yaml")+": ") {
		t.Errorf("warnings where none is due:\n%s", out)
	}
	r.writeConfig(t, "trust:\n  allowed_signers: allowed_signers\n  policy_signers: [alice, dave]\n")
	code, out, _ = r.run(t, nil, "", "config", "check")
	for _, want := range []string{
		"warning: trust: policy_signers names dave, whom the trust file does not",
		"warning: no ssh-agent (SSH_AUTH_SOCK is not set)",
		"store identity in statements: sqlite:" + r.db,
		"warning: trust: store is not set: statements name the store by its path or address",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("no %q in (%d)\n%s", want, code, out)
		}
	}
	code, out, _ = r.run(t, r.agent(t, "carol"), "", "--json", "config", "check")
	var res struct {
		OK       bool
		Warnings []string
		Trust    struct {
			Mode      string
			AgentKeys []struct {
				Principal *string
				Problem   *string
			} `json:"agent_keys"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || !res.OK || res.Trust.Mode != "required" ||
		len(res.Trust.AgentKeys) != 1 || res.Trust.AgentKeys[0].Principal != nil || !strings.Contains(strings.Join(res.Warnings, "\n"), "none of the ssh-agent's keys is in the trust file") {
		t.Fatalf("--json: %d %v %s", code, err, out)
	}
	if err := os.Chmod(r.signers, 0o666); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = r.run(t, nil, "", "config", "check")
	if code != ExitError || !strings.Contains(stderr, r.config+":1:1: trust: ") || !strings.Contains(stderr, r.signers) {
		t.Fatalf("writable trust file: %d %q", code, stderr)
	}
	r.writeConfig(t, "trust: {mode: off, allowed_signers: allowed_signers}\n")
	if code, out, _ := r.run(t, nil, "", "config", "check"); code != 0 || !strings.Contains(out, "trust: off: trust: mode: off (line 1)") {
		t.Fatalf("mode off: %d %s", code, out)
	}
}

// A watcher (--read-only) is refused by the store, as ever: it is not
// asked for a signature first.
func TestWatcherNotAskedToSign(t *testing.T) {
	r := newTrustRig(t)
	id := r.submit(t, "rm", "-rf", "/srv/data")
	code, _, stderr := r.run(t, nil, "", "--read-only", "approve", "--confirm", id, "--", id)
	if code != ExitUnavailable || strings.Contains(stderr, "sign") {
		t.Fatalf("watcher approve: %d %q", code, stderr)
	}
	code, _, stderr = r.run(t, nil, "", "--read-only", "deny", "--", id)
	if code != ExitUnavailable || strings.Contains(stderr, "sign") {
		t.Fatalf("watcher deny: %d %q", code, stderr)
	}
}

// On a terminal the approver is who their key says: the vote note speaks
// of alice, not of the OS user who submitted it; with no key to sign
// with, approve says so before asking for the id.
func TestApproveOnTerminalSigned(t *testing.T) {
	r := newTrustRig(t)
	file := filepath.Join(r.dir, "policy.yaml")
	if err := os.WriteFile(file, []byte(twoPersonPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	alice := r.agent(t, "alice")
	if code, _, stderr := r.run(t, alice, "", "policy", "set", file); code != 0 {
		t.Fatal(stderr)
	}
	code, out, stderr := r.run(t, nil, "", "submit", "--session", "agent:prod:db", "--requester", "ci-bot", "--", "rm", "-rf", "/srv/data")
	if code != 0 {
		t.Fatal(stderr)
	}
	id := strings.TrimSpace(out)
	tty := func(env map[string]string, stdin string, args ...string) (int, string, string) {
		var o, e bytes.Buffer
		a := newApp(strings.NewReader(stdin), &o, &e)
		a.isTTY = func() bool { return true }
		a.getenv = r.getenv(env)
		code := a.execute(context.Background(), append([]string{"--db", r.db, "--config", r.config}, args...))
		return code, o.String(), e.String()
	}
	code, _, stderr = tty(nil, id+"\n", "approve", "--", id)
	if code != ExitError || !strings.Contains(stderr, "not approved: cannot sign: no ssh-agent") || strings.Contains(stderr, "Type the approval id") {
		t.Fatalf("no agent: %d %q", code, stderr)
	}
	// What the store then decides of the vote is the store's (it counts
	// it for the key's principal where it verifies signatures).
	_, _, stderr = tty(alice, id+"\n", "approve", "--", id)
	i := strings.Index(stderr, "Type the approval id")
	if i < 0 {
		t.Fatalf("alice was not asked for the id: %q", stderr)
	}
	note := stderr[:i]
	if !strings.Contains(note, "This approval is a vote") || strings.Contains(note, "You (root)") || strings.Contains(note, "asked for it:") ||
		!strings.Contains(stderr, "signed by alice") {
		t.Fatalf("alice: %q", stderr)
	}
}
