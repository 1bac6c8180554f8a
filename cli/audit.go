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
		verify bool
		id     string
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "audit [--verify] [--id ID] [--limit N]",
		Short: "List audit events, or verify the hash-chained audit log",
		Long: `List the audit log newest first: sequence number, time, event, outcome (and
the refusal reason), approval id, actor and surface, and the event's detail.
Every transition and every refused attempt is there.

--verify recomputes the whole hash chain (ignoring --id and --limit) and the
payload of every proposal submitted through approve-tui. It prints
"audit log intact: N events" and exits 0, or names the first broken event and
the problem, and the proposals whose payload changed after submit, and exits
7.
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
			if verify {
				return a.verify(cmd, s)
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

func (a *app) verify(cmd *cobra.Command, s *storage.Store) error {
	res, err := s.VerifyAudit(cmd.Context())
	if err != nil {
		return err
	}
	if a.json {
		a.printf("%s\n", model.NewJSONObject().Bool("ok", res.OK).Int("events", res.Events).Int("broken_seq", res.BrokenSeq).
			Str("problem", res.Problem).Strs("payload_problems", res.PayloadProblems).Strs("gaps", res.Gaps))
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
	if res.OK {
		return nil
	}
	return exitf(ExitTampered, "audit log verification failed (%d events checked)", res.Events)
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
