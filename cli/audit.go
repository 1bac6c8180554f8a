package cli

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/spf13/cobra"
)

func (a *app) auditCmd() *cobra.Command {
	var (
		verify  bool
		id      string
		limit   int
		signers string
	)
	cmd := &cobra.Command{
		Use:   "audit [--verify [--signers FILE]] [--id ID] [--limit N]",
		Short: "List audit events, or verify the hash-chained audit log",
		Long: `List the audit log newest first: sequence number, time, event, outcome (and
the refusal reason), approval id, actor and surface, and the event's detail.
Every transition and every refused attempt is there.

--verify recomputes the whole hash chain (ignoring --id and --limit) and the
payload of every proposal submitted through approve-tui. It prints
"audit log intact: N events" and exits 0, or names the first broken event and
the problem, and the proposals whose payload changed after submit, and exits
7.

--verify --signers FILE checks every signature the store keeps too, against
FILE (OpenSSH allowed_signers format, as the configuration's trust:
allowed_signers) and the log: each must hold over this store's identity
(the configuration's trust: store, else the database's path or address),
the id, payload SHA-256 and pinned risk the log recorded for the decision
it is kept with (a policy's SHA-256 for a policy), by the one principal
FILE names for its key, and agree with its row and with the signer the
decision's event names; every approve, vote and policy set the log records
after the first signed decision must carry one. A keyless chain can be
recomputed by whoever may write the file; a signature cannot be made
without its key. Each bad signature is reported, and audit exits 7.
` + exitCodesWhere(map[int]string{ExitTampered: "--verify: the log or a payload was altered"}, ExitOK, ExitError, ExitUsage, ExitUnavailable, ExitTampered),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return usageErrorf("--limit must not be negative")
			}
			s, err := a.open(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer s.Close()
			if signers != "" && !verify {
				return usageErrorf("--signers goes with --verify: audit --verify --signers FILE")
			}
			if verify {
				return a.verify(cmd, s, signers)
			}
			evs, err := s.Audit(cmd.Context(), storage.AuditQuery{ApprovalID: id, Limit: limit})
			if err != nil {
				return err
			}
			if a.json {
				elems := make([]string, len(evs))
				for i := range evs {
					elems[i] = auditJSON(&evs[i]).String()
				}
				a.printf("%s\n", jsonArray(elems))
				return nil
			}
			if len(evs) == 0 {
				a.note("no audit events")
				return nil
			}
			t := &table{cols: []column{
				{name: "SEQ", whole: true}, {name: "TIME", whole: true}, {name: "EVENT", whole: true},
				{name: "OUTCOME", min: 8, weight: 2}, {name: "ID", whole: true}, {name: "ACTOR", min: 8, weight: 2},
				{name: "DETAIL", min: 12, weight: 3},
			}}
			for _, e := range evs {
				outcome := line(e.Outcome)
				if e.Reason != "" {
					outcome += ": " + line(e.Reason)
				}
				actor := line(e.Actor)
				if e.Surface != "" {
					actor += " via " + line(e.Surface)
				}
				t.add(strconv.FormatInt(e.Seq, 10), absTime(e.At), line(e.Event), outcome,
					orDash(line(e.ApprovalID)), actor, detailText(e))
			}
			a.writeTable(t)
			return nil
		},
	}
	cmd.Flags().BoolVar(&verify, "verify", false, "verify the hash chain and the payloads")
	cmd.Flags().StringVar(&id, "id", "", "only events of this approval `id`")
	cmd.Flags().IntVar(&limit, "limit", 100, "at most `n` most recent events")
	cmd.Flags().StringVar(&signers, "signers", "", "with --verify: check every signature against this trust `file` (allowed_signers format)")
	return cmd
}

func auditJSON(e *storage.AuditEvent) *model.JSONObject {
	o := model.NewJSONObject().Int("seq", e.Seq).Num("at", e.At).Str("approval_id", e.ApprovalID).
		Str("event", e.Event).Str("outcome", e.Outcome).Str("reason", e.Reason).
		Str("actor", e.Actor).Str("surface", e.Surface)
	switch {
	case e.DetailRaw == "":
		o.Raw("detail", "{}")
	case json.Valid([]byte(e.DetailRaw)):
		o.Raw("detail", e.DetailRaw)
	default:
		o.Str("detail", e.DetailRaw)
	}
	return o.Str("prev_hash", e.PrevHash).Str("hash", e.Hash)
}

func (a *app) verify(cmd *cobra.Command, s *storage.Store, signers string) error {
	res, err := s.VerifyAudit(cmd.Context())
	if err != nil {
		return err
	}
	var sa *signatureAudit
	if signers != "" {
		if sa, err = a.auditSignatures(cmd.Context(), s, signers); err != nil {
			return err
		}
	}
	if a.json {
		o := model.NewJSONObject().Bool("ok", res.OK && (sa == nil || len(sa.problems) == 0)).Int("events", res.Events).Int("broken_seq", res.BrokenSeq).
			Str("problem", res.Problem).Strs("payload_problems", res.PayloadProblems).Strs("gaps", res.Gaps)
		if sa != nil {
			o.Obj("signatures", model.NewJSONObject().Str("signers", signers).Int("checked", int64(sa.checked)).Int("valid", int64(sa.valid)).
				Int("unsigned", int64(sa.unsigned)).Strs("problems", sa.problems))
		}
		a.printf("%s\n", o)
	} else if res.OK {
		a.printf("audit log intact: %d events\n", res.Events)
	} else {
		a.printf("audit log TAMPERED: %s\n", line(res.Problem))
		if res.BrokenSeq > 0 {
			a.printf("first broken event: %d\n", res.BrokenSeq)
		}
		for _, id := range res.PayloadProblems {
			a.printf("payload changed after submit: %s\n", line(id))
		}
		for _, g := range res.Gaps {
			a.printf("missing from the table: %s\n", line(g))
		}
	}
	if sa != nil && !a.json {
		for _, p := range sa.problems {
			a.printf("signature problem: %s\n", p)
		}
		if len(sa.problems) == 0 {
			a.printf("signatures valid: %d of %d against %s (%d decisions unsigned: denies, or before the first signed one)\n", sa.valid, sa.checked, line(signers), sa.unsigned)
		} else {
			a.printf("signatures: %d of %d valid against %s; %d problems\n", sa.valid, sa.checked, line(signers), len(sa.problems))
		}
	}
	switch {
	case !res.OK:
		return exitf(ExitTampered, "audit log verification failed (%d events checked)", res.Events)
	case sa != nil && len(sa.problems) > 0:
		return exitf(ExitTampered, "signature verification failed (%d signatures checked, %d problems)", sa.checked, len(sa.problems))
	}
	return nil
}

// detailText shows an event's detail as key=value pairs in key order (the
// actor's terminal, which --json keeps, is left out), sanitised.
func detailText(e storage.AuditEvent) string {
	if e.Detail == nil {
		return line(e.DetailRaw)
	}
	var parts []string
	for _, d := range e.DetailItems() {
		switch s, ok := d.Value.(string); {
		case d.Key == "actor_detail":
		case ok:
			parts = append(parts, d.Key+"="+strconv.Quote(s))
		default:
			parts = append(parts, d.Key+"="+d.Text())
		}
	}
	return line(strings.Join(parts, " "))
}
