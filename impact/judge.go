package impact

import (
	"fmt"
	"slices"

	"github.com/approve-tui/approve-tui/model"
)

// Thresholds at which an impact raises a proposal's risk (never lowers
// it): a preview is facts, and 100,000 files deleted is HIGH whatever the
// pattern said.
const (
	HighEntries = 10_000
	HighBytes   = 10 << 30
	MedEntries  = 1_000
	MedBytes    = 1 << 30
)

// Raise is the risk an impact asks for ("" none) and why.
func Raise(m *model.Impact) (model.RiskLevel, string) {
	if m == nil {
		return "", ""
	}
	switch {
	case m.Live():
		return model.RiskHigh, "impact: it reaches something live (a mount point, or a symlink that points into it)"
	case m.Entries >= HighEntries || m.Bytes >= HighBytes:
		return model.RiskHigh, fmt.Sprintf("impact: %s entries, %s", Group(m.Entries), Bytes(m.Bytes))
	case m.Entries >= MedEntries || m.Bytes >= MedBytes:
		return model.RiskMedium, fmt.Sprintf("impact: %s entries, %s", Group(m.Entries), Bytes(m.Bytes))
	}
	return "", ""
}

// Tolerance is how much an impact may grow between the preview an
// approval named and the moment the command runs: a tenth, and at least
// 10 entries and 1 MiB (logs grow while an operator reads).
const (
	ToleranceShare   = 0.10
	ToleranceEntries = 10
	ToleranceBytes   = 1 << 20
)

// Grew says how now's impact exceeds approved's beyond the tolerance: new
// targets that exist, more entries or bytes, a target that became a mount
// point or gained a live symlink. Empty: it did not grow. Paths in the
// reasons are the host's: foreign text.
func Grew(approved, now *model.Impact) []string {
	if approved == nil || now == nil {
		return nil
	}
	var out []string
	was := map[string]model.ImpactTarget{}
	for _, t := range approved.Targets {
		was[t.Op+"\x00"+t.Path] = t
	}
	for _, t := range now.Targets {
		old, ok := was[t.Op+"\x00"+t.Path]
		switch {
		case !t.Exists || t.Entries == 0:
		case !ok || !old.Exists || old.Entries == 0:
			out = append(out, fmt.Sprintf("%s %s exists now and did not when approved", t.Op, t.Path))
			continue
		}
		if !ok {
			continue
		}
		for _, m := range t.Mounts {
			if !slices.Contains(old.Mounts, m) {
				out = append(out, fmt.Sprintf("%s is a mount point now, under %s", m, t.Path))
			}
		}
		for _, l := range t.LiveLinks {
			if !slices.Contains(old.LiveLinks, l) {
				out = append(out, fmt.Sprintf("%s points into %s now", l, t.Path))
			}
		}
	}
	if over(now.Entries, approved.Entries, ToleranceEntries) {
		out = append(out, fmt.Sprintf("%s entries now, %s when approved", Group(now.Entries), Group(approved.Entries)))
	}
	if over(now.Bytes, approved.Bytes, ToleranceBytes) {
		out = append(out, fmt.Sprintf("%s now, %s when approved", Bytes(now.Bytes), Bytes(approved.Bytes)))
	}
	if len(now.Unknown) > len(approved.Unknown) {
		out = append(out, "more of the command cannot be previewed now")
	}
	return out
}

func over(now, was, floor int64) bool {
	allowed := int64(float64(was)*ToleranceShare) + 0
	if allowed < floor {
		allowed = floor
	}
	return now > was+allowed
}
