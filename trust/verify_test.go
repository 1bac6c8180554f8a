package trust

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/sshtest"
	"golang.org/x/crypto/ssh"
)

// TestOracleBothWays signs with this package and verifies with
// ssh-keygen -Y verify, and signs with ssh-keygen -Y sign and verifies
// with this package, for ed25519, ecdsa and rsa keys.
func TestOracleBothWays(t *testing.T) {
	needSSHKeygen(t)
	for _, kt := range []struct{ typ, bits string }{{"ed25519", ""}, {"ecdsa", "256"}, {"ecdsa", "384"}, {"rsa", "3072"}} {
		t.Run(kt.typ+kt.bits, func(t *testing.T) {
			dir := t.TempDir()
			var extra []string
			if kt.bits != "" {
				extra = []string{"-b", kt.bits}
			}
			key := genKey(t, dir, kt.typ, "alice", extra...)
			trustPath := writeTrust(t, dir, "alice@example.com "+sshtest.PublicLine(t, key)+" alice's laptop\n")
			as, err := LoadTrustFile(trustPath)
			if err != nil {
				t.Fatal(err)
			}
			st := sampleStatement("alice@example.com")
			stmt := mustEncode(t, st)

			signer, err := KeyFileSigner(key)
			if err != nil {
				t.Fatal(err)
			}
			sig, err := signer.Sign(stmt)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(sig), "-----BEGIN SSH SIGNATURE-----\n") {
				t.Fatalf("not armored: %q", sig)
			}
			if err := osshVerify(t, trustPath, "alice@example.com", sig, stmt); err != nil {
				t.Fatalf("ssh-keygen -Y verify refused our signature: %v", err)
			}
			v, err := Verify(sig, stmt, as, expectOf(st), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if v.Principal != "alice@example.com" || v.Fingerprint != signer.Fingerprint() || v.Line != 1 {
				t.Fatalf("verified %+v", v)
			}

			theirs := osshSign(t, key, Namespace, stmt)
			if _, err := Verify(theirs, stmt, as, expectOf(st), time.Now()); err != nil {
				t.Fatalf("ssh-keygen's signature refused: %v", err)
			}
			// ssh-keygen told to hash with sha256 is accepted too.
			theirs256 := osshSign(t, key, Namespace, stmt, "-O", "hashalg=sha256")
			if _, err := Verify(theirs256, stmt, as, expectOf(st), time.Now()); err != nil {
				t.Fatalf("ssh-keygen's sha256 signature refused: %v", err)
			}
		})
	}
}

