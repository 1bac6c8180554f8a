package storage

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/trust"
)

// CheckSignature on rows as a hostile agent can write them: each check it
// makes refuses a row of its own, with a reason of its own, and a row as
// approve-tui keeps it verifies. Real ed25519 keys; no store needed but
// for CheckedSignatures.

func TestDecisionsFor(t *testing.T) {
	for _, tc := range []struct {
		event string
		want  []trust.Decision
	}{
		{EventApprove, trust.CountingDecisions},
		{EventVote, trust.CountingDecisions},
		{EventDeny, []trust.Decision{trust.DecisionDeny}},
		{EventPolicySet, []trust.Decision{trust.DecisionPolicy}},
		{EventSubmit, nil},
		{"", nil},
		{"APPROVE", nil},
	} {
		if got := DecisionsFor(tc.event); !slices.Equal(got, tc.want) {
			t.Errorf("DecisionsFor(%q) = %v, want %v", tc.event, got, tc.want)
		}
	}
	// The list returned is the caller's: changing it changes nothing else.
	DecisionsFor(EventApprove)[0] = trust.DecisionDeny
	if trust.CountingDecisions[0] != trust.DecisionApprove {
		t.Fatal("DecisionsFor hands out trust.CountingDecisions itself")
	}
}

func TestExpectFor(t *testing.T) {
	made := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rec := &Record{PayloadSHA256: strings.Repeat("ab", 32),
		Proposal: model.Proposal{ApprovalID: "expect-0001", RiskLevel: model.RiskHigh, CreatedAt: model.Epoch(made)}}
	want := ExpectFor(rec, testStore)
	if want.Store != testStore || want.ApprovalID != "expect-0001" || want.PayloadSHA256 != rec.PayloadSHA256 || want.Risk != "high" ||
		want.Skew != StatementSkew || !want.NotBefore.Equal(made.Add(-StatementSkew)) || want.Decisions != nil || want.MaxAge != 0 {
		t.Fatalf("ExpectFor = %+v", want)
	}
	rec.CreatedAt = 0
	if w := ExpectFor(rec, testStore); !w.NotBefore.IsZero() {
		t.Fatalf("a proposal of unknown age bounds the statement's time: %v", w.NotBefore)
	}
}

// row is sig as approve-tui keeps it for event on id.
func row(id, event string, sig *model.Signature) SignatureRecord {
	return SignatureRecord{Seq: 1, ApprovalID: id, Event: event, Principal: sig.Principal, Key: sig.Key,
		Statement: sig.Statement, Armored: sig.Armored, At: model.Epoch(time.Now())}
}

