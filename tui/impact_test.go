package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
)

// impactFixture is a store with one proposal whose impact preview names
// hostile paths (escape sequences, a bidi override, a newline), a live
// symlink and a part it could not preview, beside the demo's proposals.
func impactFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	f := newFixture(t)
	m := &model.Impact{
		Entries: 12408, Bytes: 2_469_606_195, Complete: true,
		Unknown: []string{"$(cat list\x1b[31m.txt)"},
		Targets: []model.ImpactTarget{
			{Path: "/srv/app/releases/2024-11-01", Op: "delete", Exists: true, Entries: 4100, Files: 4000, Dirs: 100, Bytes: 800_000_000, Complete: true, LiveLinks: []string{}},
			{Path: "/srv/app/releases/2024-11-0\u202e3", Op: "delete", Exists: true, Entries: 8308, Files: 8200, Dirs: 108, Bytes: 1_669_606_195, Complete: true,
				LiveLinks: []string{"/srv/app/cur\x1b]0;pwn\x07rent"}},
			{Path: "/srv/app/releases/2024-11-\n02", Op: "delete", Exists: false, LiveLinks: []string{}},
		},
		At: float64(t0.Add(-time.Minute).Unix()),
	}
	m.Summary = "deletes 208 directories, 12,200 files, 2.3 GiB, newest change 4 min before; /srv/app/cur\x1b]0;pwn\x07rent points into it; could not preview: $(cat list\x1b[31m.txt)"
	p, _, err := risk.Propose(risk.Draft{ID: "impact-hostile-01", Command: "rm -rf /srv/web/old-builds/* $(cat list.txt)", SessionKey: "agent:prod:deploy",
		Requester: "claude-code", Cwd: "/srv/app", TTL: 20 * time.Minute, Impact: m, DiffSummary: "impact: " + m.Summary}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.Submit(context.Background(), p, model.Actor{Surface: model.SurfaceHook, Name: "agent@test"}); err != nil {
		t.Fatal(err)
	}
	return f, p.ApprovalID
}

// The impact block comes first in the detail, hostile paths inert; the
// list marks the row I (large, and live).
func TestImpactBlock(t *testing.T) {
	f, id := impactFixture(t)
	m := console(t, f, operator, 80, 24)
	if row := rowOf(t, m, id); !strings.Contains(row, " ! ") {
		t.Fatalf("hostile text in the preview: the row is not marked ! (which wins over I): %q", row)
	}
	clean, _, err := risk.Propose(risk.Draft{ID: "impact-clean-0001", Command: "rm -rf /srv/web/current-release", SessionKey: "agent:prod:deploy",
		Requester: "claude-code", Cwd: "/srv/web", TTL: 20 * time.Minute, Impact: &model.Impact{Summary: "deletes 1 directory", Entries: 1, Complete: true,
			Targets: []model.ImpactTarget{{Path: "/srv/web/current-release", Op: "delete", Exists: true, Entries: 1, Dirs: 1, Mounts: []string{"/srv/web/current-release"}}}}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.Submit(context.Background(), clean, model.Actor{Surface: model.SurfaceHook, Name: "agent@test"}); err != nil {
		t.Fatal(err)
	}
	Settle(m, m.reload())
	if row := rowOf(t, m, clean.ApprovalID); !strings.Contains(row, " I ") {
		t.Fatalf("a live impact: the row is not marked I: %q", row)
	}
	selectID(t, m, id)
	press(m, "enter")
	screen := m.View()
	for _, want := range []string{"impact     deletes 208 directories, 12,200 files, 2.3 GiB", `\x1b]0;pwn\x07`, "<U+202E>",
		"! live: /srv/app/cur", "could not preview: $(cat list\\x1b[31m.txt)"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the detail lacks %q:\n%s", want, screen)
		}
	}
	if strings.ContainsAny(screen, "\x1b\x07\u202e") {
		t.Fatal("raw control characters reached the screen")
	}
	lines := strings.Split(screen, "\n")
	impactAt, idAt := -1, -1
	for i, l := range lines {
		if strings.HasPrefix(l, "impact ") && impactAt < 0 {
			impactAt = i
		}
		if strings.HasPrefix(l, "id ") && idAt < 0 {
			idAt = i
		}
		if w := len([]rune(l)); w > 80 {
			t.Errorf("a line of %d cells: %q", w, l)
		}
	}
	if impactAt < 0 || idAt < 0 || impactAt > idAt {
		t.Fatalf("the impact block is not first (impact at %d, id at %d)", impactAt, idAt)
	}
}

// Golden screens of the impact block, at the console's two sizes.
func TestGoldenImpact(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		name := fmt.Sprintf("impact-detail-%dx%d", size[0], size[1])
		t.Run(name, func(t *testing.T) {
			f, id := impactFixture(t)
			m := console(t, f, operator, size[0], size[1])
			selectID(t, m, id)
			press(m, "enter")
			golden.Assert(t, name, m.View())
		})
	}
}
