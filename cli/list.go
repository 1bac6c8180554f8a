package cli

import (
	"context"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/impact"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/spf13/cobra"
)

func (a *app) listCmd() *cobra.Command {
	var (
		status        string
		limit, offset int
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List proposals (pending ones most urgent first)",
		Long: `List proposals by effective status (a pending proposal past its expiry counts
as expired). Pending ones come most urgent first: effective risk, then time
left; others newest first.

Columns: FLAG ("!" suspicious: hidden characters in an agent string, shown
escaped; "CORRUPT": the row cannot be trusted and can only be denied;
"TAMPERED": its payload was changed after submit, deny only; "I":
its impact preview raised the risk: it reaches something live, deletes
1,000 entries or 1 GiB, wipes a device, drops commits or changes terraform
resources; show ID says what; "P": parked, its agent stopped waiting and
an approval lets the same call through when it is asked again), ID, RISK (HIGH/MED/LOW, UNKN for unknown),
STATUS, WHEN (time left, or when and by whom it was decided, and whose
signatures over that decision verify against the trust file: "signed:
alice, bob", or "unsigned" where signatures are required), SESSION,
COMMAND. STATUS says "pending (waiter gone)" when the process that waited on
it (a hook, a runner) stopped heartbeating: approving it may run nothing
(show ID says more); "pending (parked)" when it is parked, "pending (park
over)" when its park window ended and an approval is refused.

On a terminal the columns are aligned and every line fits its width: FLAG,
ID, RISK and STATUS stay whole, WHEN, SESSION and COMMAND share the rest and
are cut with an ellipsis (risk in colour unless --color never, NO_COLOR or
TERM=dumb).
Piped or redirected, each row is one line of tab-separated fields, every
field whole (cut -f, awk -F'\t'); --json gives everything.

With --json: an array of proposal objects (see show --help), each with
its quorum (votes are the ones that count) and its judgement, as show
--json gives them, its park where it was parked (see show --help), and
its signers: each signature kept for its decisions,
{principal, key, event, verified, reason}, checked against the trust file
(reason says why one does not verify).
` + exitCodes(ExitOK, ExitError, ExitUsage, ExitUnavailable),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			filter, err := storage.ParseStatusFilter(status)
			if err != nil {
				return usageErrorf("--status: %v", err)
			}
			if limit < 0 || offset < 0 {
				return usageErrorf("--limit and --offset must not be negative")
			}
			s, err := a.open(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer s.Close()
			recs, err := s.List(cmd.Context(), storage.ListOptions{Status: filter, Limit: limit, Offset: offset})
			if err != nil {
				return err
			}
			parkWaiters, err := approvals.ReadParks(cmd.Context(), s, recs)
			if err != nil {
				return err
			}
			if a.json {
				qvs, err := approvals.ReadQuorums(cmd.Context(), s, recs)
				if err != nil {
					return err
				}
				// One context for every row: only the cwd differs.
				jc, err := a.riskContext("")
				if err != nil {
					return err
				}
				elems := make([]string, len(recs))
				for i, r := range recs {
					c := jc
					c.Cwd = r.Cwd
					sg, err := approvals.Signers(cmd.Context(), s, r)
					if err != nil {
						return err
					}
					o := withJudgement(approvals.WithQuorumJSON(approvals.RecordJSON(r, nil), r, qvs[r.ApprovalID]), risk.Judge(r.Command, c))
					approvals.WithParkJSON(o, r, parkWaiters[r.ApprovalID], s.Now())
					elems[i] = o.Raw("signers", approvals.SignersJSON(sg)).String()
				}
				a.printf("%s\n", jsonArray(elems))
				return nil
			}
			if len(recs) == 0 {
				a.note("no %s proposals", filter)
				return nil
			}
			signed, err := decidedSigners(cmd.Context(), s, recs)
			if err != nil {
				return err
			}
			parks := make(map[string]approvals.ParkState, len(recs))
			for _, r := range recs {
				parks[r.ApprovalID] = approvals.ParkStateOf(r, parkWaiters[r.ApprovalID], s.Now())
			}
			a.writeProposals(recs, approvals.WaitersGone(cmd.Context(), s, recs), parks, signed, s.Now())
			return nil
		},
	}
	cmd.Flags().StringVar(&status, "status", "pending", "pending, consumed, denied, expired or all")
	cmd.Flags().IntVar(&limit, "limit", 200, "at most `n` rows")
	cmd.Flags().IntVar(&offset, "offset", 0, "skip the first `n` rows")
	return cmd
}