func TestCheckSignature(t *testing.T) {
	alice, bob, carol, stranger := newKey(t, "alice"), newKey(t, "bob"), newKey(t, "carol"), newKey(t, "alice")
	ts := trustOf(t, []string{"carol"}, alice.line(), bob.line(), carol.line())
	made := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := made.Add(5 * time.Minute)
	rec := &Record{PayloadSHA256: strings.Repeat("cd", 32),
		Proposal: model.Proposal{ApprovalID: "check-00001", RiskLevel: model.RiskHigh, CreatedAt: model.Epoch(made)}}
	want := ExpectFor(rec, testStore)
	at := made.Add(time.Minute)
	approve := approval(rec, at)
	deny := approve
	deny.Decision = trust.DecisionDeny
	policySrc := "rules: []\n"
	policyWant := trust.Expect{Store: testStore, PolicySHA256: trust.SHA256Hex([]byte(policySrc)), Skew: StatementSkew}

	check := func(r SignatureRecord, w trust.Expect) CheckedSignature {
		t.Helper()
		return CheckSignature(r, ts, w, now)
	}
	ok := func(name string, c CheckedSignature, principal string) {
		t.Helper()
		if c.Verified == nil || c.Reason != "" || c.Problem != "" || c.Verified.Principal != principal || c.Principal() != principal {
			t.Fatalf("%s: %+v, want verified as %s", name, c, principal)
		}
	}
	refused := func(name string, c CheckedSignature, reason string, words ...string) {
		t.Helper()
		if c.Verified != nil || c.OK() || c.Counts() || c.Reason != reason {
			t.Fatalf("%s: verified %v reason %q (%s), want refused %q", name, c.Verified != nil, c.Reason, c.Problem, reason)
		}
		for _, w := range words {
			if !strings.Contains(c.Problem, w) {
				t.Fatalf("%s: problem %q does not say %q", name, c.Problem, w)
			}
		}
		if strings.ContainsAny(c.Problem, "\n\r\x1b") {
			t.Fatalf("%s: problem not sanitised: %q", name, c.Problem)
		}
	}

	// As kept: an approve or vote counts; a deny verifies, not counting.
	c := check(row(rec.ApprovalID, EventApprove, alice.signed(t, approve)), want)
	ok("approve", c, "alice")
	if !c.Counts() || !c.Parsed || c.Statement.ApprovalID != rec.ApprovalID {
		t.Fatalf("approve: %+v", c)
	}
	ok("vote", check(row(rec.ApprovalID, EventVote, bob.signed(t, approve)), want), "bob")
	c = check(row(rec.ApprovalID, EventDeny, bob.signed(t, deny)), want)
	ok("deny", c, "bob")
	if c.Counts() {
		t.Fatal("a deny counts as an approval")
	}
	// A policy, by a policy signer; by anyone else it is refused.
	pol := trust.Statement{Decision: trust.DecisionPolicy, PolicySHA256: policyWant.PolicySHA256, Time: at}
	ok("policy", check(row(PolicyRef, EventPolicySet, carol.signed(t, pol)), policyWant), "carol")
	refused("policy by a non-signer", check(row(PolicyRef, EventPolicySet, alice.signed(t, pol)), policyWant), CheckNotPolicySigner, "alice is not a policy signer")

	// No trust file: nothing checked, said so.
	r := row(rec.ApprovalID, EventApprove, alice.signed(t, approve))
	for _, none := range []*trust.Settings{nil, {Mode: trust.ModeRequired}} {
		c := CheckSignature(r, none, want, now)
		refused("no trust file", c, CheckNoTrustFile, "no trust file")
		if !c.Parsed || c.Principal() != "alice" {
			t.Fatalf("the statement of an unchecked row is not read: %+v", c)
		}
	}
	// Kept with an event that is no decision.
	refused("submit event", check(row(rec.ApprovalID, EventSubmit, alice.signed(t, approve)), want), CheckNoDecision, "submit")
	// A deny kept as an approve, an approve kept as a deny.
	refused("deny as approve", check(row(rec.ApprovalID, EventApprove, alice.signed(t, deny)), want), string(trust.ReasonDecision))
	refused("approve as deny", check(row(rec.ApprovalID, EventDeny, alice.signed(t, approve)), want), string(trust.ReasonDecision))
	// A key in no trust file, signing as alice.
	refused("stranger", check(row(rec.ApprovalID, EventApprove, stranger.signed(t, approve)), want), string(trust.ReasonUnknownKey))
	// Alice's key signing as bob.
	asBob := approve
	asBob.Principal = "bob"
	refused("as another", check(row(rec.ApprovalID, EventApprove, alice.signed(t, asBob)), want), string(trust.ReasonPrincipalMismatch))
	// Over another proposal, payload, risk or store: a copy.
	for name, mod := range map[string]func(*trust.Statement){
		"other id":      func(s *trust.Statement) { s.ApprovalID = "check-00002" },
		"other payload": func(s *trust.Statement) { s.PayloadSHA256 = strings.Repeat("ef", 32) },
		"other risk":    func(s *trust.Statement) { s.Risk = "low" },
		"other store":   func(s *trust.Statement) { s.Store = "store:elsewhere" },
	} {
		st := approve
		mod(&st)
		refused(name, check(row(rec.ApprovalID, EventApprove, alice.signed(t, st)), want), string(trust.ReasonMismatch))
	}
	// Dated before the proposal was made (less the skew), or after now
	// (more than the skew); within the skew either way it holds.
	early := approval(rec, made.Add(-StatementSkew-time.Second))
	refused("before the proposal", check(row(rec.ApprovalID, EventApprove, alice.signed(t, early)), want), string(trust.ReasonStale))
	ok("within skew before", check(row(rec.ApprovalID, EventApprove, alice.signed(t, approval(rec, made.Add(-StatementSkew+time.Second)))), want), "alice")
	late := approval(rec, now.Add(StatementSkew+time.Second))
	refused("future", check(row(rec.ApprovalID, EventApprove, alice.signed(t, late)), want), string(trust.ReasonFuture))
	ok("within skew after", check(row(rec.ApprovalID, EventApprove, alice.signed(t, approval(rec, now.Add(StatementSkew-time.Second)))), want), "alice")
	// The signature bytes changed: forged.
	forged := row(rec.ApprovalID, EventApprove, alice.signed(t, approve))
	forged.Statement = []byte(strings.Replace(string(forged.Statement), "high", "low", 1))
	refused("statement edited", check(forged, trust.Expect{Store: testStore, ApprovalID: rec.ApprovalID, PayloadSHA256: rec.PayloadSHA256,
		Risk: "low", Skew: StatementSkew}), string(trust.ReasonBadSignature))
	garbled := row(rec.ApprovalID, EventApprove, alice.signed(t, approve))
	garbled.Armored = "-----BEGIN SSH SIGNATURE-----\n\x1b[31mnot base64\n-----END SSH SIGNATURE-----\n"
	refused("garbled", check(garbled, want), string(trust.ReasonMalformed))
	// The row's claims are not the signature's: a row edited after it was kept.
	claim := row(rec.ApprovalID, EventApprove, alice.signed(t, approve))
	claim.Principal = "bob"
	refused("row principal", check(claim, want), CheckRowMismatch, "the row says principal bob, the signature alice")
	claim = row(rec.ApprovalID, EventApprove, alice.signed(t, approve))
	claim.Key = bob.signer.Fingerprint()
	refused("row key", check(claim, want), CheckRowMismatch, "the row says key "+bob.signer.Fingerprint())
	// A hostile event name is quoted, not printed raw.
	refused("hostile event", check(row(rec.ApprovalID, "approve\n\x1b[2J", alice.signed(t, approve)), want), CheckNoDecision)
}