func TestAgentSigning(t *testing.T) {
	needSSHKeygen(t)
	dir := t.TempDir()
	alice := genKey(t, dir, "ed25519", "alice")
	bob := genKey(t, dir, "ecdsa", "bob")
	carol := genKey(t, dir, "rsa", "carol")
	trustPath := writeTrust(t, dir, "alice "+sshtest.PublicLine(t, alice)+"\nbob "+sshtest.PublicLine(t, bob)+"\ncarol "+sshtest.PublicLine(t, carol)+"\n")
	as, err := LoadTrustFile(trustPath)
	if err != nil {
		t.Fatal(err)
	}

	empty := sshtest.Agent(t)
	if _, err := DialAgent(empty, ""); !errors.Is(err, ErrAgent) || !strings.Contains(err.Error(), "no keys") {
		t.Fatalf("empty agent: %v", err)
	}
	if _, err := DialAgent(filepath.Join(dir, "nosock"), ""); !errors.Is(err, ErrAgent) {
		t.Fatalf("missing agent: %v", err)
	}
	if _, err := DialAgent("", ""); !errors.Is(err, ErrAgent) {
		t.Fatalf("no socket: %v", err)
	}

	sock := sshtest.Agent(t, alice, bob, carol)
	_, err = DialAgent(sock, "")
	if !errors.Is(err, ErrAgent) {
		t.Fatalf("several keys and no choice: %v", err)
	}
	aliceSigner, _ := KeyFileSigner(alice)
	for _, want := range []string{"3 keys", aliceSigner.Fingerprint()} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
	if _, err := DialAgent(sock, "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"); !errors.Is(err, ErrAgent) {
		t.Fatalf("unknown fingerprint: %v", err)
	}

	for _, c := range []struct{ principal, key, choose string }{
		{"alice", alice, aliceSigner.Fingerprint()},
		{"bob", bob, sshtest.PublicLine(t, bob)},
		{"carol", carol, sshtest.PublicLine(t, carol) + " comment"},
	} {
		s, err := DialAgent(sock, c.choose)
		if err != nil {
			t.Fatal(err)
		}
		st := sampleStatement(c.principal)
		stmt := mustEncode(t, st)
		sig, err := s.Sign(stmt)
		s.Close()
		if err != nil {
			t.Fatalf("%s: %v", c.principal, err)
		}
		if err := osshVerify(t, trustPath, c.principal, sig, stmt); err != nil {
			t.Fatalf("%s: ssh-keygen refused the agent's signature: %v", c.principal, err)
		}
		if v, err := Verify(sig, stmt, as, expectOf(st), time.Now()); err != nil || v.Principal != c.principal {
			t.Fatalf("%s: %+v %v", c.principal, v, err)
		}
	}

	one := sshtest.Agent(t, alice)
	s, err := DialAgent(one, "")
	if err != nil {
		t.Fatalf("an agent with one key: %v", err)
	}
	defer s.Close()
	if s.Fingerprint() != aliceSigner.Fingerprint() {
		t.Fatal("wrong key")
	}
}

func TestEncryptedKeyFile(t *testing.T) {
	needSSHKeygen(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "locked")
	genKeyPass(t, path)
	_, err := KeyFileSigner(path)
	if err == nil || !strings.Contains(err.Error(), "encrypted") || !strings.Contains(err.Error(), "ssh-agent") {
		t.Fatalf("encrypted key: %v", err)
	}
}

