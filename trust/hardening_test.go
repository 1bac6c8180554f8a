package trust

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/sshtest"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// signFile signs st with the key file at key and returns signature and
// statement bytes.
func signFile(t testing.TB, key string, st Statement) ([]byte, []byte) {
	t.Helper()
	s, err := KeyFileSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	stmt := mustEncode(t, st)
	sig, err := s.Sign(stmt)
	if err != nil {
		t.Fatal(err)
	}
	return sig, stmt
}

// TestTrustLinesNameOnePlainPrincipal: a line with a list or a pattern is
// refused at load time with FILE:LINE, though ssh-keygen would let a
// pattern line's key sign as a named colleague.
func TestTrustLinesNameOnePlainPrincipal(t *testing.T) {
	needSSHKeygen(t)
	dir := t.TempDir()
	alice := genKey(t, dir, "ed25519", "alice")
	bot := genKey(t, dir, "ed25519", "bot")

	// The oracle: with a pattern line, ssh-keygen accepts the bot's key
	// signing as alice@example.com.
	text := "alice@example.com " + sshtest.PublicLine(t, alice) + "\n*@example.com " + sshtest.PublicLine(t, bot) + "\n"
	trustPath := writeTrust(t, dir, text)
	st := sampleStatement("alice@example.com")
	sig, stmt := signFile(t, bot, st)
	if err := osshVerify(t, trustPath, "alice@example.com", sig, stmt); err != nil {
		t.Fatalf("ssh-keygen was expected to accept the pattern line (that is the hole): %v", err)
	}
	_, err := LoadTrustFile(trustPath)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(err.Error(), "pattern") {
		t.Fatalf("pattern line: %v", err)
	}

	pub := sshtest.PublicLine(t, alice)
	for name, line := range map[string]string{
		"list":            "alice,Alice " + pub,
		"star":            "*@example.com " + pub,
		"question mark":   "al?ce " + pub,
		"negation":        "!eve " + pub,
		"quote inside":    "al'ice " + pub,
		"non-ASCII":       "alicé " + pub,
		"longer than 256": strings.Repeat("a", 257) + " " + pub,
	} {
		_, err := ParseAllowedSigners("/etc/approve-tui/allowed_signers", []byte("# people\n"+line+"\n"))
		if !errors.As(err, &pe) || pe.Line != 2 || !strings.HasPrefix(err.Error(), "/etc/approve-tui/allowed_signers:2: ") {
			t.Errorf("%s: got %v, want a FILE:2: error", name, err)
		}
	}
}

// TestOneKeyOnePerson: a key listed under two principals, or two
// principals equal but for case, is refused at load time; one key on two
// lines under the same principal (say, two validity windows) is fine.
func TestOneKeyOnePerson(t *testing.T) {
	needSSHKeygen(t)
	dir := t.TempDir()
	k1 := sshtest.PublicLine(t, genKey(t, dir, "ed25519", "k1"))
	k2 := sshtest.PublicLine(t, genKey(t, dir, "ed25519", "k2"))
	var pe *ParseError
	_, err := ParseAllowedSigners("f", []byte("alice "+k1+"\nbob "+k2+"\n\nmallory "+k1+"\n"))
	if !errors.As(err, &pe) || pe.Line != 4 || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), "one key is one person") {
		t.Fatalf("a key under two principals: %v", err)
	}
	_, err = ParseAllowedSigners("f", []byte("alice "+k1+"\nAlice "+k2+"\n"))
	if !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(err.Error(), "case") {
		t.Fatalf("principals equal but for case: %v", err)
	}
	as, err := ParseAllowedSigners("f", []byte(`alice valid-before="20200101Z" `+k1+"\nalice "+k1+"\nalice "+k2+"\n"))
	if err != nil || len(as.Signers) != 3 {
		t.Fatalf("one person, one key on two lines and a second key: %v", err)
	}
}