// writeProposals prints proposals as a table (see writeTable).
// withJudgement adds j to a proposal's object as show --json and list
// --json give it: judgement: {level, hardline, read_only, effects,
// findings: [{rule, level, effect, words, why}], table_level, version}.
func withJudgement(o *model.JSONObject, j risk.Judgement) *model.JSONObject {
	return o.Obj("judgement", judgementFields(model.NewJSONObject(), j))
}

func (a *app) writeProposals(recs []*storage.Record, gone map[string]bool, parks map[string]approvals.ParkState, signed map[string]string, now time.Time) {
	t := &table{cols: []column{
		{name: "FLAG", whole: true}, {name: "ID", whole: true}, {name: "RISK", whole: true},
		{name: "STATUS", whole: true}, {name: "WHEN", min: 10}, {name: "SESSION", min: 8},
		{name: "COMMAND", min: 12, weight: 2},
	}}
	for _, r := range recs {
		var flag []string
		if r.Suspicious() {
			flag = append(flag, "!")
		}
		switch {
		case r.Tampered != "":
			flag = append(flag, "TAMPERED")
		case r.Corrupt != "":
			flag = append(flag, "CORRUPT")
		}
		if r.Corrupt == "" && impact.Marked(r.Impact, r.Command, r.RiskLevel) {
			flag = append(flag, "I")
		}
		if m := approvals.ParkMark(parks[r.ApprovalID]); m != "" {
			flag = append(flag, m)
		}
		t.add(strings.Join(flag, " "), line(r.ApprovalID), r.EffectiveRisk.Short(),
			approvals.StatusParkWords(r, gone[r.ApprovalID], parks[r.ApprovalID]), whenCell(r, now)+signed[r.ApprovalID], line(r.SessionKey), line(r.Command))
	}
	t.paint = func(col int, cell, padded string) string {
		switch col {
		case 0:
			return sgr("1;31", padded)
		case 2:
			return sgr(riskSGR[cell], padded)
		}
		return padded
	}
	a.writeTable(t)
}

// riskSGR colours a RISK cell when output is in colour (the 16 ANSI
// colours, which every colour terminal maps to its own palette).
var riskSGR = map[string]string{"CRIT": "1;35", "HARD": "1;35", "UNKN": "1;31", "HIGH": "31", "MED": "33", "LOW": "32"}

// sgr wraps s in an SGR colour sequence ("" leaves it alone).
func sgr(code, s string) string {
	if code == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// whenCell is the time left for a pending row, the expiry for an expired
// one, and when and by whom for a decided one.
func whenCell(r *storage.Record, now time.Time) string {
	switch r.EffectiveStatus {
	case model.StatusPending, model.StatusPendingConfirm:
		if r.ExpiresAt == nil {
			return "no expiry"
		}
		return relTime(*r.ExpiresAt, now)
	case model.StatusExpired:
		if r.ExpiresAt != nil {
			return relTime(*r.ExpiresAt, now)
		}
	case model.StatusConsumed, model.StatusDenied:
		s := ""
		if r.ConsumedAt != nil {
			s = relTime(*r.ConsumedAt, now)
		}
		if r.ConsumedBy != "" {
			s += " by " + line(r.ConsumedBy)
		}
		return strings.TrimSpace(s)
	}
	return "-"
}

// decidedSigners says, for each approved or denied proposal of recs, whose
// verified signatures decided it ("; signed: alice, bob"), or, where
// signatures are required, that none verifies ("; unsigned"): the words
// the WHEN column adds after who decided.
func decidedSigners(ctx context.Context, s *storage.Store, recs []*storage.Record) (map[string]string, error) {
	out := map[string]string{}
	if s.Trust() == nil {
		return out, nil // nothing can be verified here: nothing to name
	}
	required := s.Trust().Required()
	for _, r := range recs {
		if _, decided := approvals.DecidedBy(r.EffectiveStatus, nil); !decided {
			continue // no decision: no signature to read
		}
		sg, err := approvals.Signers(ctx, s, r)
		if err != nil {
			return nil, err
		}
		if words := approvals.SignedWords(r.EffectiveStatus, sg, required); words != "" {
			out[r.ApprovalID] = words
		}
	}
	return out, nil
}