func genKeyPass(t *testing.T, path string) {
	t.Helper()
	if out, err := execCombined("ssh-keygen", "-q", "-t", "ed25519", "-N", "secret pass", "-f", path); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestRefusals: each forgery or misuse is refused with its own reason, and
// where ssh-keygen can judge the same thing it refuses too.
func TestRefusals(t *testing.T) {
	needSSHKeygen(t)
	dir := t.TempDir()
	alice := genKey(t, dir, "ed25519", "alice")
	mallory := genKey(t, dir, "ed25519", "mallory")
	old := genKey(t, dir, "ed25519", "old")
	ci := genKey(t, dir, "ed25519", "ci")
	trustPath := writeTrust(t, dir, strings.Join([]string{
		"# operators",
		"alice " + sshtest.PublicLine(t, alice),
		`old valid-before="20200101Z" ` + sshtest.PublicLine(t, old),
		`ci namespaces="git,file" ` + sshtest.PublicLine(t, ci),
		"",
	}, "\n"))
	as, err := LoadTrustFile(trustPath)
	if err != nil {
		t.Fatal(err)
	}
	signWith := func(key string, st Statement) ([]byte, []byte) {
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
	now := time.Now()
	good := sampleStatement("alice")
	goodSig, goodStmt := signWith(alice, good)
	if _, err := Verify(goodSig, goodStmt, as, expectOf(good), now); err != nil {
		t.Fatal(err)
	}

	otherID := expectOf(good)
	otherID.ApprovalID = "ZZZZZZZZZZZZ"
	otherPayload := expectOf(good)
	otherPayload.PayloadSHA256 = strings.Repeat("cd", 32)
	otherStore := expectOf(good)
	otherStore.Store = "another-store"
	otherRisk := expectOf(good)
	otherRisk.Risk = RiskLow

	tampered := []byte(strings.Replace(string(goodStmt), "risk=high", "risk=low", 1))
	tamperedSt, _ := ParseStatement(tampered)

	bob := sampleStatement("bob")
	bobSig, bobStmt := signWith(alice, bob)
	malSig, malStmt := signWith(mallory, good)
	oldSt := sampleStatement("old")
	oldSig, oldStmt := signWith(old, oldSt)
	ciSt := sampleStatement("ci")
	ciSig, ciStmt := signWith(ci, ciSt)
	gitSig := osshSign(t, alice, "git", goodStmt)

	corrupt := []byte(strings.Replace(string(goodSig), "\n", "\nAAAA", 2))
	cases := []struct {
		name       string
		sig, stmt  []byte
		want       Expect
		reason     Reason
		principal  string // for ssh-keygen; "" skips the oracle
		osshRefuse bool
	}{
		{"copied to another id", goodSig, goodStmt, otherID, ReasonMismatch, "", false},
		{"replayed over another payload", goodSig, goodStmt, otherPayload, ReasonMismatch, "", false},
		{"replayed into another store", goodSig, goodStmt, otherStore, ReasonMismatch, "", false},
		{"another pinned risk", goodSig, goodStmt, otherRisk, ReasonMismatch, "", false},
		{"statement edited after signing", goodSig, tampered, expectOf(tamperedSt), ReasonBadSignature, "alice", true},
		{"wrong namespace", gitSig, goodStmt, expectOf(good), ReasonNamespace, "alice", true},
		{"key not in the trust file", malSig, malStmt, expectOf(good), ReasonUnknownKey, "alice", true},
		{"principal not on the key's line", bobSig, bobStmt, expectOf(bob), ReasonPrincipalMismatch, "bob", true},
		{"expired valid-before", oldSig, oldStmt, expectOf(oldSt), ReasonExpired, "old", true},
		{"namespaces option excludes approve-tui", ciSig, ciStmt, expectOf(ciSt), ReasonNamespace, "ci", true},
		{"corrupt armour", corrupt, goodStmt, expectOf(good), ReasonMalformed, "", false},
		{"not a signature", []byte("hello"), goodStmt, expectOf(good), ReasonMalformed, "", false},
		{"non-canonical statement", goodSig, append(append([]byte{}, goodStmt...), '\n'), expectOf(good), ReasonMalformed, "", false},
		{"no store expected", goodSig, goodStmt, Expect{Decisions: CountingDecisions}, ReasonMismatch, "", false},
		{"no decision expected", goodSig, goodStmt, Expect{}, ReasonDecision, "", false},
	}
	for _, c := range cases {
		_, err := Verify(c.sig, c.stmt, as, c.want, now)
		if ReasonOf(err) != c.reason {
			t.Errorf("%s: got %v, want reason %s", c.name, err, c.reason)
		}
		if c.principal != "" {
			oerr := osshVerify(t, trustPath, c.principal, c.sig, c.stmt)
			if c.osshRefuse && oerr == nil {
				t.Errorf("%s: ssh-keygen accepted what we refuse", c.name)
			}
		}
	}

	// valid-after in the future, and a window that held at signing but
	// not now.
	future := time.Now().Add(48*time.Hour).UTC().Format("20060102") + "Z"
	tp2 := writeTrust(t, t.TempDir(), `alice valid-after="`+future+`" `+sshtest.PublicLine(t, alice)+"\n")
	as2, err := LoadTrustFile(tp2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(goodSig, goodStmt, as2, expectOf(good), now); ReasonOf(err) != ReasonNotYetValid {
		t.Fatalf("valid-after: %v", err)
	}
	soon := time.Now().Add(time.Hour).UTC().Format("200601021504") + "Z"
	tp3 := writeTrust(t, t.TempDir(), `alice valid-before="`+soon+`" `+sshtest.PublicLine(t, alice)+"\n")
	as3, err := LoadTrustFile(tp3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(goodSig, goodStmt, as3, expectOf(good), now); err != nil {
		t.Fatalf("inside the window: %v", err)
	}
	if _, err := Verify(goodSig, goodStmt, as3, expectOf(good), now.Add(3*time.Hour)); ReasonOf(err) != ReasonExpired {
		t.Fatalf("expired since signing: %v", err)
	}
}

func TestTrustFileRefusals(t *testing.T) {
	needSSHKeygen(t)
	keyDir := t.TempDir()
	alice := genKey(t, keyDir, "ed25519", "alice")
	line := "alice " + sshtest.PublicLine(t, alice) + "\n"

	dir := t.TempDir()
	p := writeTrust(t, dir, line)
	if _, err := LoadTrustFile(p); err != nil {
		t.Fatal(err)
	}
	var tfe *TrustFileError
	os.Chmod(p, 0o666)
	if _, err := LoadTrustFile(p); !errors.As(err, &tfe) || !strings.Contains(err.Error(), "world-writable") {
		t.Fatalf("world-writable file: %v", err)
	}
	os.Chmod(p, 0o620)
	if _, err := LoadTrustFile(p); !errors.As(err, &tfe) || !strings.Contains(err.Error(), "group-writable") {
		t.Fatalf("group-writable file: %v", err)
	}
	os.Chmod(p, 0o644)
	os.Chmod(dir, 0o777)
	if _, err := LoadTrustFile(p); !errors.As(err, &tfe) || tfe.Path != dir || !strings.Contains(err.Error(), "directory is world-writable") {
		t.Fatalf("world-writable directory: %v", err)
	}
	os.Chmod(dir, 0o700)
	if _, err := LoadTrustFile(filepath.Join(dir, "missing")); !errors.As(err, &tfe) {
		t.Fatalf("missing file: %v", err)
	}

	// A link from a safe directory to a safe file is followed; a link in a
	// writable directory, or to a file in one, is refused.
	safeLink := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(p, safeLink); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTrustFile(safeLink); err != nil {
		t.Fatalf("safe link: %v", err)
	}
	openDir := t.TempDir()
	os.Chmod(openDir, 0o777)
	badLink := filepath.Join(openDir, "link")
	os.Symlink(p, badLink)
	if _, err := LoadTrustFile(badLink); !errors.As(err, &tfe) || tfe.Path != openDir {
		t.Fatalf("link in a writable directory: %v", err)
	}
	target := filepath.Join(openDir, "allowed_signers")
	os.WriteFile(target, []byte(line), 0o600)
	linkToOpen := filepath.Join(t.TempDir(), "link")
	os.Symlink(target, linkToOpen)
	if _, err := LoadTrustFile(linkToOpen); !errors.As(err, &tfe) || tfe.Path != openDir {
		t.Fatalf("link to a file in a writable directory: %v", err)
	}

	// Owned by someone else (needs root to arrange).
	if os.Geteuid() == 0 {
		os.Chown(p, 4242, 4242)
		if _, err := LoadTrustFile(p); !errors.As(err, &tfe) || !strings.Contains(err.Error(), "owned by uid 4242") {
			t.Fatalf("foreign owner: %v", err)
		}
		os.Chown(p, 0, 0)
	} else {
		t.Log("not root: the foreign-owner case is not arranged")
	}
}

func TestAllowedSignersParse(t *testing.T) {
	needSSHKeygen(t)
	dir := t.TempDir()
	alice := genKey(t, dir, "ed25519", "alice")
	pub := sshtest.PublicLine(t, alice)
	okText := strings.Join([]string{
		"# comment",
		"",
		"   alice@example.com " + pub + " a comment with spaces",
		`alice@example.com namespaces="approve-tui,git",valid-after="20240101Z",valid-before="203001021530Z" ` + pub,
		"\talice@example.com VALID-AFTER=\"20240101123045Z\" " + pub,
	}, "\n") + "\n"
	as, err := ParseAllowedSigners("f", []byte(okText))
	if err != nil {
		t.Fatal(err)
	}
	if len(as.Signers) != 3 || as.Signers[0].Line != 3 || as.Signers[0].Comment != "a comment with spaces" {
		t.Fatalf("%+v", as.Signers)
	}
	b := as.Signers[1]
	if len(b.Namespaces) != 2 || b.ValidBefore != time.Date(2030, 1, 2, 15, 30, 0, 0, time.UTC) || b.ValidAfter.IsZero() {
		t.Fatalf("%+v", b)
	}
	if as.Signers[2].ValidAfter != time.Date(2024, 1, 1, 12, 30, 45, 0, time.UTC) {
		t.Fatalf("%+v", as.Signers[2])
	}

	bad := map[string]string{
		"cert-authority":         "alice cert-authority " + pub,
		"unknown option":         "alice no-touch-required " + pub,
		"unquoted value":         "alice namespaces=git " + pub,
		"unterminated quote":     `alice namespaces="git ` + pub,
		"bad time":               `alice valid-before="2024-01-01" ` + pub,
		"short time":             `alice valid-before="2024010" ` + pub,
		"reversed window":        `alice valid-after="20300101Z",valid-before="20200101Z" ` + pub,
		"local time (no Z)":      `alice valid-before="20300101" ` + pub,
		"no key":                 "alice",
		"bad base64":             "alice ssh-ed25519 AAAA!!!",
		"type mismatch":          "alice ssh-rsa " + strings.Fields(pub)[1],
		"certificate key":        "alice ssh-ed25519-cert-v01@openssh.com AAAA",
		"empty principal":        "alice,,bob " + pub,
		"control byte":           "alice\x01 " + pub,
		"CRLF":                   "alice " + pub + "\r",
		"duplicate option":       `alice namespaces="a",namespaces="b" ` + pub,
		"empty namespaces":       `alice namespaces="" ` + pub,
		"quoted principals":      `"alice bob" ` + pub,
		"option without a value": "alice valid-before " + pub,
	}
	for name, l := range bad {
		text := "# first\n" + l + "\n"
		_, err := ParseAllowedSigners("/etc/approve-tui/allowed_signers", []byte(text))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 || !strings.HasPrefix(err.Error(), "/etc/approve-tui/allowed_signers:2: ") {
			t.Errorf("%s: got %v, want a FILE:2: error", name, err)
		}
	}
	_, err = ParseAllowedSigners("f", []byte("alice cert-authority "+pub+"\n"))
	if err == nil || !strings.Contains(err.Error(), "cert-authority is not supported") {
		t.Fatalf("cert-authority: %v", err)
	}
}

func TestMatchPatternList(t *testing.T) {
	cases := []struct {
		name, list string
		want       bool
	}{
		{"alice", "alice", true},
		{"alice", "Alice", false},
		{"alice", "bob,alice", true},
		{"alice@x.org", "*@x.org", true},
		{"alice@y.org", "*@x.org", false},
		{"al", "a?", true},
		{"alice", "a?", false},
		{"eve@x.org", "*@x.org,!eve@x.org", false},
		{"eve@x.org", "!eve@x.org", false},
		{"bob", "!eve", false},
		{"a", "*", true},
		{"abcabd", "*abd", true},
	}
	for _, c := range cases {
		if got := MatchPatternList(c.name, c.list); got != c.want {
			t.Errorf("MatchPatternList(%q, %q) = %v", c.name, c.list, got)
		}
	}
}

func TestQuorum(t *testing.T) {
	none := &AllowedSigners{}
	v := func(p string, d Decision) Verified {
		return Verified{Principal: p, Fingerprint: "SHA256:" + p, Statement: Statement{Decision: d}}
	}
	list := []Verified{
		v("alice", DecisionVote), v("alice", DecisionApprove), v("agent", DecisionVote),
		v("bob", DecisionDeny), v("carol", DecisionApprove),
	}
	if n, ok := Quorum(list, 2, "agent", none); n != 2 || !ok {
		t.Fatalf("got %d %v", n, ok)
	}
	if n, ok := Quorum(list, 3, "agent", none); n != 2 || ok {
		t.Fatalf("got %d %v", n, ok)
	}
	if n, ok := Quorum(list, 2, "alice", none); n != 2 || !ok { // agent and carol
		t.Fatalf("got %d %v", n, ok)
	}
	// One key signing under two names (a pattern line) counts once.
	same := []Verified{
		{Principal: "bob@ops", Fingerprint: "SHA256:k1", Statement: Statement{Decision: DecisionVote}},
		{Principal: "dan@ops", Fingerprint: "SHA256:k1", Statement: Statement{Decision: DecisionVote}},
	}
	if n, ok := Quorum(same, 2, "agent", none); n != 1 || ok {
		t.Fatalf("one key, two names: %d %v", n, ok)
	}
	if n, ok := Quorum(nil, 0, "x", none); n != 0 || ok {
		t.Fatalf("empty: %d %v", n, ok)
	}
	// The requester's own key under another name, or its name in another
	// case, never counts; an unknown requester counts nothing.
	newKey := func() ssh.Signer {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		k, err := ssh.NewSignerFromKey(priv)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	bob, alice := newKey(), newKey()
	signers := &AllowedSigners{Signers: []Signer{
		{Line: 1, Principals: "bob", Key: bob.PublicKey()},
		{Line: 2, Principals: "bob@corp", Key: bob.PublicKey()},
		{Line: 3, Principals: "alice", Key: alice.PublicKey()},
	}}
	fp := func(k ssh.Signer) string { return ssh.FingerprintSHA256(k.PublicKey()) }
	own := []Verified{
		{Principal: "bob@corp", Fingerprint: fp(bob), Statement: Statement{Decision: DecisionVote}},
		{Principal: "Bob", Fingerprint: "SHA256:other", Statement: Statement{Decision: DecisionVote}},
		{Principal: "alice", Fingerprint: fp(alice), Statement: Statement{Decision: DecisionVote}},
	}
	if n, ok := Quorum(own, 2, "bob", signers); n != 1 || ok {
		t.Fatalf("requester's own key under another name counted: %d %v", n, ok)
	}
	if n, ok := Quorum(own, 1, "", signers); n != 0 || ok {
		t.Fatalf("unknown requester: %d %v", n, ok)
	}
}

// TestAgentRefuses: a key added with ssh-add -c needs a confirmation the
// agent cannot get here (its askpass says no), so signing fails with an
// error naming the key, and nothing is signed.
func TestAgentRefuses(t *testing.T) {
	needSSHKeygen(t)
	dir := t.TempDir()
	alice := genKey(t, dir, "ed25519", "alice")
	t.Setenv("SSH_ASKPASS", "/bin/false")
	t.Setenv("SSH_ASKPASS_REQUIRE", "force")
	t.Setenv("DISPLAY", ":0")
	sock := sshtest.Agent(t)
	if out, err := execEnv([]string{"SSH_AUTH_SOCK=" + sock}, "ssh-add", "-c", alice); err != nil {
		t.Fatalf("ssh-add -c: %v\n%s", err, out)
	}
	s, err := DialAgent(sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sig, err := s.Sign(mustEncode(t, sampleStatement("alice")))
	if !errors.Is(err, ErrAgent) || sig != nil || !strings.Contains(err.Error(), s.Fingerprint()) {
		t.Fatalf("a refusing agent: %q %v", sig, err)
	}
	t.Logf("refused: %v", err)
}

// TestTrustFileOwners: a verifier running as the agent's user leaves that
// user out of the allowed owners, so a file it owns is refused.
func TestTrustFileOwners(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the file to other uids")
	}
	dir := t.TempDir()
	p := writeTrust(t, dir, "")
	os.Chown(dir, 1500, 1500)
	os.Chown(p, 1500, 1500)
	var tfe *TrustFileError
	if _, err := LoadTrustFileOwnedBy(p); !errors.As(err, &tfe) || !strings.Contains(err.Error(), "owned by uid 1500") {
		t.Fatalf("root alone: %v", err)
	}
	if _, err := LoadTrustFileOwnedBy(p, 1500); err != nil {
		t.Fatalf("operator uid 1500 allowed: %v", err)
	}
	if _, err := LoadTrustFileOwnedBy(p, 1600); !errors.As(err, &tfe) {
		t.Fatalf("another uid: %v", err)
	}
}