// TestPrincipalOf: the principal comes from the trust file's one line
// for the key; a key on no line has none, and the error shows the line
// to add.
func TestPrincipalOf(t *testing.T) {
	needSSHKeygen(t)
	dir := t.TempDir()
	alice := genKey(t, dir, "ed25519", "alice")
	stranger := genKey(t, dir, "ed25519", "stranger")
	as, err := ParseAllowedSigners("f", []byte("alice "+sshtest.PublicLine(t, alice)+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := &Settings{Mode: ModeRequired, Path: "f", Signers: as, Store: "s"}
	ks, _ := KeyFileSigner(alice)
	if p, err := s.PrincipalOf(ks.PublicKey()); err != nil || p != "alice" {
		t.Fatalf("alice: %q %v", p, err)
	}
	ss, _ := KeyFileSigner(stranger)
	if _, err := s.PrincipalOf(ss.PublicKey()); err == nil || !strings.Contains(err.Error(), "PRINCIPAL "+sshtest.PublicLine(t, stranger)) {
		t.Fatalf("a key on no line: %v", err)
	}
	var none *Settings
	if _, err := none.PrincipalOf(ks.PublicKey()); err == nil {
		t.Fatal("no trust configuration gave a principal")
	}
}

// TestFreshnessAndDecision: a statement must carry a decision the
// verifier asked for, must not be dated before NotBefore, after now plus
// Skew, or earlier than now minus MaxAge.
func TestFreshnessAndDecision(t *testing.T) {
	needSSHKeygen(t)
	dir := t.TempDir()
	alice := genKey(t, dir, "ed25519", "alice")
	as, err := ParseAllowedSigners("f", []byte("alice "+sshtest.PublicLine(t, alice)+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	counting := Expect{Decisions: []Decision{DecisionApprove, DecisionVote}, Skew: time.Minute, MaxAge: 15 * time.Minute}
	withFields := func(e Expect, st Statement) Expect {
		e.Store, e.ApprovalID, e.PayloadSHA256, e.Risk = st.Store, st.ApprovalID, st.PayloadSHA256, st.Risk
		return e
	}
	at := func(d Decision, when time.Time) (Statement, []byte, []byte) {
		st := sampleStatement("alice")
		st.Decision, st.Time = d, when
		sig, stmt := signFile(t, alice, st)
		return st, sig, stmt
	}
	cases := []struct {
		name   string
		d      Decision
		when   time.Time
		want   func(Expect) Expect
		reason Reason
	}{
		{"fresh approve", DecisionApprove, now.Add(-time.Minute), nil, ""},
		{"fresh vote", DecisionVote, now, nil, ""},
		{"inside the future skew", DecisionApprove, now.Add(50 * time.Second), nil, ""},
		{"deny where approvals are counted", DecisionDeny, now, nil, ReasonDecision},
		{"no decision asked for", DecisionApprove, now, func(e Expect) Expect { e.Decisions = nil; return e }, ReasonDecision},
		{"deny asked for", DecisionDeny, now, func(e Expect) Expect { e.Decisions = []Decision{DecisionDeny}; return e }, ""},
		{"dated 1971", DecisionApprove, time.Date(1971, 1, 1, 0, 0, 0, 0, time.UTC), nil, ReasonStale},
		{"dated 9999", DecisionApprove, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), nil, ReasonFuture},
		{"9999 with no MaxAge", DecisionApprove, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), func(e Expect) Expect { e.MaxAge = 0; return e }, ReasonFuture},
		{"two minutes ahead", DecisionApprove, now.Add(2 * time.Minute), nil, ReasonFuture},
		{"older than MaxAge", DecisionApprove, now.Add(-16 * time.Minute), nil, ReasonStale},
		{"before the proposal", DecisionApprove, now.Add(-5 * time.Minute), func(e Expect) Expect { e.NotBefore = now.Add(-2 * time.Minute); return e }, ReasonStale},
		{"after the proposal", DecisionApprove, now.Add(-time.Minute), func(e Expect) Expect { e.NotBefore = now.Add(-2 * time.Minute); return e }, ""},
	}
	for _, c := range cases {
		st, sig, stmt := at(c.d, c.when)
		want := withFields(counting, st)
		if c.want != nil {
			want = c.want(want)
		}
		_, err := Verify(sig, stmt, as, want, now)
		if ReasonOf(err) != c.reason {
			t.Errorf("%s: got %v, want reason %q", c.name, err, c.reason)
		}
	}

	// A policy statement is checked under a policy Expect only.
	pst := Statement{Store: "store-7f3a", Decision: DecisionPolicy, PolicySHA256: strings.Repeat("0f", 32), Principal: "alice", Time: now.Add(-90 * 24 * time.Hour)}
	psig, pstmt := signFile(t, alice, pst)
	pol := Expect{Store: pst.Store, PolicySHA256: pst.PolicySHA256, Decisions: []Decision{DecisionPolicy}}
	if _, err := Verify(psig, pstmt, as, pol, now); err != nil {
		t.Fatalf("a policy signed 90 days ago with no MaxAge: %v", err)
	}
	if _, err := Verify(psig, pstmt, as, withFields(counting, sampleStatement("alice")), now); ReasonOf(err) != ReasonDecision {
		t.Fatalf("a policy statement where approvals are counted: %v", err)
	}
}

// TestDirectoryLinksChecked: a symbolic link in a directory component of
// the trust path lives in a directory that is checked like the others.
func TestDirectoryLinksChecked(t *testing.T) {
	needSSHKeygen(t)
	keyDir := t.TempDir()
	line := "alice " + sshtest.PublicLine(t, genKey(t, keyDir, "ed25519", "alice")) + "\n"
	base := t.TempDir()
	for _, d := range []string{"ops", "ww", "safe", "old"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(base, "ww"), 0o777)
	writeTrust(t, filepath.Join(base, "safe"), line)
	// ops/cfg -> ../ww/cfg -> ../safe: whoever can write ww can repoint
	// the trust path.
	must(t, os.Symlink("../ww/cfg", filepath.Join(base, "ops", "cfg")))
	must(t, os.Symlink("../safe", filepath.Join(base, "ww", "cfg")))
	var tfe *TrustFileError
	_, err := LoadTrustFile(filepath.Join(base, "ops", "cfg", "allowed_signers"))
	if !errors.As(err, &tfe) || tfe.Path != filepath.Join(base, "ww") || !strings.Contains(err.Error(), "world-writable") {
		t.Fatalf("a directory link held in a world-writable directory: %v", err)
	}
	// The same through a link in a safe directory loads.
	must(t, os.Symlink("../safe", filepath.Join(base, "ops", "good")))
	if _, err := LoadTrustFile(filepath.Join(base, "ops", "good", "allowed_signers")); err != nil {
		t.Fatalf("a directory link in a safe directory: %v", err)
	}
	// ".." after a link is taken from where the link leads, as the
	// kernel does, and that directory is checked: ops/up -> ../ww/deep,
	// ops/up/../../safe/allowed_signers goes through ww.
	must(t, os.Mkdir(filepath.Join(base, "ww", "deep"), 0o755))
	must(t, os.Symlink("../ww/deep", filepath.Join(base, "ops", "up")))
	_, err = LoadTrustFile(filepath.Join(base, "ops", "up") + "/../../safe/allowed_signers")
	if !errors.As(err, &tfe) || tfe.Path != filepath.Join(base, "ww") {
		t.Fatalf("'..' after a link: %v", err)
	}
	// A loop is refused, not followed forever.
	must(t, os.Symlink("loop", filepath.Join(base, "ops", "loop")))
	if _, err := LoadTrustFile(filepath.Join(base, "ops", "loop")); !errors.As(err, &tfe) || !strings.Contains(err.Error(), "links") {
		t.Fatalf("a link loop: %v", err)
	}
	// A directory as the trust file.
	if _, err := LoadTrustFile(filepath.Join(base, "safe")); !errors.As(err, &tfe) || !strings.Contains(err.Error(), "regular file") {
		t.Fatalf("a directory: %v", err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCanonicalArmour: a signature is accepted only in the exact form
// ssh-keygen -Y sign writes; bytes inside the blob, armour headers,
// whitespace and text around it are refused.
func TestCanonicalArmour(t *testing.T) {
	needSSHKeygen(t)
	dir := t.TempDir()
	alice := genKey(t, dir, "ed25519", "alice")
	trustPath := writeTrust(t, dir, "alice "+sshtest.PublicLine(t, alice)+"\n")
	as, err := LoadTrustFile(trustPath)
	if err != nil {
		t.Fatal(err)
	}
	st := sampleStatement("alice")
	sig, stmt := signFile(t, alice, st)
	// ed25519 signatures are deterministic: ours is byte for byte
	// ssh-keygen's.
	if theirs := osshSign(t, alice, Namespace, stmt); !bytes.Equal(sig, theirs) {
		t.Fatalf("our armour differs from ssh-keygen's:\n%s\n%s", sig, theirs)
	}
	parsed, err := sshsig.Unarmor(sig)
	if err != nil {
		t.Fatal(err)
	}
	inner := *parsed.Signature
	inner.Rest = []byte("extra")
	padded := *parsed
	padded.Signature = &inner
	appended := armor(padded.Marshal())

	blob, _ := base64.StdEncoding.DecodeString(strings.Join(strings.Split(string(sig), "\n")[1:5], ""))
	outer := armor(append(append([]byte{}, blob...), 0, 0, 0, 0))

	withHeader := strings.Replace(string(sig), "-----\n", "-----\nX-Note: hello\n\n", 1)
	cases := []struct {
		name        string
		sig         []byte
		osshRefuses bool
	}{
		{"bytes appended inside the signature", appended, true},
		{"bytes appended to the blob", outer, false},
		{"armour header", []byte(withHeader), true},
		{"text after the END line", append(append([]byte{}, sig...), "\x1b[2J\x1b]0;owned\a\n"...), false},
		{"blank line after the END line", append(append([]byte{}, sig...), '\n'), false},
		{"no newline after the END line", bytes.TrimSuffix(sig, []byte("\n")), false},
		{"leading blank line", append([]byte("\n"), sig...), false},
		{"64-column lines", sshsig.Armor(parsed), false},
		{"CRLF", bytes.ReplaceAll(sig, []byte("\n"), []byte("\r\n")), false},
	}
	for _, c := range cases {
		if _, err := Verify(c.sig, stmt, as, expectOf(st), time.Now()); ReasonOf(err) != ReasonMalformed {
			t.Errorf("%s: got %v, want malformed", c.name, err)
		}
		oerr := osshVerify(t, trustPath, "alice", c.sig, stmt)
		if c.osshRefuses && oerr == nil {
			t.Errorf("%s: ssh-keygen accepted it", c.name)
		}
	}
}

// TestSmallRSARefused: RSA keys under 2048 bits are refused in the trust
// file and at verification, whatever GODEBUG says.
func TestSmallRSARefused(t *testing.T) {
	needSSHKeygen(t)
	dir := t.TempDir()
	small := genKey(t, dir, "rsa", "small", "-b", "1024")
	trustPath := writeTrust(t, dir, "alice "+sshtest.PublicLine(t, small)+"\n")
	st := sampleStatement("alice")
	sig, stmt := signFile(t, small, st)
	// ssh-keygen (9.2) still takes a 1024-bit key; approve-tui does not.
	if err := osshVerify(t, trustPath, "alice", sig, stmt); err != nil {
		t.Logf("ssh-keygen refuses the 1024-bit key too: %v", err)
	}
	var pe *ParseError
	if _, err := LoadTrustFile(trustPath); !errors.As(err, &pe) || !strings.Contains(err.Error(), "1024") {
		t.Fatalf("1024-bit RSA trust line: %v", err)
	}
	key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(sshtest.PublicLine(t, small)))
	if err != nil {
		t.Fatal(err)
	}
	built := &AllowedSigners{Path: "built", Signers: []Signer{{Line: 1, Principals: "alice", Key: key}}}
	if _, err := Verify(sig, stmt, built, expectOf(st), time.Now()); ReasonOf(err) != ReasonWeakKey {
		t.Fatalf("1024-bit RSA signature: %v", err)
	}

	// 768 bits with GODEBUG=rsa1024min=0 set, as an agent's environment
	// may set it.
	t.Setenv("GODEBUG", "rsa1024min=0")
	priv, err := rsa.GenerateKey(rand.Reader, 768)
	if err != nil {
		t.Skipf("this Go refuses 768-bit keys even with GODEBUG=rsa1024min=0: %v", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	stmt768 := mustEncode(t, st)
	sig768, err := NewStatementSigner(signer).Sign(stmt768)
	if err != nil {
		t.Fatal(err)
	}
	built768 := &AllowedSigners{Path: "built", Signers: []Signer{{Line: 1, Principals: "alice", Key: signer.PublicKey()}}}
	if _, err := Verify(sig768, stmt768, built768, expectOf(st), time.Now()); ReasonOf(err) != ReasonWeakKey {
		t.Fatalf("768-bit RSA under GODEBUG=rsa1024min=0: %v", err)
	}
	line := "alice " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))) + "\n"
	if _, err := ParseAllowedSigners("f", []byte(line)); !errors.As(err, &pe) {
		t.Fatalf("768-bit RSA trust line: %v", err)
	}
}

// hostile holds bytes no error may print raw.
var hostile = []string{"\u009b", "\x9b", "\u202e", "\x1b"}

func assertClean(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	for _, h := range hostile {
		if strings.Contains(err.Error(), h) {
			t.Errorf("%s: error carries %q raw: %q", what, h, err.Error())
		}
	}
}

// TestErrorsSanitised: parse, load, agent and key file errors show
// hostile bytes as visible escapes.
func TestErrorsSanitised(t *testing.T) {
	bad := "\x9b31m\u009b2J\u202eevil\x1b"
	inLine := "\x9b31m\u009b2J\u202eevil" // no C0 byte, which the line check refuses first
	_, err := ParseAllowedSigners("f", []byte("alice "+inLine+"=x ssh-ed25519 AAAA\n"))
	assertClean(t, "option name", err)
	_, err = ParseAllowedSigners("f", []byte("alice "+inLine+`="x ssh-ed25519 AAAA`+"\n"))
	assertClean(t, "unterminated option", err)
	_, err = ParseAllowedSigners("f", []byte(inLine+" ssh-ed25519 AAAA\n"))
	assertClean(t, "principal", err)
	_, err = ParseAllowedSigners("f"+bad, []byte("alice ssh-ed25519\n"))
	assertClean(t, "file name", err)
	_, err = ParseAllowedSigners("f", []byte(`alice valid-before="`+inLine+`" ssh-ed25519 AAAA`+"\n"))
	assertClean(t, "validity", err)
	_, err = LoadTrustFile(filepath.Join(t.TempDir(), bad))
	assertClean(t, "trust path", err)
	_, err = DialAgent(filepath.Join(t.TempDir(), bad), "")
	assertClean(t, "agent socket", err)
	_, err = KeyFileSigner(filepath.Join(t.TempDir(), bad))
	assertClean(t, "key file", err)
	p := filepath.Join(t.TempDir(), "key")
	os.WriteFile(p, []byte(bad), 0o600)
	_, err = KeyFileSigner(p)
	assertClean(t, "key file content", err)
}

// TestLongPatternMatchesNothing: a pattern of 1023 bytes or more makes
// the whole list match nothing, as in OpenSSH, and such a namespaces
// option is refused in the trust file.
func TestLongPatternMatchesNothing(t *testing.T) {
	long := strings.Repeat("x", 1100)
	for _, list := range []string{"alice," + long, long + ",alice", strings.Repeat("y", 1023) + ",alice"} {
		if MatchPatternList("alice", list) {
			t.Errorf("matched %d-byte list with a long pattern", len(list))
		}
	}
	if !MatchPatternList("alice", strings.Repeat("y", 1022)+",alice") {
		t.Error("a 1022-byte pattern is still a pattern")
	}
	needSSHKeygen(t)
	dir := t.TempDir()
	alice := genKey(t, dir, "ed25519", "alice")
	trustPath := writeTrust(t, dir, `alice namespaces="approve-tui,`+long+`" `+sshtest.PublicLine(t, alice)+"\n")
	st := sampleStatement("alice")
	sig, stmt := signFile(t, alice, st)
	if err := osshVerify(t, trustPath, "alice", sig, stmt); err == nil {
		t.Fatal("ssh-keygen accepted a namespaces list with a long pattern")
	}
	if _, err := LoadTrustFile(trustPath); err == nil || !strings.Contains(err.Error(), "1023") {
		t.Fatalf("long namespaces pattern: %v", err)
	}
}

// TestStoreIdentityWithSpace: a store identity a statement cannot carry
// is refused with advice to set trust.store.
func TestStoreIdentityWithSpace(t *testing.T) {
	st := sampleStatement("alice")
	st.Store = "sqlite:/home/a b/approve.db"
	_, err := st.Encode()
	if !errors.Is(err, ErrStatement) || !strings.Contains(err.Error(), "trust.store") {
		t.Fatalf("store with a space: %v", err)
	}
}

// TestSignDecisionThroughAgent: Settings.SignDecision through a real
// ssh-agent gives a signature the real ssh-keygen -Y verify accepts over
// the statement it returns, under the principal the trust file names.
func TestSignDecisionThroughAgent(t *testing.T) {
	needSSHKeygen(t)
	dir := t.TempDir()
	alice := genKey(t, dir, "ed25519", "alice")
	stranger := genKey(t, dir, "ed25519", "stranger")
	trustPath := writeTrust(t, dir, "alice@example.com "+sshtest.PublicLine(t, alice)+"\n")
	as, err := LoadTrustFile(trustPath)
	if err != nil {
		t.Fatal(err)
	}
	settings := &Settings{Mode: ModeRequired, Path: trustPath, Signers: as, Store: "sqlite:/var/lib/approve-tui/approve.db"}
	sock := sshtest.Agent(t, alice)
	signer, err := DialAgent(sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer signer.Close()
	now := time.Now()
	st := Statement{Decision: DecisionApprove, ApprovalID: "Ab3_x-9QzL0k", PayloadSHA256: SHA256Hex([]byte("payload")), Risk: RiskHigh}
	sig, err := settings.SignDecision(signer, st, now)
	if err != nil {
		t.Fatal(err)
	}
	if sig.Principal != "alice@example.com" || sig.Key != signer.Fingerprint() {
		t.Fatalf("signature %+v", sig)
	}
	sigPath := filepath.Join(dir, "sig")
	stmtPath := filepath.Join(dir, "statement")
	must(t, os.WriteFile(sigPath, []byte(sig.Armored), 0o600))
	must(t, os.WriteFile(stmtPath, sig.Statement, 0o600))
	cmd := "ssh-keygen -Y verify -f " + trustPath + " -I alice@example.com -n " + Namespace + " -s " + sigPath + " < " + stmtPath
	if out, err := execCombined("sh", "-c", cmd); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	got, err := ParseStatement(sig.Statement)
	if err != nil || got.Store != settings.Store || got.Principal != "alice@example.com" || !got.Time.Equal(now.UTC().Truncate(time.Second)) {
		t.Fatalf("statement %+v %v", got, err)
	}
	want := Expect{Store: settings.Store, ApprovalID: st.ApprovalID, PayloadSHA256: st.PayloadSHA256, Risk: st.Risk,
		Decisions: []Decision{DecisionApprove, DecisionVote}, Skew: time.Minute, MaxAge: 15 * time.Minute}
	if v, err := Verify([]byte(sig.Armored), sig.Statement, as, want, time.Now()); err != nil || v.Principal != "alice@example.com" {
		t.Fatalf("Verify: %+v %v", v, err)
	}

	// A key the trust file does not list signs nothing.
	other := sshtest.Agent(t, stranger)
	ss, err := DialAgent(other, "")
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	if sig, err := settings.SignDecision(ss, st, now); err == nil || sig != nil || !strings.Contains(err.Error(), "not in the trust file") {
		t.Fatalf("stranger's key: %+v %v", sig, err)
	}
}
