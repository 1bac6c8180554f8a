package trust

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/sshtest"
)

func TestStatementRoundTrip(t *testing.T) {
	s := sampleStatement("alice@example.com")
	s.Time = time.Date(2026, 12, 5, 6, 7, 8, 999, time.FixedZone("x", 3600))
	b := mustEncode(t, s)
	want := "approve-tui-statement-v1\nstore=store-7f3a\ndecision=approve\nid=Ab3_x-9QzL0k\npayload_sha256=" +
		strings.Repeat("ab", 32) + "\nrisk=high\nprincipal=alice@example.com\ntime=2026-12-05T05:07:08Z\n"
	if string(b) != want {
		t.Fatalf("encoding:\n%s\nwant:\n%s", b, want)
	}
	got, err := ParseStatement(b)
	if err != nil {
		t.Fatal(err)
	}
	b2 := mustEncode(t, got)
	if string(b2) != want {
		t.Fatalf("re-encoding differs:\n%s", b2)
	}

	p := Statement{Store: "s", Decision: DecisionPolicy, PolicySHA256: strings.Repeat("0f", 32), Principal: "root-admin", Time: s.Time}
	pb := mustEncode(t, p)
	if !strings.Contains(string(pb), "policy_sha256=") || strings.Contains(string(pb), "\nid=") {
		t.Fatalf("policy statement: %s", pb)
	}
	if _, err := ParseStatement(pb); err != nil {
		t.Fatal(err)
	}
}

func TestStatementRejectsHostileFields(t *testing.T) {
	base := sampleStatement("alice")
	cases := map[string]func(*Statement){
		"newline in store":            func(s *Statement) { s.Store = "a\nprincipal=bob" },
		"NUL in id":                   func(s *Statement) { s.ApprovalID = "a\x00b" },
		"space in id":                 func(s *Statement) { s.ApprovalID = "a b" },
		"non-ASCII principal":         func(s *Statement) { s.Principal = "alicé" },
		"pattern principal":           func(s *Statement) { s.Principal = "*" },
		"list principal":              func(s *Statement) { s.Principal = "alice,bob" },
		"negated principal":           func(s *Statement) { s.Principal = "!bob" },
		"empty store":                 func(s *Statement) { s.Store = "" },
		"long id":                     func(s *Statement) { s.ApprovalID = strings.Repeat("a", 257) },
		"upper-case hex":              func(s *Statement) { s.PayloadSHA256 = strings.Repeat("AB", 32) },
		"short hex":                   func(s *Statement) { s.PayloadSHA256 = "abcd" },
		"bad risk":                    func(s *Statement) { s.Risk = "critical" },
		"bad decision":                func(s *Statement) { s.Decision = "approve\n" },
		"bad policy hash on approval": func(s *Statement) { s.PolicySHA256 = strings.Repeat("AB", 32) },
		"short policy hash":           func(s *Statement) { s.PolicySHA256 = "abcd" },
		"zero time":                   func(s *Statement) { s.Time = time.Time{} },
		"policy with id": func(s *Statement) {
			s.Decision = DecisionPolicy
			s.PolicySHA256 = strings.Repeat("ab", 32)
		},
	}
	for name, mutate := range cases {
		s := base
		mutate(&s)
		if _, err := s.Encode(); !errors.Is(err, ErrStatement) {
			t.Errorf("%s: Encode gave %v, want a statement error", name, err)
		}
	}
}

func TestParseStatementRejectsNonCanonical(t *testing.T) {
	good := string(mustEncode(t, sampleStatement("alice")))
	cases := map[string]string{
		"no final newline":   strings.TrimSuffix(good, "\n"),
		"CRLF":               strings.ReplaceAll(good, "\n", "\r\n"),
		"space before value": strings.Replace(good, "risk=high", "risk= high", 1),
		"reordered":          strings.Replace(strings.Replace(good, "risk=high\n", "", 1), "store=", "risk=high\nstore=", 1),
		"duplicate key":      strings.Replace(good, "risk=high\n", "risk=high\nrisk=high\n", 1),
		"extra key":          good + "note=x\n",
		"trailing blank":     good + "\n",
		"offset time":        strings.Replace(good, "Z\n", "+00:00\n", 1),
		"fractional time":    strings.Replace(good, "Z\n", ".5Z\n", 1),
		"other header":       strings.Replace(good, "-v1", "-v2", 1),
		"missing principal":  strings.Replace(good, "principal=alice\n", "", 1),
		"upper-case key":     strings.Replace(good, "store=", "Store=", 1),
		"policy hash first":  strings.Replace(good, "id=", "policy_sha256="+strings.Repeat("ab", 32)+"\nid=", 1),
		"empty policy hash":  strings.Replace(good, "principal=", "policy_sha256=\nprincipal=", 1),
	}
	for name, text := range cases {
		if _, err := ParseStatement([]byte(text)); !errors.Is(err, ErrStatement) {
			t.Errorf("%s: ParseStatement gave %v, want a statement error", name, err)
		}
	}
}

func TestSHA256Hex(t *testing.T) {
	if got := SHA256Hex([]byte("abc")); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatal(got)
	}
	if err := checkHex("x", SHA256Hex(nil)); err != nil {
		t.Fatal(err)
	}
}

// An approval names the signed policy it was made under: one line after
// the risk, canonical, and the real ssh-keygen -Y verify accepts the
// signature over it; Verify takes it whatever the verifier expects of it.
func TestApprovalNamesItsPolicy(t *testing.T) {
	needSSHKeygen(t)
	s := sampleStatement("alice")
	s.Time = time.Date(2026, 12, 5, 6, 7, 8, 0, time.UTC)
	s.PolicySHA256 = strings.Repeat("0f", 32)
	b := mustEncode(t, s)
	want := "approve-tui-statement-v1\nstore=store-7f3a\ndecision=approve\nid=Ab3_x-9QzL0k\npayload_sha256=" +
		strings.Repeat("ab", 32) + "\nrisk=high\npolicy_sha256=" + strings.Repeat("0f", 32) + "\nprincipal=alice\ntime=2026-12-05T06:07:08Z\n"
	if string(b) != want {
		t.Fatalf("encoding:\n%s\nwant:\n%s", b, want)
	}
	got, err := ParseStatement(b)
	if err != nil || got != s {
		t.Fatalf("parsed %+v, %v", got, err)
	}
	for _, d := range []Decision{DecisionVote, DecisionDeny} {
		o := s
		o.Decision = d
		if _, err := ParseStatement(mustEncode(t, o)); err != nil {
			t.Fatalf("%s with a policy hash: %v", d, err)
		}
	}

	dir := t.TempDir()
	key := genKey(t, dir, "ed25519", "alice")
	trustPath := writeTrust(t, dir, "alice "+sshtest.PublicLine(t, key)+"\n")
	as, err := LoadTrustFile(trustPath)
	if err != nil {
		t.Fatal(err)
	}
	s.Time = time.Now().UTC().Truncate(time.Second)
	b = mustEncode(t, s)
	sig := osshSign(t, key, Namespace, b)
	if err := osshVerify(t, trustPath, "alice", sig, b); err != nil {
		t.Fatalf("ssh-keygen -Y verify refused an approval naming its policy: %v", err)
	}
	e := expectOf(s)
	e.PolicySHA256 = "" // an approval's verifier need not know the policy beforehand
	v, err := Verify(sig, b, as, e, time.Now())
	if err != nil || v.Statement.PolicySHA256 != s.PolicySHA256 {
		t.Fatalf("Verify: %+v %v", v, err)
	}
}
