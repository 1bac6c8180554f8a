package cli

import (
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/model"
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
escaped; "CORRUPT": the row cannot be trusted and can only be denied), ID,
RISK (HIGH/MED/LOW, UNKN for unknown), STATUS, WHEN (time left, or when and
by whom it was decided), SESSION, COMMAND.

On a terminal the columns are aligned and COMMAND is cut to the width, with
an ellipsis (risk in colour unless --color never, NO_COLOR or TERM=dumb).
Piped or redirected, each row is one line of tab-separated fields, every
field whole (cut -f, awk -F'\t'); --json gives everything.

With --json: an array of proposal objects (see show --help).
` + exitCodesHelp,
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
			if a.json {
				elems := make([]string, len(recs))
				for i, r := range recs {
					elems[i] = recordJSON(r, nil).String()
				}
				a.printf("%s\n", jsonArray(elems))
				return nil
			}
			if len(recs) == 0 {
				a.note("no %s proposals", filter)
				return nil
			}
			a.writeTable(recs, s.Now())
			return nil
		},
	}
	cmd.Flags().StringVar(&status, "status", "pending", "pending, consumed, denied, expired or all")
	cmd.Flags().IntVar(&limit, "limit", 200, "at most `n` rows")
	cmd.Flags().IntVar(&offset, "offset", 0, "skip the first `n` rows")
	return cmd
}

func (a *app) writeTable(recs []*storage.Record, now time.Time) {
	const sessionMax, whenMax = 24, 36
	rows := [][]string{{"FLAG", "ID", "RISK", "STATUS", "WHEN", "SESSION", "COMMAND"}}
	for _, r := range recs {
		var flag []string
		if r.Suspicious() {
			flag = append(flag, "!")
		}
		if r.Corrupt != "" {
			flag = append(flag, "CORRUPT")
		}
		rows = append(rows, []string{
			strings.Join(flag, " "),
			line(r.ApprovalID),
			r.EffectiveRisk.Short(),
			line(string(r.EffectiveStatus)),
			cut(whenCell(r, now), whenMax),
			cut(line(r.SessionKey), sessionMax),
			line(r.Command),
		})
	}
	a.writeRowsPainted(rows, func(col int, cell, padded string) string {
		switch col {
		case 0:
			if cell != "" {
				return sgr("1;31", padded)
			}
		case 2:
			return sgr(riskSGR[cell], padded)
		}
		return padded
	})
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

// writeRows prints sanitised cells as aligned columns; the last column
// takes the rest of the width and is cut with an ellipsis (never below 20
// cells).
func (a *app) writeRows(rows [][]string) { a.writeRowsPainted(rows, nil) }

// writeRowsPainted is writeRows with paint colouring a cell (after padding,
// so widths are the text's) when output is in colour. Not on a terminal
// the rows are tab-separated, every field whole, for other tools: cells are
// sanitised single lines, so none holds a tab or a newline.
func (a *app) writeRowsPainted(rows [][]string, paint func(col int, cell, padded string) string) {
	if a.termW() == 0 && a.color != "always" {
		for _, row := range rows {
			a.printf("%s\n", strings.Join(row, "\t"))
		}
		return
	}
	if !a.colorful() {
		paint = nil
	}
	n := len(rows[0])
	widths := make([]int, n-1)
	for _, row := range rows {
		for i, c := range row[:n-1] {
			widths[i] = max(widths[i], cells(c))
		}
	}
	used := 0
	for _, w := range widths {
		used += w + 2
	}
	lastW := max(a.width()-used, 20)
	for i, row := range rows {
		var b strings.Builder
		for j, c := range row[:n-1] {
			cell := pad(c, widths[j])
			if paint != nil && i > 0 {
				cell = paint(j, c, cell)
			}
			b.WriteString(cell)
			b.WriteString("  ")
		}
		b.WriteString(cut(row[n-1], lastW))
		a.printf("%s\n", strings.TrimRight(b.String(), " "))
	}
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
