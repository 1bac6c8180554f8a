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
	return f, submitImpact(t, f, risk.Draft{ID: "impact-hostile-01", Command: "rm -rf /srv/web/old-builds/* $(cat list.txt)", SessionKey: "agent:prod:deploy",
		Requester: "claude-code", Cwd: "/srv/app", TTL: 20 * time.Minute, Impact: m, DiffSummary: model.ImpactDiffSummary(m)})
}

// submitImpact proposes d, as a hook would, and returns its id.
func submitImpact(t *testing.T, f *fixture, d risk.Draft) string {
	t.Helper()
	p, _, err := risk.Propose(d, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.Submit(context.Background(), p, model.Actor{Surface: model.SurfaceHook, Name: "agent@test", Person: "agent"}); err != nil {
		t.Fatal(err)
	}
	return p.ApprovalID
}

// The impact block comes first in the detail, hostile paths inert; the
// list marks the row I (large, and live).
func TestImpactBlock(t *testing.T) {
	f, id := impactFixture(t)
	m := console(t, f, operator, 80, 24)
	if row := rowOf(t, m, id); !strings.Contains(row, " ! ") {
		t.Fatalf("hostile text in the preview: the row is not marked ! (which wins over I): %q", row)
	}
	clean := submitImpact(t, f, risk.Draft{ID: "impact-clean-0001", Command: "find current-release -delete", SessionKey: "agent:prod:deploy",
		Requester: "claude-code", Cwd: "/srv/web", TTL: 20 * time.Minute, Impact: &model.Impact{Summary: "deletes 1 directory", Entries: 1, Complete: true,
			Targets: []model.ImpactTarget{{Path: "/srv/web/current-release", Op: "delete", Exists: true, Entries: 1, Dirs: 1, Mounts: []string{"/srv/web/current-release"}}}}})
	Settle(m, m.reload())
	if row := rowOf(t, m, clean); !strings.Contains(row, " I ") {
		t.Fatalf("a live impact (HIGH) of a MEDIUM command: the row is not marked I: %q", row)
	}
	selectThenPress(t, m, id, "enter")
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

// A preview that could not see all (directories it could not read, a
// glob over one) reads as incomplete in the detail, each reason on its
// own line, and marks the row I (at least MEDIUM) though it counted
// little.
func TestImpactBlockIncomplete(t *testing.T) {
	f := newFixture(t)
	m := &model.Impact{Entries: 6, Bytes: 2, Unknown: []string{"data/a/* (a glob: could not read /srv/data/a)"},
		Incomplete: []string{"could not read 2 directories (/srv/data/a, /srv/data/b)"},
		Summary:    "deletes at least 4 directories, 2 files, 2 B; incomplete: could not read 2 directories (/srv/data/a, /srv/data/b)",
		Targets:    []model.ImpactTarget{{Path: "/srv/data", Op: "delete", Exists: true, Entries: 6, Dirs: 4, Files: 2, Bytes: 2, LiveLinks: []string{}}}}
	id := submitImpact(t, f, risk.Draft{ID: "impact-unseen-001", Command: "rm data/*", SessionKey: "agent:prod:deploy",
		Requester: "claude-code", Cwd: "/srv", TTL: 20 * time.Minute, Impact: m})
	c := console(t, f, operator, 120, 40)
	if row := rowOf(t, c, id); !strings.Contains(row, " I ") {
		t.Fatalf("an incomplete preview: the row is not marked I: %q", row)
	}
	selectThenPress(t, c, id, "enter")
	screen := c.View()
	for _, want := range []string{"incomplete: could not read 2 directories", "(/srv/data/a, /srv/data/b)", "could not preview: data/a/* (a glob:",
		"delete /srv/data: at least 6 entries, 2 B", "marked I, at least MEDIUM: at least 6", "incomplete preview: could not"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the detail lacks %q:\n%s", want, screen)
		}
	}
}

// goldenDetail asserts the golden screens (named prefix-WxH) of the
// proposal fixture makes, opened, at the console's two sizes.
func goldenDetail(t *testing.T, prefix string, fixture func(*testing.T) (*fixture, string)) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		name := fmt.Sprintf("%s-%dx%d", prefix, size[0], size[1])
		t.Run(name, func(t *testing.T) {
			f, id := fixture(t)
			m := console(t, f, operator, size[0], size[1])
			selectThenPress(t, m, id, "enter")
			golden.Assert(t, name, m.View())
		})
	}
}

// Golden screens of the impact block, at the console's two sizes.
func TestGoldenImpact(t *testing.T) {
	goldenDetail(t, "impact-detail", impactFixture)
}