// CheckedSignatures reads the store's rows for a proposal and checks them
// against its trust file, over the proposal as given.
func TestCheckedSignatures(t *testing.T) {
	alice, bob := newKey(t, "alice"), newKey(t, "bob")
	ts := trustOf(t, nil, alice.line(), bob.line())
	c := newClock()
	s := openTrusted(t, tempDB(t), c, ts)
	rec := submitHigh(t, s, c, "trust-checked-01")
	if got, err := s.CheckedSignatures(ctx, rec); err != nil || len(got) != 0 {
		t.Fatalf("no signatures yet: %+v %v", got, err)
	}
	if _, err := approve(s, rec, osActor(alice.signed(t, approval(rec, c.Now())))); err != nil {
		t.Fatal(err)
	}
	// A copy of alice's row, its principal rewritten to bob's.
	mustExec(t, rawDB(t, s.DSN()), `INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at)
		SELECT approval_id, 'vote', 'bob', key_fp, statement, signature, at FROM approve_tui_signatures WHERE approval_id = ?`, rec.ApprovalID)
	got, err := s.CheckedSignatures(ctx, rec)
	if err != nil || len(got) != 2 {
		t.Fatalf("%+v %v", got, err)
	}
	if !got[0].Counts() || got[0].Verified.Principal != "alice" || got[1].OK() || got[1].Reason != CheckRowMismatch {
		t.Fatalf("checked %+v", got)
	}
	// Over another payload (as the console shows a changed proposal), none holds.
	other := *rec
	other.PayloadSHA256 = strings.Repeat("00", 32)
	got, err = s.CheckedSignatures(ctx, &other)
	if err != nil || len(got) != 2 || got[0].OK() || got[0].Reason != string(trust.ReasonMismatch) {
		t.Fatalf("over another payload: %+v %v", got, err)
	}
}
