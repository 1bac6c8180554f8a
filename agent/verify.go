package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
	"golang.org/x/crypto/ssh"
)

// Verification where the command runs. Under trust required, `run`, every
// hook and `hook hermes` let an approved command through only when the
// consumed proposal carries valid signatures, by the trust file, over
// this store, this id, the payload as read now and its pinned risk, from
// enough distinct principals for the policy in force, none of them the
// requester. Everything is decided from the rows and the trust file
// alone: the store's status, consumed_by, votes and policy rows are claims
// the agent's own user can write, so none of them is believed.

// ReasonSignatureInvalid is the execution reason of an approved proposal
// that is not run because its signatures do not hold.
const ReasonSignatureInvalid = "signature_invalid"

// maxApprovalSignatures and maxPolicySignatures bound the signature rows
// a check verifies: more are refused (the agent's user could add rows
// without end, and a hook that took too long would be let through by its
// agent, which runs a call whose hook timed out).
const (
	maxApprovalSignatures = 64
	maxPolicySignatures   = 1000
	// maxPolicyRows bounds the policy signature rows read at all (those
	// that are not a policy signer's policy statement are not counted
	// above), and maxPolicyTexts the versions read whose sha256 column
	// names the signed policy: the store reads no more, and cuts each
	// row's columns (storage.SignaturesUpTo, PolicyTextsBySHA256).
	maxPolicyRows  = 10 * maxPolicySignatures
	maxPolicyTexts = 16
)

// signatureSkew is how far a statement's time may lie before the
// proposal was made, or after now, for clocks that differ.
const signatureSkew = time.Minute

// Self is what the process about to run the command knows of itself,
// never read from the store or the environment.
type Self struct {
	// Requesters are the principals whose signatures never count: the OS
	// user running this process, by uid (RequesterNames). The proposal's
	// recorded requester and origin are added by the check.
	Requesters []string
	// Risk is this process's own judgement of the command, when it made
	// one (the policy's rules are matched at the higher of it and the
	// record's effective risk, the classifier's in this process and the
	// pinned one).
	Risk model.RiskLevel
	// Since is the earliest time a signature may be dated, less a minute
	// (zero: the proposal's created_at as read): when this process
	// submitted the proposal itself, the time it did.
	Since time.Time
	// MaxAge, when positive, is how old a signature may be at most (a
	// minute more for clocks): a hook's proposal lives no longer than its
	// wait, so an approval older than that is a replay.
	MaxAge time.Duration
}

// RequesterNames are the names of the OS user running this process, by
// its real uid (the user database's name) and, for root under sudo, the
// user who ran sudo (model.LocalPerson): never $USER or $HOME. Empty when
// the user database has no name for the uid: then nothing counts.
func RequesterNames() []string {
	var out []string
	if u, err := user.LookupId(strconv.Itoa(os.Getuid())); err == nil && u.Username != "" {
		out = append(out, u.Username)
	}
	if p := model.LocalPerson(); !strings.HasPrefix(p, "uid:") && !slices.Contains(out, p) {
		out = append(out, p)
	}
	return out
}

// SignatureCheck is what a check that held found.
type SignatureCheck struct {
	// Principals are the distinct principals whose signatures counted.
	Principals []string
	// Need is how many the policy asked for.
	Need int
	// Policy names the signed policy version in force ("" when none is
	// signed: one signature is needed).
	Policy string
}

// Words are the check, in a few words: "signed by alice, bob (2 of 2)".
func (c *SignatureCheck) Words() string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf("signed by %s (%d of %d)", strings.Join(c.Principals, ", "), len(c.Principals), c.Need)
}

// SignatureError is a consumed proposal whose signatures do not let it
// run: missing, forged, over something else, by unknown keys, or too few.
type SignatureError struct {
	ID string
	// Have and Need: the distinct principals that counted, and how many
	// the policy in force asks for.
	Have, Need int
	// Why says, in one line, what failed.
	Why string
	// Problems say why each signature that did not count was left out.
	Problems []string
}

func (e *SignatureError) Error() string {
	msg := e.Why
	if len(e.Problems) > 0 {
		msg += ": " + strings.Join(e.Problems, "; ")
	}
	return model.Sanitize(msg, model.Line)
}

