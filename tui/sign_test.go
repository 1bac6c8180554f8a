package tui

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/pem"
	"github.com/approve-tui/approve-tui/internal/sshtest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/crypto/ssh"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/demo"
	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// Signed decisions in the console, with the real OpenSSH tools: keys made
// by ssh-keygen, held by a real ssh-agent, signatures checked by
// ssh-keygen -Y verify.

func needOpenSSH(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"ssh-keygen", "ssh-agent", "ssh-add"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (package openssh-client): the real OpenSSH tools are needed for these tests", tool)
		}
	}
}

// sshKey makes an ed25519 key pair with ssh-keygen and returns its path.
func sshKey(t testing.TB, dir, name string) string {
	t.Helper()
	return sshtest.Keygen(t, filepath.Join(dir, name), "ed25519", name+"@test")
}

func pubKey(t testing.TB, key string) string { t.Helper(); return sshtest.PublicLine(t, key) }

// sshAgent runs a real ssh-agent on a socket of its own and adds keys to
// it with ssh-add (extra: ssh-add's options, such as -c).
func sshAgent(t testing.TB, extra []string, keys ...string) string {
	t.Helper()
	return sshtest.AgentWith(t, extra, keys...)
}

// trustRig is the demo set in a store that requires signatures, with a
// trust file naming alice's and bob's keys (carol's is in no file).
type trustRig struct {
	*fixture
	dir, trustPath    string
	alice, bob, carol string
	settings          *trust.Settings
}

func newTrustRig(t testing.TB) *trustRig {
	t.Helper()
	needOpenSSH(t)
	return trustRigWith(t, sshKey)
}

