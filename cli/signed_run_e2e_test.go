package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/approve-tui/approve-tui/internal/sshtest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// signedRig is `approve-tui run` (the real binary) under trust required,
// with a trust file naming alice, bob and carol (carol may sign
// policies), their keys made by the real ssh-keygen, alice's and bob's
// each held by their own real ssh-agent. Operators sign through their
// agents here, in the test process, and decide through the store; the
// agent's forgeries are made with python3's sqlite3, as its user could.
type signedRig struct {
	t       *testing.T
	dir     string
	bin     string
	db      string
	cfg     string
	set     *trust.Settings
	signers map[string]*trust.StatementSigner
}

func newSignedRig(t *testing.T) *signedRig {
	t.Helper()
	for _, tool := range []string{"ssh-keygen", "ssh-agent", "ssh-add", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: needed to sign with real keys and forge with sqlite3", tool)
		}
	}
	if os.Geteuid() != 0 {
		// The agent side refuses a trust file its own user owns or may
		// write; one owned by another user needs root to make.
		t.Skip("needs root: the agent side's trust file must be owned by someone other than the user running the test")
	}
	dir, err := os.MkdirTemp("", "approve-tui-signed-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	r := &signedRig{t: t, dir: dir, db: filepath.Join(dir, "state.db"), signers: map[string]*trust.StatementSigner{}}
	r.bin = buildBinary(t, dir)
	var lines []string
	for _, name := range []string{"alice", "bob", "carol"} {
		key := r.keygen(name)
		var sg *trust.StatementSigner
		if name == "carol" {
			sg, err = trust.KeyFileSigner(key)
		} else {
			sg, err = trust.DialAgent(r.sshAgent(name, key), "")
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sg.Close() })
		r.signers[name] = sg
		lines = append(lines, name+" "+r.pub(key))
	}
	trustFile := filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(trustFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.cfg = filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(r.cfg, []byte("trust:\n  mode: required\n  allowed_signers: "+trustFile+"\n  policy_signers: [carol]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := config.Load(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.set, err = f.TrustSettings(storage.DefaultIdentity(r.db), config.OperatorSide); err != nil {
		t.Fatal(err)
	}
	// The store, and a two-person policy carol signed.
	s := r.open()
	defer s.Close()
	src := "groups:\n  dba: [alice, bob]\npolicy:\n  - match: {risk: low}\n    approvals: 2\n"
	p, err := config.ParsePolicy("policy.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(src))
	sig, err := r.set.SignDecision(r.signers["carol"], trust.Statement{Decision: trust.DecisionPolicy, PolicySHA256: hex.EncodeToString(sum[:])}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SetPolicy(context.Background(), []byte(src), p, r.operator("carol", sig)); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *signedRig) keygen(name string) string {
	r.t.Helper()
	key := filepath.Join(r.dir, "id_"+name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name+"@laptop", "-f", key).CombinedOutput(); err != nil {
		r.t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	return key
}

func (r *signedRig) pub(key string) string {
	r.t.Helper()
	b, err := os.ReadFile(key + ".pub")
	if err != nil {
		r.t.Fatal(err)
	}
	f := strings.Fields(string(b))
	return f[0] + " " + f[1]
}

// sshAgent starts name's own ssh-agent holding key, and returns its socket.
func (r *signedRig) sshAgent(name, key string) string {
	r.t.Helper()
	sock := filepath.Join(r.dir, name+".agent")
	sshtest.StartAgent(r.t, sock)
	sshtest.AddKeys(r.t, sock, nil, key)
	return sock
}

func (r *signedRig) open() *storage.Store {
	r.t.Helper()
	s, err := storage.Open(context.Background(), r.db, storage.Options{Create: true, BusyTimeout: 5 * time.Second})
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

func (r *signedRig) operator(name string, sig *model.Signature) model.Actor {
	return model.Actor{Surface: model.SurfaceCLI, Name: name + "@desk", Person: name, Key: sig.Key, Signature: sig}
}

// sign is name's signed approval of rec, for store (the rig's own
// identity when "").
func (r *signedRig) sign(name string, rec *storage.Record, store string) *model.Signature {
	r.t.Helper()
	set := *r.set
	if store != "" {
		set.Store = store
	}
	sig, err := set.SignDecision(r.signers[name], trust.Statement{Decision: trust.DecisionApprove, ApprovalID: rec.ApprovalID,
		PayloadSHA256: rec.PayloadSHA256, Risk: string(rec.RiskLevel)}, time.Now())
	if err != nil {
		r.t.Fatal(err)
	}
	return sig
}

// approve decides as name, signed, through the store: a vote or the consume.
func (r *signedRig) approve(name string, rec *storage.Record) error {
	r.t.Helper()
	s := r.open()
	defer s.Close()
	_, err := s.Consume(context.Background(), rec.ApprovalID, rec.ApprovalID, r.operator(name, r.sign(name, rec, "")))
	return err
}

// runProc is one `approve-tui run` process.
type runProc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
}

// start runs `approve-tui run -- rm -rf TARGET` and returns it, its target
// and its proposal once it waits.
func (r *signedRig) start() (*runProc, string, *storage.Record) {
	r.t.Helper()
	target, err := os.MkdirTemp(r.dir, "target-")
	if err != nil {
		r.t.Fatal(err)
	}
	p := &runProc{done: make(chan error, 1)}
	p.cmd = exec.Command(r.bin, "--db", r.db, "--config", r.cfg, "run", "--cwd", r.dir, "--", "rm", "-rf", target)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	r.t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	rec := r.awaitRecord(func(x *storage.Record) bool { return strings.Contains(x.Command, target) },
		func() string { return "run never submitted: " + p.stderr.String() })
	return p, target, rec
}

func (p *runProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-p.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		t.Fatalf("run did not end: %s", p.stderr.String())
	}
	return -1
}

// refused checks that run refused id at execution: exit 14, the words
// said, the target untouched, blocked_after_consume signature_invalid.
func (r *signedRig) refused(p *runProc, target, id string, words ...string) {
	r.t.Helper()
	code := p.wait(r.t)
	msg := p.stderr.String()
	if code != agent.ExitBlocked {
		r.t.Fatalf("run exited %d, want %d:\n%s", code, agent.ExitBlocked, msg)
	}
	for _, w := range words {
		if !strings.Contains(msg, w) {
			r.t.Errorf("run's message does not say %q:\n%s", w, msg)
		}
	}
	if _, err := os.Stat(target); err != nil {
		r.t.Fatalf("the command ran: %v", err)
	}
	rec := readStore(r.t, r.db, func(ctx context.Context, s *storage.Store) (*storage.Record, error) { return s.Get(ctx, id) })
	if rec.ExecutionStatus != model.ExecBlockedAfterConsume || rec.ExecutionReason != agent.ReasonSignatureInvalid {
		r.t.Fatalf("recorded %s %q, want blocked_after_consume signature_invalid", rec.ExecutionStatus, rec.ExecutionReason)
	}
}

// insertSig stores sig on id from python3's sqlite3, as the agent could.
func (r *signedRig) insertSig(id string, sig *model.Signature) {
	r.t.Helper()
	pySQL(r.t, r.db, `INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at) VALUES (?, 'approve', ?, ?, ?, ?, CAST(strftime('%s','now') AS REAL))`,
		id, sig.Principal, sig.Key, string(sig.Statement), sig.Armored)
}

// consume marks id consumed from python3's sqlite3, as Hermes' own
// /approve does.
func (r *signedRig) consume(id string) {
	r.t.Helper()
	pySQL(r.t, r.db, `UPDATE gateway_approvals SET status = 'consumed', consumed_at = CAST(strftime('%s','now') AS REAL), consumed_by = 'hermes' WHERE approval_id = ? AND status = 'pending'`, id)
}

// Two operators, each with their own ssh-agent, approve under a
// two-person policy: the real `run` runs the command.
func TestSignedRunTwoOperatorsE2E(t *testing.T) {
	r := newSignedRig(t)
	p, target, rec := r.start()
	var v *storage.VoteRecorded
	if err := r.approve("alice", rec); !errors.As(err, &v) {
		t.Fatalf("alice: %v, want a vote", err)
	}
	if err := r.approve("bob", rec); err != nil {
		t.Fatalf("bob: %v", err)
	}
	if code := p.wait(t); code != 0 {
		t.Fatalf("run exited %d:\n%s", code, p.stderr.String())
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("the approved command did not run: %v\n%s", err, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "signed by alice, bob (2 of 2)") {
		t.Fatalf("run does not say who signed:\n%s", p.stderr.String())
	}
}

// Every forgery from the agent's own user is refused where the command
// runs, by the real `run`.
func TestSignedRunForgeriesE2E(t *testing.T) {
	r := newSignedRig(t)

	t.Run("unsigned approval, consumed in SQLite as Hermes' /approve does", func(t *testing.T) {
		r.t = t
		p, target, rec := r.start()
		r.consume(rec.ApprovalID)
		r.refused(p, target, rec.ApprovalID, "not signed")
	})
	t.Run("a vote row for bob written with sqlite3", func(t *testing.T) {
		r.t = t
		p, target, rec := r.start()
		var v *storage.VoteRecorded
		if err := r.approve("alice", rec); !errors.As(err, &v) {
			t.Fatalf("alice: %v", err)
		}
		pySQL(t, r.db, `INSERT INTO approve_tui_votes (approval_id, actor, surface, person, key_fp, payload_sha256, at) VALUES (?, 'bob@desk', 'cli', 'bob', '', ?, CAST(strftime('%s','now') AS REAL))`,
			rec.ApprovalID, rec.PayloadSHA256)
		r.consume(rec.ApprovalID)
		r.refused(p, target, rec.ApprovalID, "1 of 2")
	})
	t.Run("two self-made keys not in the trust file", func(t *testing.T) {
		r.t = t
		p, target, rec := r.start()
		for _, name := range []string{"alice", "bob"} {
			sg, err := trust.KeyFileSigner(r.keygen("mallory-as-" + name))
			if err != nil {
				t.Fatal(err)
			}
			b, err := trust.Statement{Store: r.set.Store, Decision: trust.DecisionApprove, ApprovalID: rec.ApprovalID, PayloadSHA256: rec.PayloadSHA256,
				Risk: string(rec.RiskLevel), Principal: name, Time: time.Now()}.Encode()
			if err != nil {
				t.Fatal(err)
			}
			armored, err := sg.Sign(b)
			if err != nil {
				t.Fatal(err)
			}
			r.insertSig(rec.ApprovalID, &model.Signature{Principal: name, Key: sg.Fingerprint(), Statement: b, Armored: string(armored)})
		}
		r.consume(rec.ApprovalID)
		r.refused(p, target, rec.ApprovalID, "unknown key", "0 of 2")
	})
	t.Run("signatures copied from another proposal", func(t *testing.T) {
		r.t = t
		// Another proposal, really approved by both.
		p1, _, rec1 := r.start()
		if err := r.approve("alice", rec1); err == nil {
			t.Fatal("one signature completed a two-person policy")
		}
		if err := r.approve("bob", rec1); err != nil {
			t.Fatal(err)
		}
		if code := p1.wait(t); code != 0 {
			t.Fatalf("the approved one: exit %d: %s", code, p1.stderr.String())
		}
		p, target, rec := r.start()
		pySQL(t, r.db, `INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at)
			SELECT ?, event, principal, key_fp, statement, signature, at FROM approve_tui_signatures WHERE approval_id = ?`, rec.ApprovalID, rec1.ApprovalID)
		r.consume(rec.ApprovalID)
		r.refused(p, target, rec.ApprovalID, "signed for something else", "signed for id")
	})
	t.Run("signatures from another store", func(t *testing.T) {
		r.t = t
		p, target, rec := r.start()
		for _, name := range []string{"alice", "bob"} {
			r.insertSig(rec.ApprovalID, r.sign(name, rec, "sqlite:/srv/other/state.db"))
		}
		r.consume(rec.ApprovalID)
		r.refused(p, target, rec.ApprovalID, "signed for store")
	})
	t.Run("the payload rewritten after signing", func(t *testing.T) {
		r.t = t
		p, target, rec := r.start()
		a, b := r.sign("alice", rec, ""), r.sign("bob", rec, "")
		// The requester the operators read is rewritten, and the submit
		// record's hash with it in the same transaction, so the row does
		// not read as tampered.
		raw, err := sql.Open("sqlite", "file:"+r.db+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		var payload string
		err = raw.QueryRow(`SELECT payload_json FROM gateway_approvals WHERE approval_id = ?`, rec.ApprovalID).Scan(&payload)
		raw.Close()
		if err != nil {
			t.Fatal(err)
		}
		forged := strings.Replace(payload, "approve-tui-run", "nothing-to-see", 1)
		if forged == payload {
			t.Fatal("nothing to rewrite in the payload")
		}
		sum := sha256.Sum256([]byte(forged))
		pyTx(t, r.db,
			[]string{`UPDATE gateway_approvals SET payload_json = ? WHERE approval_id = ?`, forged, rec.ApprovalID},
			[]string{`UPDATE approve_tui_audit SET detail = replace(detail, ?, ?) WHERE approval_id = ? AND event = 'submit'`, rec.PayloadSHA256, hex.EncodeToString(sum[:]), rec.ApprovalID})
		r.insertSig(rec.ApprovalID, a)
		r.insertSig(rec.ApprovalID, b)
		r.consume(rec.ApprovalID)
		r.refused(p, target, rec.ApprovalID, "signed for payload_sha256")
	})
	t.Run("a policy row INSERTed with no rules", func(t *testing.T) {
		r.t = t
		pySQL(t, r.db, `INSERT INTO approve_tui_policy (version, sha256, source, rules, set_at, set_by)
			SELECT version + 1, ?, '', ?, set_at, set_by FROM approve_tui_policy ORDER BY version DESC LIMIT 1`,
			fmt.Sprintf("%x", sha256.Sum256(nil)), string((&policy.Policy{}).Encode()))
		p, target, rec := r.start()
		// The store now reads no rule: alice alone completes it there.
		if err := r.approve("alice", rec); err != nil {
			t.Logf("alice (the store refused on its own, so the agent consumes it): %v", err)
			r.consume(rec.ApprovalID)
		}
		r.refused(p, target, rec.ApprovalID, "1 of 2", "signed by carol")
	})
}

// pyTx runs statements (each the SQL and its arguments) in one
// transaction from python3's sqlite3, as the agent's user could.
func pyTx(t *testing.T, db string, stmts ...[]string) {
	t.Helper()
	js, err := json.Marshal(stmts)
	if err != nil {
		t.Fatal(err)
	}
	py := `import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for s in json.loads(sys.stdin.read()):
    c.execute(s[0], s[1:])
c.commit()
c.close()`
	cmd := exec.Command("python3", "-c", py, db)
	cmd.Stdin = bytes.NewReader(js)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python3: %v %s", err, out)
	}
}

// hookProc is one `approve-tui hook AGENT` process of the real binary.
type hookProc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
}

func (r *signedRig) startHook(agentName string, input []byte) *hookProc {
	r.t.Helper()
	h := &hookProc{done: make(chan error, 1)}
	h.cmd = exec.Command(r.bin, "--db", r.db, "--config", r.cfg, "hook", agentName)
	h.cmd.Stdin = bytes.NewReader(input)
	h.cmd.Stdout, h.cmd.Stderr = &h.stdout, &h.stderr
	if err := h.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	go func() { h.done <- h.cmd.Wait() }()
	r.t.Cleanup(func() { _ = h.cmd.Process.Kill() })
	return h
}

func (h *hookProc) answer(t *testing.T) string {
	t.Helper()
	select {
	case <-h.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the hook did not answer: %s", h.stderr.String())
	}
	return strings.TrimSpace(h.stdout.String())
}

// pendingWith waits for the pending proposal whose command is command.
func (r *signedRig) pendingWith(command string) *storage.Record {
	r.t.Helper()
	return r.awaitRecord(func(x *storage.Record) bool {
		return x.Command == command && x.EffectiveStatus == model.StatusPending
	}, func() string { return fmt.Sprintf("no proposal for %q", command) })
}

// awaitRecord waits (up to 20s) for a proposal in the store that match
// says yes to; failed says what never came.
func (r *signedRig) awaitRecord(match func(*storage.Record) bool, failed func() string) *storage.Record {
	r.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			r.t.Fatalf("%s", failed())
		}
		s, err := storage.Open(context.Background(), r.db, storage.Options{ReadOnly: true})
		if err != nil {
			continue
		}
		recs, err := s.List(context.Background(), storage.ListOptions{})
		s.Close()
		for _, x := range recs {
			if err == nil && match(x) {
				return x
			}
		}
	}
}

// Hermes' own /approve in its chat marks the row consumed and signs
// nothing: `hook hermes` answers deny, saying why; an approval signed by
// both operators is answered once.
func TestSignedHookHermesE2E(t *testing.T) {
	r := newSignedRig(t)
	for _, signed := range []bool{false, true} {
		t.Run(fmt.Sprint("signed=", signed), func(t *testing.T) {
			r.t = t
			command := fmt.Sprintf("rm -rf /srv/app/cache-%v", signed)
			h := r.startHook("hermes", hermesHookInput(fmt.Sprint("req-signed-", signed), command, 120, time.Now()))
			rec := r.pendingWith(command)
			if signed {
				if err := r.approve("alice", rec); err == nil {
					t.Fatal("one signature completed a two-person policy")
				}
				if err := r.approve("bob", rec); err != nil {
					t.Fatal(err)
				}
			} else {
				r.consume(rec.ApprovalID)
			}
			var a hookAnswer
			out := h.answer(t)
			if err := json.Unmarshal([]byte(out), &a); err != nil {
				t.Fatalf("answer %q: %v\n%s", out, err, h.stderr.String())
			}
			got := readStore(t, r.db, func(ctx context.Context, s *storage.Store) (*storage.Record, error) {
				return s.Get(ctx, rec.ApprovalID)
			})
			if signed {
				if a.Choice != "once" || !strings.Contains(a.Reason, "signed by alice, bob (2 of 2)") {
					t.Fatalf("signed: %+v\n%s", a, h.stderr.String())
				}
				return
			}
			if a.Choice != "deny" || !strings.Contains(a.Reason, "its signatures do not hold: not signed") {
				t.Fatalf("Hermes' own /approve: %+v", a)
			}
			if got.ExecutionStatus != model.ExecBlockedAfterConsume || got.ExecutionReason != agent.ReasonSignatureInvalid {
				t.Fatalf("recorded %s %q", got.ExecutionStatus, got.ExecutionReason)
			}
		})
	}
}

// The Claude Code hook denies a call whose approval is one person's
// signature under a two-person policy (the second vote forged in SQL).
func TestSignedHookClaudeCodeE2E(t *testing.T) {
	r := newSignedRig(t)
	command := "rm -rf /srv/app/build"
	in, err := json.Marshal(map[string]any{"session_id": "s1", "cwd": r.dir, "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": command}, "tool_use_id": "tu-signed"})
	if err != nil {
		t.Fatal(err)
	}
	h := r.startHook("claude-code", in)
	rec := r.pendingWith(command)
	if err := r.approve("alice", rec); err == nil {
		t.Fatal("one signature completed a two-person policy")
	}
	r.consume(rec.ApprovalID)
	out := h.answer(t)
	if !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "not enough valid signatures: 1 of 2") {
		t.Fatalf("hook answered %s\n%s", out, h.stderr.String())
	}
}

