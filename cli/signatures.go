package cli

// The signatures a store keeps, checked: show ID --signatures prints each
// with the ssh-keygen -Y verify line that checks it without approve-tui;
// audit --verify --signers FILE checks every one against the audit log.
// Every field of a signature row is the agent's to write: hostile until
// verified, sanitised when shown.

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// checkSignature checks stored signature r against the trust file of ts
// (storage.CheckSignature), expecting want, as of the time it was signed
// (a key the trust file has since let expire signed validly then). That
// time is the statement's, which the signature covers: never the row's
// column, which whoever can write the store can move.
func checkSignature(r storage.SignatureRecord, ts *trust.Settings, want trust.Expect) storage.CheckedSignature {
	at := time.Now()
	if st, err := trust.ParseStatement(r.Statement); err == nil {
		at = st.Time
	}
	return storage.CheckSignature(r, ts, want, at)
}

// keyOf is the signing key's fingerprint as the signature carries it
// (the row's claim when the signature cannot be read).
func keyOf(r storage.SignatureRecord) string {
	if sig, err := parseArmoredKey(r.Armored); err == nil {
		return sig
	}
	return r.Key
}

// shellWord quotes s for a POSIX shell.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// verifyLines are the shell lines that check signature n with OpenSSH's
// own ssh-keygen: write the statement and the signature, then verify.
func verifyLines(c storage.CheckedSignature, n int, signersPath string) (writeStmt, writeSig, verify string) {
	stmt, sig := fmt.Sprintf("sig-%d.statement", n), fmt.Sprintf("sig-%d.sig", n)
	writeStmt = "echo " + base64.StdEncoding.EncodeToString(c.Row.Statement) + " | base64 -d > " + stmt
	writeSig = "echo " + base64.StdEncoding.EncodeToString([]byte(c.Row.Armored)) + " | base64 -d > " + sig
	verify = "ssh-keygen -Y verify -f " + shellWord(signersPath) + " -I " + shellWord(c.Principal()) + " -n " + trust.Namespace + " -s " + sig + " < " + stmt
	return writeStmt, writeSig, line(verify)
}

// showSignatures is show ID --signatures: every signature kept for id
// (storage.PolicyRef: the policies'), each checked against the configured
// trust file, with the lines that check it with ssh-keygen.
func (a *app) showSignatures(ctx context.Context, s *storage.Store, id string) error {
	var rec *storage.Record
	if id != storage.PolicyRef {
		r, err := s.Get(ctx, id)
		if err != nil {
			return named(id, err)
		}
		rec = r
	}
	sigs, err := s.Signatures(ctx, id)
	if err != nil {
		return err
	}
	ts := s.Trust()
	path := "ALLOWED_SIGNERS"
	if ts != nil {
		path = ts.Path
	}
	var inForce *storage.PolicyVersion
	if rec == nil {
		inForce, _ = s.Policy(ctx) // a policy unreadable is said as "not in force"
	}
	checked := make([]storage.CheckedSignature, len(sigs))
	notes := make([]string, len(sigs))
	for i, r := range sigs {
		want := trust.Expect{Store: s.Identity(), Skew: storage.StatementSkew}
		if rec != nil {
			want = storage.ExpectFor(rec, s.Identity())
		} else if st, err := trust.ParseStatement(r.Statement); err == nil {
			// Which version it signs is said below; the signature is
			// checked over the file it names.
			want.PolicySHA256 = st.PolicySHA256
			switch {
			case inForce != nil && inForce.SHA256 == st.PolicySHA256:
				notes[i] = fmt.Sprintf("signs policy v%d, the version in force", inForce.Version)
			default:
				notes[i] = "signs policy sha256 " + shortSum(st.PolicySHA256) + ", not the version in force"
			}
		}
		checked[i] = checkSignature(r, ts, want)
	}
	if a.json {
		list := make([]*model.JSONObject, len(checked))
		for i, c := range checked {
			ws, wg, v := verifyLines(c, i+1, path)
			o := model.NewJSONObject().Int("seq", c.Row.Seq).Str("event", c.Row.Event).Str("principal", c.Principal())
			if c.Parsed {
				o.Str("decision", string(c.Statement.Decision)).Str("time", c.Statement.Time.UTC().Format(time.RFC3339))
			} else {
				o.Raw("decision", "null").Raw("time", "null")
			}
			o.Str("key", keyOf(c.Row)).Str("statement", base64.StdEncoding.EncodeToString(c.Row.Statement)).
				Str("signature", c.Row.Armored).Bool("verified", c.Verified != nil).OptStr("problem", c.Problem).
				OptStr("note", notes[i]).Str("write_statement", ws).Str("write_signature", wg).Str("verify_command", v)
			list[i] = o
		}
		o := model.NewJSONObject().Str("id", id).Str("store", s.Identity())
		if ts != nil {
			o.Str("trust_file", ts.Path)
		} else {
			o.Raw("trust_file", "null")
		}
		a.printf("%s\n", o.Raw("signatures", model.JSONObjects(list)))
		return nil
	}
	if len(checked) == 0 {
		a.printf("no signatures on %s: nothing about it was signed\n", line(id))
		return nil
	}
	for i, c := range checked {
		if i > 0 {
			a.printf("\n")
		}
		what := line(c.Row.Event)
		if c.Parsed {
			what = line(string(c.Statement.Decision)) + ", signed " + c.Statement.Time.UTC().Format(time.RFC3339)
		}
		a.printf("signature %d of %d on %s: %s by %s, key %s\n", i+1, len(checked), line(id), what, line(c.Principal()), line(keyOf(c.Row)))
		if notes[i] != "" {
			a.printf("  %s\n", notes[i])
		}
		switch {
		case c.Verified != nil:
			a.printf("  verifies against %s: yes (line %d)\n", line(path), c.Verified.Line)
		case ts == nil:
			a.printf("  %s\n", line(c.Problem))
		default:
			a.printf("  verifies against %s: NO: %s\n", line(path), line(c.Problem))
		}
		a.printf("  statement (base64): %s\n", base64.StdEncoding.EncodeToString(c.Row.Statement))
		a.printf("  signature:\n")
		for _, l := range strings.Split(strings.TrimRight(c.Row.Armored, "\n"), "\n") {
			a.printf("    %s\n", line(l))
		}
		ws, wg, v := verifyLines(c, i+1, path)
		a.printf("  check it with OpenSSH's ssh-keygen (write the statement and the signature, then verify):\n")
		a.printf("    %s\n    %s\n    %s\n", ws, wg, v)
	}
	return nil
}