// VerifySignatures checks rec, a consumed proposal, against set (nil or
// mode off: no check, nil result). It reads the proposal's signatures,
// the policy's signatures and versions from s, and returns what held, or
// a *SignatureError saying what failed; any other error (the store could
// not be read) means the signatures could not be checked, and the command
// must not run either.
func VerifySignatures(ctx context.Context, set *trust.Settings, s *storage.Store, rec *storage.Record, self Self) (*SignatureCheck, error) {
	if !set.Required() {
		return nil, nil
	}
	// The OS users' principals too, where the trust configuration maps
	// them (trust: users): the requester's own key never counts.
	self.Requesters = set.PrincipalsOfUsers(self.Requesters)
	id := rec.ApprovalID
	refuse := func(format string, a ...any) error {
		return &SignatureError{ID: id, Why: fmt.Sprintf(format, a...)}
	}
	if set.Signers == nil {
		return nil, refuse("trust is required but no trust file is loaded: nothing is run")
	}
	if rec.Corrupt != "" || rec.PayloadSHA256 == "" {
		return nil, refuse("the proposal cannot be read whole, so no signature over it can be checked")
	}
	store := set.Store
	if store == "" {
		store = s.Identity()
	}
	now := s.Now()
	requesters := requesterNames(self, rec)
	if len(requesters) == 0 {
		return nil, refuse("the user running this process has no name in the user database, so the requester cannot be told from an approver: nothing counts")
	}

	pol, label, _, inForce, perr := signedPolicy(ctx, set, s, store, now)
	if perr != nil {
		if se, ok := perr.(*SignatureError); ok {
			se.ID = id
		}
		return nil, perr
	}
	if pol == nil {
		pol = &policy.Policy{} // none signed: one signature
	}
	subj := storage.SubjectOf(rec)
	if self.Risk != "" {
		subj.Risk = model.MaxRisk(rec.EffectiveRisk, self.Risk)
	}
	req := pol.Requirement(subj)
	need := max(req.Approvals, 1)

	rows, err := s.SignaturesUpTo(ctx, id, maxApprovalSignatures+1)
	if err != nil {
		return nil, fmt.Errorf("the signatures of %s could not be read: %w", id, err)
	}
	if len(rows) > maxApprovalSignatures {
		return nil, refuse("signatures stored for this approval: more than the %d any approval has: rows added behind approve-tui's back", maxApprovalSignatures)
	}
	since := self.Since
	if since.IsZero() {
		since = model.FromEpoch(rec.CreatedAt)
	}
	want := trust.Expect{Store: store, ApprovalID: id, PayloadSHA256: rec.PayloadSHA256, Risk: string(rec.RiskLevel),
		Decisions: trust.CountingDecisions, NotBefore: since.Add(-signatureSkew), Skew: signatureSkew}
	if self.MaxAge > 0 {
		want.MaxAge = self.MaxAge + signatureSkew
	}
	var verified []trust.Verified
	var problems []string
	for _, row := range rows {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("the signatures of %s could not be checked in time: %w", id, err)
		}
		if st, err := trust.ParseStatement(row.Statement); err == nil && st.Decision == trust.DecisionDeny {
			// A denial signs no approval; a valid one over exactly this
			// proposal means it was denied, and a denied proposal never
			// runs, whatever its status column says now.
			dw := want
			dw.Decisions, dw.NotBefore, dw.MaxAge = []trust.Decision{trust.DecisionDeny}, time.Time{}, 0
			if v, err := trust.Verify([]byte(row.Armored), row.Statement, set.Signers, dw, now); err == nil {
				return nil, refuse("denied by %s (signed %s): a denied proposal never runs, whatever its row says now", v.Principal, v.Statement.Time.UTC().Format(time.RFC3339))
			}
			continue
		}
		who := signatureName(row)
		c := storage.CheckSignature(row, set, want, now)
		if c.Verified == nil {
			problems = append(problems, who+": "+checkWords(c))
			continue
		}
		// The check held the decision (approve or vote, kept as one), the
		// time (not before the proposal, not older than it can live, not
		// in the future), the store, id, payload and risk to what this
		// process knows, and the row's principal and key to the key's.
		verified = append(verified, *c.Verified)
	}

	counted, left := countable(verified, requesters, set.Signers)
	problems = append(problems, left...)
	voters := make([]policy.Voter, len(counted))
	names := make([]string, len(counted))
	for i, v := range counted {
		voters[i] = policy.Voter{Person: strings.ToLower(v.Principal), Key: v.Fingerprint}
		names[i] = v.Principal
	}
	standing := pol.Stand(req, voters)
	// Every policy an approval was signed under asks too (verify_policy.go).
	named, nerr := namedPolicies(ctx, set, s, store, now, counted, inForce)
	if nerr != nil {
		if se, ok := nerr.(*SignatureError); ok {
			se.ID = id
		}
		return nil, nerr
	}
	need, unmetNamed := applyNamed(named, subj, voters, need)
	// The trust package's own count (by principal and key, never the
	// requester's) must agree.
	have, met := trust.Quorum(counted, need, requesters[0], set.Signers)
	check := &SignatureCheck{Principals: names, Need: need, Policy: label}
	if met && standing.Met() && have >= need && len(unmetNamed) == 0 {
		return check, nil
	}
	e := &SignatureError{ID: id, Have: have, Need: need, Problems: problems}
	rule := "no signed policy is in force: one signature is needed"
	if label != "" {
		rule = "policy " + label + " asks for " + req.Describe()
	}
	if len(unmetNamed) > 0 {
		rule += "; " + namedWords(unmetNamed)
	}
	switch {
	case len(rows) == 0:
		e.Why = "not signed: no signature is stored for this approval (an approval made outside approve-tui, such as Hermes' own /approve or a row changed with sqlite3, carries none; under trust required nothing runs unsigned)"
	case have >= need:
		e.Why = fmt.Sprintf("%d of %d signatures hold, but not from the people %s", have, need, rule)
		if s := standing.Needed(); s != "" {
			e.Why += " (still needed: " + s + ")"
		}
	default:
		e.Why = fmt.Sprintf("not enough valid signatures: %d of %d distinct principals (%s)", have, need, rule)
	}
	return nil, e
}