// kindsFixture is a store with one proposal whose preview names every
// kind of target that is not files: a forced push whose dropped commits
// carry a hostile subject (anyone writes commit subjects), a mounted
// block device and a terraform plan.
func kindsFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	f := newFixture(t)
	m := &model.Impact{Bytes: 32 << 20, Complete: true, Unknown: []string{}, At: float64(t0.Add(-time.Minute).Unix()),
		Targets: []model.ImpactTarget{
			{Path: "origin/main", Op: model.OpForcePush, Exists: true, Commits: 2, Complete: true, LiveLinks: []string{},
				Note:    "from local refs only: refs/remotes/origin/main, fetched 2026-11-30 09:58Z; the remote may hold more",
				Details: []string{"aab40b5 2026-11-30 bob: hotfix \x1b[8mfor login", "466f16f 2026-11-29 alice: add c"}},
			{Path: "/dev/loop0", Op: model.OpWipe, Exists: true, Bytes: 32 << 20, Device: "loop0", Complete: true, LiveLinks: []string{},
				Note: "block device loop0, 32.0 MiB", Mounts: []string{"/mnt/data"}, Details: []string{"loop device backed by /var/lib/disk.img"}},
			{Path: "/srv/tf/prod.tfplan", Op: model.OpApply, Exists: true, Creates: 1, Updates: 1, Destroys: 2, Complete: true, LiveLinks: []string{},
				Details: []string{"destroy aws_db_instance.main", "replace aws_instance.web", "update aws_iam_role.ci", "create aws_instance.web"}},
		}}
	m.Summary = "drops 2 commits from origin/main (as local refs have it); wipes /dev/loop0 (block device loop0, 32.0 MiB, mounted on /mnt/data); applies prod.tfplan: 1 to add, 1 to change, 2 to destroy (destroy aws_db_instance.main)"
	return f, submitImpact(t, f, risk.Draft{ID: "impact-kinds-0001", Command: "git push -f origin main && wipefs -a /dev/loop0 && terraform apply prod.tfplan",
		SessionKey: "agent:prod:deploy", Requester: "claude-code", Cwd: "/srv/tf", TTL: 20 * time.Minute, Impact: m})
}

// Commits, a device and a plan each read in their own words; the
// hostile subject is inert and marks the row !.
func TestImpactBlockOfCommitsDevicesAndPlans(t *testing.T) {
	f, id := kindsFixture(t)
	m := console(t, f, operator, 240, 60)
	if row := rowOf(t, m, id); !strings.Contains(row, " ! ") {
		t.Fatalf("a hostile commit subject: the row is not marked !: %q", row)
	}
	selectThenPress(t, m, id, "enter")
	screen := m.View()
	for _, want := range []string{
		"force-push origin/main: 2 commits dropped that no other branch there holds",
		`· aab40b5 2026-11-30 bob: hotfix \x1b[8mfor login`,
		"wipe /dev/loop0: block device loop0, 32.0 MiB",
		"! live: mounted on /mnt/data",
		"· loop device backed by /var/lib/disk.img",
		"apply /srv/tf/prod.tfplan: 1 to add, 1 to change, 2 to destroy",
		"· destroy aws_db_instance.main",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the detail lacks %q:\n%s", want, screen)
		}
	}
	if strings.ContainsAny(screen, "\x1b\x07") {
		t.Fatal("raw control characters reached the screen")
	}
}

// Golden screens of the other kinds of impact, at the console's two sizes.
func TestGoldenImpactKinds(t *testing.T) {
	goldenDetail(t, "impact-kinds", kindsFixture)
}

// The I mark says that the impact raised the risk: only when its level is
// strictly above the classifier's (and not below the risk the proposal
// carries). A force-push to a feature branch the classifier rates MEDIUM
// whose preview says "at least MEDIUM" (it drops commits) is not marked;
// the detail still says what the preview asks for, without "marked I". A
// push of a +refspec (the pattern table's LOW) whose preview drops commits
// is raised from LOW, and marked; one its submitter already raised to HIGH
// is not. (A force-push to main is judged HIGH: not the level these are
// about.)
func TestImpactMarksOnlyARaise(t *testing.T) {
	f := newFixture(t)
	drops := func(branch string) *model.Impact {
		return &model.Impact{Summary: "drops 3 commits of origin/" + branch, Complete: true,
			Targets: []model.ImpactTarget{{Path: "origin/" + branch, Op: model.OpForcePush, Exists: true, Commits: 3}}}
	}
	draft := func(id, command, branch string) risk.Draft {
		return risk.Draft{ID: id, Command: command, SessionKey: "agent:repo", Requester: "claude-code", Cwd: "/srv/repo", TTL: 20 * time.Minute, Impact: drops(branch)}
	}
	// As a hook pins an impact (agent.pinImpact): the risk raised to the
	// impact's level when that is higher.
	d := draft("impact-forced-001", "git push --force origin feature/login", "feature/login")
	d.Raise, d.RaiseWhy = model.RiskMedium, "impact: it drops 3 commits"
	forced := submitImpact(t, f, d)
	d = draft("impact-plain-0001", "git push origin +feature/login", "feature/login")
	d.Raise, d.RaiseWhy = model.RiskMedium, "impact: it drops 3 commits"
	plain := submitImpact(t, f, d)
	d = draft("impact-high-00001", "git push origin +release", "release")
	d.Raise = model.RiskHigh
	high := submitImpact(t, f, d)
	c := console(t, f, operator, 120, 40)
	if row := rowOf(t, c, forced); strings.Contains(row, " I ") || !strings.Contains(row, "MED") {
		t.Errorf("a MEDIUM force-push whose impact is at least MEDIUM is marked I: %q", row)
	}
	if row := rowOf(t, c, plain); !strings.Contains(row, " I ") {
		t.Errorf("a push raised from LOW to MEDIUM by its impact is not marked I: %q", row)
	}
	if row := rowOf(t, c, high); strings.Contains(row, " I ") {
		t.Errorf("a push its submitter raised to HIGH is marked I for an impact of MEDIUM: %q", row)
	}
	selectThenPress(t, c, forced, "enter")
	if screen := c.View(); strings.Contains(screen, "marked I") || !strings.Contains(screen, "at least MEDIUM: it drops 3 commits") {
		t.Errorf("the detail of the unmarked force-push:\n%s", screen)
	}
	press(c, "esc")
	selectThenPress(t, c, plain, "enter")
	if screen := c.View(); !strings.Contains(screen, "marked I, at least MEDIUM: it drops 3 commits") {
		t.Errorf("the detail of the marked push:\n%s", screen)
	}
}