// parseArmoredKey is the fingerprint of the key an armored signature
// carries.
func parseArmoredKey(armored string) (string, error) {
	sig, err := sshsig.Unarmor([]byte(armored))
	if err != nil {
		return "", err
	}
	return ssh.FingerprintSHA256(sig.PublicKey), nil
}

// signatureAudit is what audit --verify --signers found.
type signatureAudit struct {
	checked, valid int
	// problems: a signature that does not hold or does not match the
	// decision it is kept with, one kept with no such decision in the
	// log, a decision of the signed era kept with none.
	problems []string
	// unsigned: decisions kept without a signature that are not problems
	// (denies, which may go unsigned; and decisions from before the first
	// signed one).
	unsigned int
}

// auditSignatures checks every signature the store keeps against the
// trust file at path and against the audit log: each must verify over
// this store's identity, the id and the payload and risk the log
// recorded for the decision it is kept with (the policy's SHA-256 for a
// policy, signed by one of the configuration's policy_signers, or by any
// principal of the file when none is configured), by the principal the
// trust file names for its key, and agree
// with its row and with the signer the decision's event records. Every
// approve, vote and policy set the log records from the first signed
// decision on must carry one.
func (a *app) auditSignatures(ctx context.Context, s *storage.Store, path string) (*signatureAudit, error) {
	signers, err := trust.LoadTrustFile(path)
	if err != nil {
		return nil, exitf(ExitError, "--signers: %s", line(err.Error()))
	}
	ts := &trust.Settings{Mode: trust.ModeRequired, Path: path, Signers: signers, Store: s.Identity()}
	if cur := s.Trust(); cur != nil && len(cur.PolicySigners) > 0 {
		ts.PolicySigners = cur.PolicySigners
	} else {
		// No configuration says who sets policy: a policy signature by any
		// principal of the file is taken as a policy signer's.
		for _, sg := range signers.Signers {
			ts.PolicySigners = append(ts.PolicySigners, sg.Principals)
		}
	}
	var events []storage.AuditEvent
	for before := int64(0); ; {
		page, err := s.Audit(ctx, storage.AuditQuery{Limit: 1000, BeforeSeq: before})
		if err != nil {
			return nil, err
		}
		events = append(events, page...)
		if len(page) < 1000 {
			break
		}
		before = page[len(page)-1].Seq
	}
	type key struct{ id, event string }
	submits := map[string]*storage.AuditEvent{}
	decisions := map[key][]*storage.AuditEvent{}
	for i := len(events) - 1; i >= 0; i-- { // oldest first
		e := &events[i]
		if e.Outcome != storage.OutcomeOK {
			continue
		}
		switch e.Event {
		case storage.EventSubmit:
			submits[e.ApprovalID] = e
		case storage.EventApprove, storage.EventVote, storage.EventDeny, storage.EventPolicySet:
			k := key{e.ApprovalID, e.Event}
			decisions[k] = append(decisions[k], e)
		}
	}
	sigs, err := s.AllSignatures(ctx)
	if err != nil {
		return nil, err
	}
	detail := func(e *storage.AuditEvent, k string) string {
		if e == nil {
			return ""
		}
		v, _ := e.Detail[k].(string)
		return v
	}
	res := &signatureAudit{}
	used := map[*storage.AuditEvent]bool{}
	firstSigned := int64(0)
	next := map[key]int{}
	for _, r := range sigs {
		res.checked++
		k := key{r.ApprovalID, r.Event}
		where := fmt.Sprintf("signature %d on %s (%s, by %s)", r.Seq, line(r.ApprovalID), line(r.Event), line(r.Principal))
		evs := decisions[k]
		if next[k] >= len(evs) {
			res.problems = append(res.problems, where+": the audit log records no such decision for it")
			continue
		}
		e := evs[next[k]]
		next[k]++
		used[e] = true
		want := trust.Expect{Store: ts.Store, Skew: storage.StatementSkew}
		if r.Event == storage.EventPolicySet {
			want.PolicySHA256 = detail(e, "new_sha256")
		} else {
			sub := submits[r.ApprovalID]
			want.ApprovalID = r.ApprovalID
			want.PayloadSHA256, want.Risk = detail(e, "payload_sha256"), detail(e, "pinned_risk")
			if want.PayloadSHA256 == "" {
				want.PayloadSHA256 = detail(sub, "payload_sha256")
			}
			if want.Risk == "" {
				want.Risk = detail(sub, "risk")
			}
			if want.PayloadSHA256 == "" || want.Risk == "" {
				// Not submitted through approve-tui: the row as it is.
				if rec, err := s.Get(ctx, r.ApprovalID); err == nil {
					want.PayloadSHA256 = orStr(want.PayloadSHA256, rec.PayloadSHA256)
					want.Risk = orStr(want.Risk, string(rec.RiskLevel))
				}
			}
		}
		c := checkSignature(r, ts, want)
		switch {
		case c.Verified == nil:
			res.problems = append(res.problems, fmt.Sprintf("%s, audit event %d: %s", where, e.Seq, line(c.Problem)))
			continue
		case detail(e, "signed_by") != "" && detail(e, "signed_by") != c.Verified.Principal:
			res.problems = append(res.problems, fmt.Sprintf("%s: audit event %d says it was signed by %s", where, e.Seq, line(detail(e, "signed_by"))))
			continue
		case detail(e, "signed_key") != "" && detail(e, "signed_key") != c.Verified.Fingerprint:
			res.problems = append(res.problems, fmt.Sprintf("%s: audit event %d says it was signed with key %s", where, e.Seq, line(detail(e, "signed_key"))))
			continue
		}
		res.valid++
		if firstSigned == 0 || e.Seq < firstSigned {
			firstSigned = e.Seq
		}
	}
	for i := len(events) - 1; i >= 0; i-- {
		e := &events[i]
		if e.Outcome != storage.OutcomeOK || used[e] {
			continue
		}
		switch e.Event {
		case storage.EventApprove, storage.EventVote, storage.EventPolicySet:
			if firstSigned != 0 && e.Seq > firstSigned {
				res.problems = append(res.problems, fmt.Sprintf("audit event %d (%s of %s by %s) carries no signature", e.Seq, e.Event, line(e.ApprovalID), line(e.Actor)))
				continue
			}
			res.unsigned++
		case storage.EventDeny:
			res.unsigned++
		}
	}
	return res, nil
}

func orStr(s, alt string) string {
	if s != "" {
		return s
	}
	return alt
}
