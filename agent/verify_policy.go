package agent

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// Policies named by approvals. The newest signed policy among the rows the
// store still has is not enough: the agent's user can delete the newest
// policy's rows and bring an older, laxer one back (or none). Each approval
// names the signed policy its signer's surface held in force
// (policy_sha256 in the statement), and that surface refuses to sign
// against a policy older than one it saw before. So the verifier also
// applies every policy a counted signature names: each must still be in
// the store with a valid policy signer's signature, else nothing runs, and
// the command needs what each of them asks. Deleting rows can then only
// make a command refuse, never need less.

// namedPolicy is a signed policy an approval names, read and parsed.
type namedPolicy struct {
	sha   string
	label string
	pol   *policy.Policy
}

// namedPolicies are the policies the statements of counted name (each
// once, in the order first named), other than inForce (the SHA-256 of the
// signed policy already applied, "" for none). A named policy whose file
// or whose policy signer's signature is gone refuses.
func namedPolicies(ctx context.Context, set *trust.Settings, s *storage.Store, store string, now time.Time, counted []trust.Verified, inForce string) ([]namedPolicy, error) {
	var want []string
	for _, v := range counted {
		if sum := v.Statement.PolicySHA256; sum != "" && sum != inForce && !slices.Contains(want, sum) {
			want = append(want, sum)
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	rows, err := s.SignaturesUpTo(ctx, storage.PolicyRef, maxPolicyRows+1)
	if err != nil {
		return nil, fmt.Errorf("the policy's signatures could not be read: %w", err)
	}
	if len(rows) > maxPolicyRows {
		return nil, &SignatureError{Why: fmt.Sprintf("more than %d policy signature rows are stored: rows added behind approve-tui's back; the policy in force cannot be known", maxPolicyRows)}
	}
	signedBy := map[string]string{}
	checked := 0
	for _, row := range rows {
		st, err := trust.ParseStatement(row.Statement)
		if err != nil || st.Decision != trust.DecisionPolicy || !slices.Contains(want, st.PolicySHA256) || signedBy[st.PolicySHA256] != "" || !set.PolicySigner(st.Principal) {
			continue
		}
		if checked++; checked > maxPolicySignatures {
			return nil, &SignatureError{Why: fmt.Sprintf("more than %d policy signatures by policy signers are stored: rows added behind approve-tui's back; the policy in force cannot be known", maxPolicySignatures)}
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("the policy's signatures could not be checked in time: %w", err)
		}
		v, err := trust.Verify([]byte(row.Armored), row.Statement, set.Signers, trust.Expect{Store: store, PolicySHA256: st.PolicySHA256,
			Decisions: []trust.Decision{trust.DecisionPolicy}, Skew: signatureSkew}, now)
		if err != nil || v.Statement.Decision != trust.DecisionPolicy || !set.PolicySigner(v.Principal) || v.Statement.Time.After(now.Add(signatureSkew)) {
			continue
		}
		signedBy[st.PolicySHA256] = v.Principal
	}
	gone := func(sum, what string) error {
		return &SignatureError{Why: fmt.Sprintf("the policy it was approved under (%s) is not in the store any more (%s): rows were deleted; nothing runs until a policy signer sets the policy again and it is approved again", sum[:12], what)}
	}
	var out []namedPolicy
	for _, sum := range want {
		who := signedBy[sum]
		if who == "" {
			return nil, gone(sum, "no valid signature by a policy signer")
		}
		versions, err := s.PolicyTextsBySHA256(ctx, sum, maxPolicyTexts)
		if err != nil {
			return nil, fmt.Errorf("the policy versions could not be read: %w", err)
		}
		found := false
		for _, pv := range versions {
			if trust.SHA256Hex([]byte(pv.Source)) != sum {
				continue
			}
			p, err := config.ParsePolicy("policy v"+strconv.FormatInt(pv.Version, 10), []byte(pv.Source))
			if err != nil {
				return nil, &SignatureError{Why: fmt.Sprintf("the policy it was approved under (%s, signed by %s) cannot be read: %v", sum[:12], who, err)}
			}
			out = append(out, namedPolicy{sha: sum, label: fmt.Sprintf("%s (signed by %s, named by the approval)", sum[:12], who), pol: p})
			found = true
			break
		}
		if !found {
			return nil, gone(sum, "its file is gone")
		}
	}
	return out, nil
}

// applyNamed stands voters against each named policy: need is the most
// approvals any asks (at least need), unmet names those not met.
func applyNamed(named []namedPolicy, subj policy.Subject, voters []policy.Voter, need int) (int, []string) {
	var unmet []string
	for _, n := range named {
		req := n.pol.Requirement(subj)
		need = max(need, req.Approvals)
		if !n.pol.Stand(req, voters).Met() || len(voters) < req.Approvals {
			unmet = append(unmet, "policy "+n.label+" asks for "+req.Describe())
		}
	}
	return need, unmet
}

// namedWords is the unmet named policies, for a refusal.
func namedWords(unmet []string) string {
	return strings.Join(unmet, "; ")
}
