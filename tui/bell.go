package tui

import (
	"fmt"

	"github.com/approve-tui/approve-tui/model"
)

// ring alerts the terminal (Options.Bell) when rows bring proposals at or
// above the bell's risk that were not listed before; the first load rings
// for nothing (what waits is on screen already). The words are the
// program's own: how many, and how risky, never an id or a command.
func (m *Model) ring(rows []row) {
	if !m.loaded {
		// Only what arrives from now on rings (not the rest of a long
		// list, read after its first page).
		m.bellSince = model.Epoch(m.now) - 1
	}
	seen := make(map[string]bool, len(rows))
	n := 0
	var top model.RiskLevel
	for _, r := range rows {
		id := r.rec.ApprovalID
		seen[id] = true
		if !m.loaded || m.opt.Bell == "" || m.rang[id] || r.rec.CreatedAt < m.bellSince {
			continue
		}
		if lv := r.rec.EffectiveRisk; lv.Rank() >= m.opt.Bell.Rank() {
			n++
			if top == "" || lv.Rank() > top.Rank() {
				top = lv
			}
		}
	}
	m.rang = seen
	if n == 0 || m.screen == nil {
		return
	}
	text := fmt.Sprintf("%s proposal waiting", top.Short())
	if n > 1 {
		text = fmt.Sprintf("%d proposals waiting (%s)", n, top.Short())
	}
	m.screen.alert("approve-tui: " + text)
	m.emit("bell", "", "", text)
}