// A trust file the agent's user could change, or one that is missing:
// run refuses before anything is submitted, saying why, and a hook
// denies.
func TestSignedRunRefusesAnUnreliableTrustFile(t *testing.T) {
	r := newSignedRig(t)
	trustFile := filepath.Join(r.dir, "allowed_signers")
	for _, c := range []struct {
		name  string
		setup func()
		words string
	}{
		{"world-writable", func() { os.Chmod(trustFile, 0o666) }, "world-writable"},
		{"missing", func() { os.Rename(trustFile, trustFile+".gone") }, "allowed_signers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.setup()
			target := filepath.Join(r.dir, "keep-"+c.name)
			if err := os.Mkdir(target, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(r.bin, "--db", r.db, "--config", r.cfg, "run", "--", "rm", "-rf", target)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(string(out), c.words) || !strings.Contains(string(out), "nothing runs") {
				t.Fatalf("run: %v\n%s", err, out)
			}
			if _, err := os.Stat(target); err != nil {
				t.Fatal("the command ran")
			}
			n := readStore(t, r.db, func(ctx context.Context, s *storage.Store) ([]*storage.Record, error) {
				return s.List(ctx, storage.ListOptions{})
			})
			for _, x := range n {
				if strings.Contains(x.Command, target) {
					t.Fatal("a proposal was submitted")
				}
			}
			in, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": r.dir, "hook_event_name": "PreToolUse", "tool_name": "Bash",
				"tool_input": map[string]any{"command": "rm -rf " + target}, "tool_use_id": "tu-" + c.name})
			h := r.startHook("claude-code", in)
			if ans := h.answer(t); !strings.Contains(ans, `"permissionDecision":"deny"`) || !strings.Contains(ans, c.words) {
				t.Fatalf("hook: %s", ans)
			}
			os.Chmod(trustFile+".gone", 0o644)
			os.Rename(trustFile+".gone", trustFile)
			os.Chmod(trustFile, 0o644)
		})
	}
}

// A command no risk rule matches is still asked when the policy carol
// signed names it, though the agent replaced the store's policy row with
// one that has no rules: the real `run` times out asking, never runs it.
func TestSignedRunUnaskedFollowsTheSignedPolicyE2E(t *testing.T) {
	r := newSignedRig(t)
	pySQL(t, r.db, `INSERT INTO approve_tui_policy (version, sha256, source, rules, set_at, set_by)
		SELECT version + 1, ?, '', ?, set_at, set_by FROM approve_tui_policy ORDER BY version DESC LIMIT 1`,
		fmt.Sprintf("%x", sha256.Sum256(nil)), string((&policy.Policy{}).Encode()))
	marker := filepath.Join(r.dir, "ran")
	cmd := exec.Command(r.bin, "--db", r.db, "--config", r.cfg, "run", "--timeout", "1s", "--", "touch", marker)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != agent.ExitTimedOut || !strings.Contains(string(out), "of the signed policy") {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("it ran unasked")
	}
}
