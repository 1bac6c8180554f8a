package impact

import (
	"fmt"
	"slices"
	"strings"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
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

// Raise is the risk an impact asks for ("" none) and why: HIGH when it
// reaches something live, wipes a block device, destroys terraform
// resources or deletes 10,000 entries or 10 GiB; at least MEDIUM when it
// drops commits, changes terraform resources or deletes 1,000 entries or
// 1 GiB, and whenever the preview did not see all of the command (a part
// not previewed, a walk cut short, a directory it could not read): what
// could not be seen is never harmless. The thresholds apply to what was
// counted, which is then "at least". It is the one rule: whether a
// command may go without a proposal (nothing raised) and how the
// consoles mark it.
func Raise(m *model.Impact) (model.RiskLevel, string) {
	if m == nil {
		return "", ""
	}
	var devices, destroys, updates, commits int64
	var device string
	for _, t := range m.Targets {
		if !t.Touches() {
			continue
		}
		if t.Device != "" {
			devices++
			device = t.Device
		}
		destroys += t.Destroys
		updates += t.Updates
		commits += t.Commits
	}
	atLeast := ""
	if !m.Complete {
		atLeast = "at least "
	}
	counted := fmt.Sprintf("impact: %s%s entries, %s", atLeast, human.Group(m.Entries), human.Bytes(m.Bytes))
	switch {
	case m.Live():
		return model.RiskHigh, "impact: " + liveWhy(m)
	case devices > 0:
		return model.RiskHigh, "impact: it wipes block device " + device
	case destroys > 0:
		return model.RiskHigh, "impact: the plan destroys " + human.Count(destroys, "resource", "resources")
	case m.Entries >= HighEntries || m.Bytes >= HighBytes:
		return model.RiskHigh, counted
	case commits > 0:
		return model.RiskMedium, "impact: it drops " + human.Count(commits, "commit", "commits")
	case updates > 0:
		return model.RiskMedium, "impact: the plan changes " + human.Count(updates, "resource", "resources")
	case m.Entries >= MedEntries || m.Bytes >= MedBytes:
		return model.RiskMedium, counted
	case !m.Complete:
		return model.RiskMedium, counted + "; incomplete preview: " + IncompleteWhy(m)[0]
	case len(m.Unknown) > 0:
		return model.RiskMedium, "impact: could not preview " + m.Unknown[0]
	}
	return "", ""
}

// IncompleteWhy says why m is incomplete, one phrase each (nil when it is
// complete): the preview's own reasons, or, for a preview that kept none,
// that a bound cut it. The consoles and show print each.
func IncompleteWhy(m *model.Impact) []string {
	switch {
	case m == nil || m.Complete:
		return nil
	case len(m.Incomplete) > 0:
		return m.Incomplete
	}
	return []string{"a bound cut a walk: the counts are at least"}
}

// liveWhy names the first live thing m reaches.
func liveWhy(m *model.Impact) string {
	for _, t := range m.Targets {
		switch {
		case t.Device != "" && len(t.Mounts) > 0:
			return t.Path + " is mounted on " + t.Mounts[0]
		case len(t.LiveLinks) > 0:
			return t.LiveLinks[0] + " points into " + t.Path
		case len(t.Mounts) > 0:
			return t.Mounts[0] + " is a mount point in " + t.Path
		}
	}
	return "it reaches something live"
}

// Raised is the risk m raised a proposal's to, and why, or "" when it
// raised nothing: Raise's level when it is strictly above the
// classifier's for command (a force-push the classifier rates MEDIUM is
// not raised by an impact of at least MEDIUM) and not below pinned, the
// risk the proposal carries (a risk its submitter raised higher was not
// the impact's doing). It compares with the pattern table, not with the
// judgement: it marks what the preview found on disk beyond the table's
// words, needs no working directory or configuration to say so (the
// consoles mark rows without them), and enforces nothing (the pinned and
// effective levels do).
func Raised(m *model.Impact, command string, pinned model.RiskLevel) (model.RiskLevel, string) {
	level, why := Raise(m)
	if level == "" || level.Rank() <= risk.Classify(command).Level.Rank() || pinned.Valid() && level.Rank() < pinned.Rank() {
		return "", ""
	}
	return level, why
}

// Marked reports whether the consoles and list mark a proposal (flag I):
// its impact m raised its risk (Raised), so it is worth reading before
// the command is.
func Marked(m *model.Impact, command string, pinned model.RiskLevel) bool {
	level, _ := Raised(m, command, pinned)
	return level != ""
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
		case !t.Touches():
		case !ok || !old.Touches():
			out = append(out, fmt.Sprintf("%s %s exists now and did not when approved", t.Op, t.Path))
			continue
		}
		if !ok {
			continue
		}
		for _, m := range t.Mounts {
			if !slices.Contains(old.Mounts, m) {
				if t.Device != "" {
					out = append(out, fmt.Sprintf("%s is mounted on %s now", t.Path, m))
				} else {
					out = append(out, fmt.Sprintf("%s is a mount point now, under %s", m, t.Path))
				}
			}
		}
		for _, l := range t.LiveLinks {
			if !slices.Contains(old.LiveLinks, l) {
				out = append(out, fmt.Sprintf("%s points into %s now", l, t.Path))
			}
		}
		if t.Commits > old.Commits {
			out = append(out, fmt.Sprintf("%s: %s now, %s when approved", t.Path, commits(t.Commits), commits(old.Commits)))
		}
		if t.Creates > old.Creates || t.Updates > old.Updates || t.Destroys > old.Destroys {
			out = append(out, fmt.Sprintf("%s: %s now, %s when approved", t.Path, planCounts(t), planCounts(old)))
		}
		if t.Op == model.OpApply || t.Op == model.OpForcePush || t.Op == model.OpDeleteBranch || t.Op == model.OpMoveBranch {
			for _, d := range t.Details {
				if !strings.HasPrefix(d, "and ") && !slices.Contains(old.Details, d) {
					out = append(out, fmt.Sprintf("%s: %s, not in the preview approved", t.Path, d))
				}
			}
		}
	}
	switch {
	case approved.Complete && !now.Complete:
		// What it touches now cannot be told: it may have grown.
		why := "the preview now is incomplete"
		if len(now.Incomplete) > 0 {
			why += " (" + strings.Join(now.Incomplete, ", ") + ")"
		}
		out = append(out, why+", and the one approved was complete")
	case !approved.Complete:
		// Approved as "at least": counts cut by a bound at two moments
		// say nothing of growth (a warm cache walks further), unless what
		// is counted now crosses a threshold the approved count did not.
		if countLevel(now).Rank() > countLevel(approved).Rank() {
			out = append(out, fmt.Sprintf("at least %s entries, %s now (%s), at least %s entries, %s when approved",
				human.Group(now.Entries), human.Bytes(now.Bytes), countLevel(now), human.Group(approved.Entries), human.Bytes(approved.Bytes)))
		}
	default:
		if over(now.Entries, approved.Entries, ToleranceEntries) {
			out = append(out, fmt.Sprintf("%s entries now, %s when approved", human.Group(now.Entries), human.Group(approved.Entries)))
		}
		if over(now.Bytes, approved.Bytes, ToleranceBytes) {
			out = append(out, fmt.Sprintf("%s now, %s when approved", human.Bytes(now.Bytes), human.Bytes(approved.Bytes)))
		}
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

// countLevel is the level m's counts alone ask for (Raise's thresholds).
func countLevel(m *model.Impact) model.RiskLevel {
	switch {
	case m.Entries >= HighEntries || m.Bytes >= HighBytes:
		return model.RiskHigh
	case m.Entries >= MedEntries || m.Bytes >= MedBytes:
		return model.RiskMedium
	}
	return model.RiskLow
}