// requesterNames are the names whose signatures never count: self's,
// and the proposal's recorded requester and origin (as people).
func requesterNames(self Self, rec *storage.Record) []string {
	var out []string
	add := func(n string) {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, n := range self.Requesters {
		add(n)
	}
	if len(out) == 0 {
		return nil // this process does not know who it is: nothing counts
	}
	add(rec.Requester)
	add(policy.Person(rec.Requester))
	add(policy.Person(rec.Origin))
	return out
}

// countable are the verified approvals that count, each person once: not
// signed by any requester (by name, as a person, or by any key a line of
// the trust file admits for a requester), one per principal (as a
// person) and one per key. left says why the others were left out.
func countable(verified []trust.Verified, requesters []string, signers *trust.AllowedSigners) (counted []trust.Verified, left []string) {
	theirs := map[string]string{} // fingerprint -> requester
	for _, sg := range signers.Signers {
		if sg.Key == nil {
			continue
		}
		for _, r := range requesters {
			if trust.MatchPatternList(r, sg.Principals) || linesPerson(sg.Principals, r) {
				theirs[ssh.FingerprintSHA256(sg.Key)] = r
			}
		}
	}
	people, keys := map[string]bool{}, map[string]bool{}
	for _, v := range verified {
		who := fmt.Sprintf("%s (%s)", v.Principal, v.Fingerprint)
		if r := requesterOf(v.Principal, requesters); r != "" {
			left = append(left, fmt.Sprintf("%s: is the requester (%s): a requester never approves their own command", who, r))
			continue
		}
		if r, ok := theirs[v.Fingerprint]; ok {
			left = append(left, fmt.Sprintf("%s: the key is the requester's (%s) in the trust file", who, r))
			continue
		}
		person := strings.ToLower(policy.Person(v.Principal))
		if people[person] || keys[v.Fingerprint] {
			left = append(left, who+": the same person or key as another signature: counted once")
			continue
		}
		people[person], keys[v.Fingerprint] = true, true
		counted = append(counted, v)
	}
	return counted, left
}

// linesPerson reports whether a plain principal of list is requester as
// a person ("alice@example.com" is alice).
func linesPerson(list, requester string) bool {
	for _, p := range strings.Split(list, ",") {
		if !strings.ContainsAny(p, "*?!") && (strings.EqualFold(p, requester) || policy.SamePerson(p, requester)) {
			return true
		}
	}
	return false
}

// requesterOf is the requester principal is, by name or as a person.
func requesterOf(principal string, requesters []string) string {
	for _, r := range requesters {
		if strings.EqualFold(principal, r) || policy.SamePerson(principal, r) {
			return r
		}
	}
	return ""
}

// signedPolicy is the policy in force for the verifier: of the policy
// versions a principal of set.PolicySigners signed (valid, over this
// store), the one signed last; its text is the stored source whose
// SHA-256 the signature names, hashed and parsed here (the row's own
// hash only finds the candidates; its decoded rules are not read). Versions nobody signed change
// nothing. None signed: a nil policy (one signature). A signed version
// whose text is gone or cannot be parsed refuses: the policy in force
// cannot be known.
func signedPolicy(ctx context.Context, set *trust.Settings, s *storage.Store, store string, now time.Time) (*policy.Policy, string, int64, string, error) {
	rows, err := s.SignaturesUpTo(ctx, storage.PolicyRef, maxPolicyRows+1)
	if err != nil {
		return nil, "", 0, "", fmt.Errorf("the policy's signatures could not be read: %w", err)
	}
	if len(rows) > maxPolicyRows {
		return nil, "", 0, "", &SignatureError{Why: fmt.Sprintf("more than %d policy signature rows are stored: rows added behind approve-tui's back; the policy in force cannot be known", maxPolicyRows)}
	}
	var best *trust.Verified
	candidates := 0
	for _, row := range rows {
		st, err := trust.ParseStatement(row.Statement)
		if err != nil || st.Decision != trust.DecisionPolicy || !set.PolicySigner(st.Principal) {
			continue
		}
		if candidates++; candidates > maxPolicySignatures {
			return nil, "", 0, "", &SignatureError{Why: fmt.Sprintf("more than %d policy signatures by policy signers are stored: rows added behind approve-tui's back; the policy in force cannot be known", maxPolicySignatures)}
		}
		if err := ctx.Err(); err != nil {
			return nil, "", 0, "", fmt.Errorf("the policy's signatures could not be checked in time: %w", err)
		}
		c := storage.CheckSignature(row, set, trust.Expect{Store: store, PolicySHA256: st.PolicySHA256, Skew: signatureSkew}, now)
		if c.Verified == nil {
			continue
		}
		v := *c.Verified
		if v.Statement.Decision != trust.DecisionPolicy || !set.PolicySigner(v.Principal) {
			continue
		}
		if v.Statement.Time.After(now.Add(signatureSkew)) {
			continue
		}
		if best == nil || v.Statement.Time.After(best.Statement.Time) {
			best = &v
		}
	}
	if best == nil {
		return nil, "", 0, "", nil
	}
	sum := best.Statement.PolicySHA256
	versions, err := s.PolicyTextsBySHA256(ctx, sum, maxPolicyTexts)
	if err != nil {
		return nil, "", 0, "", fmt.Errorf("the policy versions could not be read: %w", err)
	}
	for _, pv := range versions {
		h := sha256.Sum256([]byte(pv.Source))
		if hex.EncodeToString(h[:]) != sum {
			continue
		}
		p, err := config.ParsePolicy("policy v"+strconv.FormatInt(pv.Version, 10), []byte(pv.Source))
		if err != nil {
			return nil, "", 0, "", &SignatureError{Why: fmt.Sprintf("the policy %s signed (%s) cannot be read: %v", best.Principal, sum[:12], err)}
		}
		return p, fmt.Sprintf("%s (signed by %s)", sum[:12], best.Principal), pv.Version, sum, nil
	}
	return nil, "", 0, "", &SignatureError{Why: fmt.Sprintf("the policy %s signed last (%s) is not in the store: the policy in force cannot be known", best.Principal, sum[:12])}
}

// signatureName names a stored signature by what it claims, for a
// message: "bob (SHA256:...)" (the claims are the row's, sanitised).
func signatureName(r storage.SignatureRecord) string {
	p := model.Sanitize(r.Principal, model.Line)
	if p == "" {
		p = "unnamed"
	}
	k := model.Sanitize(r.Key, model.Line)
	if len(k) > 60 {
		k = k[:60] + "..."
	}
	return fmt.Sprintf("signature %d as %q (key %s)", r.Seq, p, k)
}

// refusalWords are a trust refusal in words a person reads: which kind
// of failure, then the detail.
func refusalWords(err error) string {
	var ve *trust.VerifyError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	what := map[trust.Reason]string{
		trust.ReasonMalformed:         "malformed",
		trust.ReasonBadSignature:      "forged (the signature does not hold over its statement)",
		trust.ReasonNamespace:         "wrong namespace",
		trust.ReasonHashAlgorithm:     "refused algorithm",
		trust.ReasonUnknownKey:        "unknown key",
		trust.ReasonPrincipalMismatch: "principal not the key's",
		trust.ReasonExpired:           "key expired",
		trust.ReasonNotYetValid:       "key not yet valid",
		trust.ReasonNoTouch:           "security key not touched",
		trust.ReasonMismatch:          "signed for something else",
		trust.ReasonDecision:          "not an approval",
		trust.ReasonStale:             "stale (a replayed signature)",
		trust.ReasonFuture:            "dated in the future",
	}[ve.Reason]
	if what == "" {
		what = string(ve.Reason)
	}
	return what + ": " + ve.Detail
}

// RefuseSignatures is, for a caller outside this package that lets a
// command run on an approval (wait, whose exit 0 a script runs the
// command on), what run and the hooks do when VerifySignatures fails: a
// report event saying why, then the execution recorded
// blocked_after_consume with reason ReasonSignatureInvalid. It returns
// the words, sanitised.
func RefuseSignatures(ctx context.Context, s *storage.Store, id string, err error, actor model.Actor, logf func(string, ...any)) string {
	words := refuseSignatures(ctx, s, id, err, actor, logf)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if rerr := s.RecordExecution(wctx, id, model.ExecBlockedAfterConsume, ReasonSignatureInvalid, actor); rerr != nil {
		var it *storage.InvalidTransitionError
		if !errors.As(rerr, &it) {
			logf("warning: could not record that %s is not run: %v", id, rerr)
		}
	}
	return words
}

// checkWords are a failed storage.CheckSignature in words a person reads:
// the verifier's refusal (refusalWords), or what else failed.
func checkWords(c storage.CheckedSignature) string {
	if c.Err != nil {
		return refusalWords(c.Err)
	}
	what := map[string]string{
		string(trust.ReasonDecision):          "not an approval",
		string(trust.ReasonUnknownKey):        "unknown key",
		string(trust.ReasonPrincipalMismatch): "principal not the key's",
		storage.CheckNoDecision:               "not kept as a decision",
		storage.CheckRowMismatch:              "row changed after it was kept",
		storage.CheckNoTrustFile:              "not checked",
	}[c.Reason]
	if what == "" {
		what = c.Reason
	}
	return what + ": " + c.Problem
}

// refuseSignatures audits why approved proposal id is not run (a report
// event saying what failed, beside the execution reason
// ReasonSignatureInvalid the caller records) and returns the words.
func refuseSignatures(ctx context.Context, s *storage.Store, id string, err error, actor model.Actor, logf func(string, ...any)) string {
	words := "the signatures could not be checked: " + err.Error()
	detail := map[string]any{"reason": ReasonSignatureInvalid}
	var se *SignatureError
	if errors.As(err, &se) {
		words = se.Error()
		detail["have"], detail["need"] = se.Have, se.Need
		if len(se.Problems) > 0 {
			detail["problems"] = se.Problems
		}
	}
	words = model.Sanitize(words, model.Line)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if rerr := s.RecordReport(wctx, id, "signatures", words, detail, actor); rerr != nil {
		logf("warning: could not record why %s is refused: %v", id, rerr)
	}
	return words
}

// SignedPolicyAsks is, under trust required, what the policy a policy
// signer signed last says of a command about to go unasked (no risk rule
// matches it): a *storage.PolicyAsksError naming its rules that match,
// when any does; nil when none does, none is signed, or trust is off. The
// store's own check (storage.PolicyAsks, RecordPolicy) reads the newest
// policy row, which the agent's user can replace; this one reads only
// what a policy signer signed. An error means the signed policy could
// not be known: the command must be asked.
func SignedPolicyAsks(ctx context.Context, set *trust.Settings, s *storage.Store, command, cwd, session, requester string, level model.RiskLevel, judging risk.Context) error {
	if !set.Required() {
		return nil
	}
	if set.Signers == nil {
		return fmt.Errorf("trust is required but no trust file is loaded")
	}
	store := set.Store
	if store == "" {
		store = s.Identity()
	}
	pol, _, version, _, err := signedPolicy(ctx, set, s, store, s.Now())
	if err != nil || pol == nil {
		return err
	}
	judging.Cwd = cwd
	j := risk.Judge(command, judging)
	patterns := make([]string, len(j.Table.Matches))
	for i, m := range j.Table.Matches {
		patterns[i] = m.Description
	}
	subj := policy.Subject{Risk: model.MaxRisk(level.Normalized(), j.Level), Session: session, Requester: requester,
		Command: command, Patterns: patterns, Effects: j.Effects}
	verdicts, req := pol.Explain(subj)
	if !req.Ruled() {
		return nil
	}
	e := &storage.PolicyAsksError{Version: version, Needs: req.Describe()}
	for _, v := range verdicts {
		if !v.Matches {
			continue
		}
		name := fmt.Sprintf("rule %d", v.Rule+1)
		if l := pol.Rules[v.Rule].Line; l > 0 {
			name += fmt.Sprintf(" (line %d)", l)
		}
		e.Rules = append(e.Rules, name+" of the signed policy: "+strings.Join(v.Why, ", "))
	}
	return e
}

// signedAsksWords says why SignedPolicyAsks asks: its rules, or that the
// signed policy could not be known.
func signedAsksWords(err error) string {
	var asks *storage.PolicyAsksError
	if errors.As(err, &asks) {
		return asks.Error()
	}
	return "the signed policy could not be known (" + err.Error() + "), so it is asked"
}