// fixedKey writes an ed25519 key pair made from a seed of name's bytes:
// the same fingerprint on every run (golden screens show it).
func fixedKey(t testing.TB, dir, name string) string {
	t.Helper()
	seed := make([]byte, ed25519.SeedSize)
	copy(seed, name)
	priv := ed25519.NewKeyFromSeed(seed)
	block, err := ssh.MarshalPrivateKey(priv, name+"@test")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".pub", ssh.MarshalAuthorizedKey(pub), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func trustRigWith(t testing.TB, key func(testing.TB, string, string) string) *trustRig {
	t.Helper()
	dir := t.TempDir()
	r := &trustRig{dir: dir}
	r.alice, r.bob, r.carol = key(t, dir, "alice"), key(t, dir, "bob"), key(t, dir, "carol")
	text := "alice " + pubKey(t, r.alice) + "\nbob " + pubKey(t, r.bob) + "\n"
	r.trustPath = filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(r.trustPath, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	signers, err := trust.LoadTrustFile(r.trustPath)
	if err != nil {
		t.Fatal(err)
	}
	r.settings = &trust.Settings{Mode: trust.ModeRequired, Path: r.trustPath, Signers: signers}
	path := filepath.Join(dir, "state.db")
	s, err := storage.Open(context.Background(), path, storage.Options{Create: true, Now: fixedNow, Trust: r.settings})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := demo.Seed(context.Background(), s, 1, t0); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, e := range demo.Catalogue(1) {
		ids[e.Name] = e.ID
	}
	r.settings.Store = s.Identity()
	r.fixture = &fixture{path: path, s: s, ids: ids}
	return r
}

// signingConsole is a console on the rig signing with sg.
func signingConsole(t testing.TB, r *trustRig, sg Signing, events *[]Event) *Model {
	t.Helper()
	m := New(Options{Store: r.s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true, NoPresence: true, Label: "signed",
		Signing: sg, OnEvent: func(e Event) {
			if events != nil {
				*events = append(*events, e)
			}
		}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	Settle(m, m.Init())
	return m
}

// openPrompt reads proposal id whole and opens its approve (a) or deny (d)
// prompt.
func openPromptOn(t testing.TB, m *Model, id, k string) {
	t.Helper()
	selectThenPress(t, m, id, "enter")
	for i := 0; i < 300 && !m.detail.SeenAll(); i++ {
		press(m, "down")
	}
	press(m, k)
	if m.prompt == nil {
		press(m, "esc", k)
	}
	if m.prompt == nil {
		t.Fatalf("no prompt for %s:\n%s\nnote: %s", id, m.View(), m.note.text)
	}
}

// sshVerify runs the real ssh-keygen -Y verify over a stored signature.
// selectEvent moves the history's cursor down to the event of proposal id.
func selectEvent(t testing.TB, m *Model, id, event string) {
	t.Helper()
	for i := 0; i < 50; i++ {
		if e, ok := m.selectedAudit(); ok && e.ApprovalID == id && e.Event == event {
			return
		}
		press(m, "down")
	}
	t.Fatalf("no %s event of %s in the history", event, id)
}

// typeApproveOn opens the approve prompt on the proposal id, read to its
// end, and types its id (enter not pressed).
func typeApproveOn(t testing.TB, m *Model, id string) {
	t.Helper()
	openPromptOn(t, m, id, "a")
	typeText(m, id)
}

func sshVerify(t testing.TB, trustPath string, sg storage.SignatureRecord) {
	t.Helper()
	sp := filepath.Join(t.TempDir(), "sig")
	if err := os.WriteFile(sp, []byte(sg.Armored), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", trustPath, "-I", sg.Principal, "-n", trust.Namespace, "-s", sp)
	cmd.Stdin = bytes.NewReader(sg.Statement)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y verify refuses the stored signature: %v\n%s", err, out)
	}
}

func signaturesOf(t testing.TB, s *storage.Store, id string) []storage.SignatureRecord {
	t.Helper()
	sigs, err := s.Signatures(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return sigs
}

func TestSignedApproveThroughTheAgent(t *testing.T) {
	r := newTrustRig(t)
	sock := sshAgent(t, nil, r.alice)
	var events []Event
	m := signingConsole(t, r, AgentSocket(sock), &events)
	id := r.ids["low"]
	rec := status(t, r.fixture, id)
	typeApproveOn(t, m, id)
	press(m, "enter")
	got := status(t, r.fixture, id)
	if got.Status != model.StatusConsumed {
		t.Fatalf("after a signed approve: %s; note %q; prompt %+v", got.Status, m.note.text, m.prompt)
	}
	if !strings.Contains(m.note.text, "approved "+id) || !strings.Contains(m.note.text, "signed by alice SHA256:") {
		t.Fatalf("the outcome does not say whose key signed: %q", m.note.text)
	}
	sigs := signaturesOf(t, r.s, id)
	if len(sigs) != 1 || sigs[0].Event != storage.EventApprove || sigs[0].Principal != "alice" {
		t.Fatalf("stored signatures: %+v", sigs)
	}
	st, err := trust.ParseStatement(sigs[0].Statement)
	if err != nil {
		t.Fatal(err)
	}
	if st.Decision != trust.DecisionApprove || st.ApprovalID != id || st.PayloadSHA256 != rec.PayloadSHA256 ||
		st.Risk != string(rec.RiskLevel) || st.Store != r.s.Identity() || !st.Time.Equal(t0.Truncate(time.Second)) {
		t.Fatalf("statement signed: %+v (record %s %s, store %s)", st, rec.PayloadSHA256, rec.RiskLevel, r.s.Identity())
	}
	sshVerify(t, r.trustPath, sigs[0])
	var signed bool
	for _, e := range events {
		signed = signed || e.Kind == "sign" && e.Outcome == "signed" && strings.HasPrefix(e.Detail, "alice SHA256:")
	}
	if !signed {
		t.Fatalf("no sign event: %+v", events)
	}
}

// Where nothing can sign, an approve decides nothing and the prompt says
// why: no agent, a key the trust file does not know, an agent that
// refuses (a key added with ssh-add -c and no askpass to confirm it).
func TestUnsignableApproveDecidesNothing(t *testing.T) {
	r := newTrustRig(t)
	cases := []struct {
		name string
		sg   func() Signing
		want string
	}{
		{"no agent", func() Signing { return AgentSocket("") }, "SSH_AUTH_SOCK is not set"},
		{"dead socket", func() Signing { return AgentSocket(filepath.Join(r.dir, "nothing-here")) }, "cannot reach the ssh-agent"},
		{"unknown key", func() Signing { return AgentSocket(sshAgent(t, nil, r.carol)) }, "is not in the trust file"},
		{"two known keys", func() Signing { return AgentSocket(sshAgent(t, nil, r.alice, r.bob)) }, "holds 2 keys the trust file knows"},
		{"agent refuses", func() Signing { return AgentSocket(sshAgent(t, []string{"-c"}, r.alice)) }, "refused to sign"},
		{"key file not in the trust file", func() Signing { return Signing{KeyFile: r.carol} }, "is not in the trust file"},
	}
	id := r.ids["low"]
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := signingConsole(t, r, c.sg(), nil)
			typeApproveOn(t, m, id)
			press(m, "enter")
			if m.prompt == nil || !strings.Contains(m.prompt.message, "not signed, nothing decided") || !strings.Contains(m.prompt.message, c.want) {
				t.Fatalf("prompt after an unsignable approve: %+v\nnote %q", m.prompt, m.note.text)
			}
			screenHas(t, m, "not signed, nothing decided")
			if got := status(t, r.fixture, id); got.Status != model.StatusPending {
				t.Fatalf("an unsigned approve changed the proposal: %s", got.Status)
			}
			if sigs := signaturesOf(t, r.s, id); len(sigs) != 0 {
				t.Fatalf("signatures stored: %+v", sigs)
			}
			press(m, "esc")
		})
	}
}

func TestSignedApproveWithAKeyFile(t *testing.T) {
	r := newTrustRig(t)
	m := signingConsole(t, r, Signing{KeyFile: r.bob}, nil)
	id := r.ids["low"]
	typeApproveOn(t, m, id)
	press(m, "enter")
	if got := status(t, r.fixture, id); got.Status != model.StatusConsumed || !strings.Contains(m.note.text, "signed by bob SHA256:") {
		t.Fatalf("%s, note %q", got.Status, m.note.text)
	}
	sshVerify(t, r.trustPath, signaturesOf(t, r.s, id)[0])
}

func TestDenySignedOrSaysUnsigned(t *testing.T) {
	r := newTrustRig(t)
	signed := signingConsole(t, r, AgentSocket(sshAgent(t, nil, r.bob)), nil)
	id := r.ids["low"]
	openPromptOn(t, signed, id, "d")
	typeText(signed, "no")
	press(signed, "enter")
	if got := status(t, r.fixture, id); got.Status != model.StatusDenied || !strings.Contains(signed.note.text, "denied "+id+"; signed by bob SHA256:") {
		t.Fatalf("signed deny: %s, note %q", got.Status, signed.note.text)
	}
	sigs := signaturesOf(t, r.s, id)
	if len(sigs) != 1 || sigs[0].Event != storage.EventDeny {
		t.Fatalf("deny signatures: %+v", sigs)
	}
	if st, _ := trust.ParseStatement(sigs[0].Statement); st.Decision != trust.DecisionDeny {
		t.Fatalf("deny signed as %q", st.Decision)
	}
	sshVerify(t, r.trustPath, sigs[0])

	// With nothing to sign with, a deny still goes through, and says it
	// is unsigned.
	unsigned := signingConsole(t, r, AgentSocket(""), nil)
	id = r.ids["drop"]
	openPromptOn(t, unsigned, id, "d")
	press(unsigned, "enter")
	if got := status(t, r.fixture, id); got.Status != model.StatusDenied || !strings.Contains(unsigned.note.text, "denied "+id+"; UNSIGNED (no ssh-agent") {
		t.Fatalf("unsigned deny: %s, note %q", got.Status, unsigned.note.text)
	}
	if sigs := signaturesOf(t, r.s, id); len(sigs) != 0 {
		t.Fatalf("an unsigned deny stored signatures: %+v", sigs)
	}
}

// A signature that comes back after its prompt was cancelled is not used.
func TestCancelledSigningDecidesNothing(t *testing.T) {
	r := newTrustRig(t)
	m := signingConsole(t, r, AgentSocket(sshAgent(t, nil, r.alice)), nil)
	id := r.ids["low"]
	typeApproveOn(t, m, id)
	_, cmd := m.Update(keyMsg("enter")) // asks for the key; not run yet
	if m.prompt == nil || !m.prompt.signing {
		t.Fatal("enter did not start signing")
	}
	typeText(m, "x") // typing while it signs changes nothing
	if m.prompt.input.Value() != id {
		t.Fatalf("the typed id changed while signing: %q", m.prompt.input.Value())
	}
	key := cmd().(signerMsg)
	m.Update(keyMsg("esc"))
	_, cmd = m.Update(key)
	if cmd != nil {
		cmd() // closes the key
	}
	if m.prompt != nil || status(t, r.fixture, id).Status != model.StatusPending || len(signaturesOf(t, r.s, id)) != 0 {
		t.Fatal("a signing cancelled with esc went on")
	}
}

// setSignedPolicy puts src in force, signed by alice (a policy signer).
func setSignedPolicy(t testing.TB, r *trustRig, src string) {
	t.Helper()
	p, err := config.ParsePolicy("policy.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r.settings.PolicySigners = []string{"alice"}
	alice, err := trust.KeyFileSigner(r.alice)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := r.settings.SignDecision(alice, trust.Statement{Decision: trust.DecisionPolicy, PolicySHA256: trust.SHA256Hex([]byte(src))}, t0)
	if err != nil {
		t.Fatal(err)
	}
	actor := admin
	actor.Signature = sig
	if _, _, err := r.s.SetPolicy(context.Background(), []byte(src), p, actor); err != nil {
		t.Fatal(err)
	}
}

// signedVote casts a vote on id as actor, signed with key.
func signedVote(t testing.TB, r *trustRig, id, key string, actor model.Actor) {
	t.Helper()
	s, err := trust.KeyFileSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	rec := golden.Record(t, r.s, id)
	sig, err := r.settings.SignDecision(s, trust.Statement{Decision: trust.DecisionApprove, ApprovalID: id, PayloadSHA256: rec.PayloadSHA256, Risk: string(rec.RiskLevel)}, t0)
	if err != nil {
		t.Fatal(err)
	}
	actor.Person, actor.Key, actor.Signature = sig.Principal, sig.Key, sig
	if _, err := r.s.ConsumeRead(context.Background(), id, id, rec.PayloadSHA256, actor); err == nil {
		t.Fatal("a vote consumed the proposal")
	}
}

// fourApprovers asks four approvers for every proposal at high risk.
const fourApprovers = "policy:\n  - match: {risk: high}\n    approvals: 4\n"

// The votes block says of each vote whether it is signed, by whom, and
// whether the signature holds against the trust file.
func TestVotesShowSignedOrUnsigned(t *testing.T) {
	r := newTrustRig(t)
	setSignedPolicy(t, r, fourApprovers)
	id := r.ids["drop"]
	signedVote(t, r, id, r.bob, bob)
	// An unsigned vote by another hand: a store that verifies leaves it
	// out of the quorum; one that does not shows it as unsigned.
	other, err := storage.Open(context.Background(), r.path, storage.Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	carol := model.Actor{Surface: model.SurfaceCLI, Name: "carol@desk", Person: "carol"}
	_, _ = other.ConsumeRead(context.Background(), id, id, "", carol)

	m := signingConsole(t, r, AgentSocket(sshAgent(t, nil, r.alice)), nil)
	typeApproveOn(t, m, id)
	press(m, "enter")
	if !strings.Contains(m.note.text, "vote recorded on "+id) || !strings.Contains(m.note.text, "signed by alice SHA256:") {
		t.Fatalf("vote outcome: %q", m.note.text)
	}
	selectThenPress(t, m, id, "enter")
	var block []string
	for _, l := range m.votesFor(id).lines(t0) {
		block = append(block, l.text)
	}
	v := strings.Join(block, "\n")
	if !strings.Contains(v, "— signed: alice SHA256:") || !strings.Contains(v, "— signed: bob SHA256:") {
		t.Fatalf("the votes block does not say who signed:\n%s", v)
	}
	for _, l := range block {
		if strings.Contains(l, "carol") && !strings.HasSuffix(l, "— unsigned") {
			t.Fatalf("carol's unsigned vote: %q", l)
		}
	}
	screenHas(t, m, "signed:")
	sigs := signaturesOf(t, r.s, id)
	if len(sigs) != 2 {
		t.Fatalf("signatures: %+v", sigs)
	}
	for _, sg := range sigs {
		sshVerify(t, r.trustPath, sg)
	}

	// A signature row written by hand for carol's vote, signed with her
	// key (in no trust file): shown as a signature that does not verify.
	ck, err := trust.KeyFileSigner(r.carol)
	if err != nil {
		t.Fatal(err)
	}
	rec := status(t, r.fixture, id)
	stmt, err := trust.Statement{Store: r.s.Identity(), Decision: trust.DecisionApprove, ApprovalID: id, PayloadSHA256: rec.PayloadSHA256,
		Risk: string(rec.RiskLevel), Principal: "carol", Time: t0}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	armored, err := ck.Sign(stmt)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+r.path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at) VALUES (?, 'vote', 'carol', ?, ?, ?, 0)`,
		id, ck.Fingerprint(), string(stmt), string(armored)); err != nil {
		t.Fatal(err)
	}
	read, err := readSignatures(context.Background(), r.s, shownOf(rec))
	if err != nil || len(read) != 3 {
		t.Fatalf("signatures read: %+v %v", read, err)
	}
	words, kind := voteSignature(storage.Vote{Key: ck.Fingerprint(), Person: "carol"}, read)
	if kind != lineBad || !strings.Contains(words, "signature does NOT verify (unknown_key), claimed by carol SHA256:") {
		t.Fatalf("a forged signature row is shown as %q", words)
	}
	if words, _ := voteSignature(storage.Vote{Person: "carol"}, read); words != "unsigned" {
		t.Fatalf("a vote without a key is shown as %q", words)
	}
	// A real signature's row rewritten to claim another principal: it no
	// longer verifies, and the console says the row was changed.
	if _, err := db.Exec(`UPDATE approve_tui_signatures SET principal = 'mallory' WHERE seq = (SELECT MIN(seq) FROM approve_tui_signatures WHERE approval_id = ?)`, id); err != nil {
		t.Fatal(err)
	}
	read, err = readSignatures(context.Background(), r.s, shownOf(rec))
	if err != nil || len(read) != 3 || read[0].Verified || !read[0].Checked() || read[0].Reason != storage.CheckRowMismatch || read[0].Principal != "mallory" {
		t.Fatalf("a rewritten row: %+v %v", read, err)
	}
}

// The history's page of an approve names the signatures kept for the
// proposal, checked against the trust file.
func TestHistoryEventNamesTheSignatures(t *testing.T) {
	r := newTrustRig(t)
	m := signingConsole(t, r, AgentSocket(sshAgent(t, nil, r.alice)), nil)
	id := r.ids["low"]
	typeApproveOn(t, m, id)
	press(m, "enter")
	press(m, "tab")
	selectEvent(t, m, id, storage.EventApprove)
	press(m, "enter")
	screenHas(t, m, "signatures", "approve signed by alice SHA256:", ", verified")

	// A denial without a signature, where signatures are required, says so.
	unsigned := signingConsole(t, r, AgentSocket(""), nil)
	deny := r.ids["drop"]
	openPromptOn(t, unsigned, deny, "d")
	press(unsigned, "enter")
	press(unsigned, "tab")
	selectEvent(t, unsigned, deny, storage.EventDeny)
	press(unsigned, "enter")
	screenHas(t, unsigned, "signatures", "none: unsigned")
}

// At start the console finds the key it will sign with, or says at once
// that approvals cannot be signed here.
func TestConsoleSaysAtStartWhetherItCanSign(t *testing.T) {
	r := newTrustRig(t)
	var events []Event
	m := signingConsole(t, r, AgentSocket(sshAgent(t, nil, r.carol, r.bob)), &events)
	if m.me.Person != "bob" || !strings.HasPrefix(m.me.Key, "SHA256:") {
		t.Fatalf("the console counts as %+v, not as bob's key", m.me)
	}
	found := false
	for _, e := range events {
		found = found || e.Kind == "sign" && e.Outcome == "identity" && strings.HasPrefix(e.Detail, "bob SHA256:")
	}
	if !found {
		t.Fatalf("events: %+v", events)
	}
	none := signingConsole(t, r, AgentSocket(""), nil)
	if !strings.Contains(none.note.text, "approvals here must be signed, and cannot be: no ssh-agent") {
		t.Fatalf("note at start without an agent: %q", none.note.text)
	}
	screenHas(t, none, "approvals here must be signed")
}

// A signature row is hostile until checked: what it claims is shown
// sanitised, as not verifying.
func TestHostileSignatureRowIsInert(t *testing.T) {
	r := newTrustRig(t)
	id := r.ids["drop"]
	rec := status(t, r.fixture, id)
	db, err := sql.Open("sqlite", "file:"+r.path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	evil := "\x1b[31mroot\x1b]0;pwned\x07\u202e"
	if _, err := db.Exec(`INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at) VALUES (?, ?, ?, ?, ?, ?, 0)`,
		id, "vote", evil, "SHA256:"+evil, "approve-tui-statement-v1\n"+evil, "-----BEGIN SSH SIGNATURE-----\n"+evil); err != nil {
		t.Fatal(err)
	}
	sigs, err := readSignatures(context.Background(), r.s, shownOf(rec))
	if err != nil || len(sigs) != 1 || sigs[0].Verified || !sigs[0].Checked() || sigs[0].Reason != string(trust.ReasonMalformed) {
		t.Fatalf("%+v %v", sigs, err)
	}
	words, kind := voteSignature(storage.Vote{Key: "SHA256:" + evil}, sigs)
	m := signingConsole(t, r, AgentSocket(""), nil)
	page := &eventPage{sigs: sigs, sigsRead: true}
	for _, s := range append([]string{words}, m.signatureLines(page)...) {
		if strings.ContainsAny(s, "\x1b\x07\u202e") {
			t.Fatalf("a hostile signature row reaches the screen raw: %q", s)
		}
	}
	if kind != lineBad || !strings.Contains(words, "does NOT verify (malformed)") {
		t.Fatalf("shown as %q", words)
	}
}
