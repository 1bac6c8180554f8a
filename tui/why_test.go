package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/risk"
)

// submitCommand puts a proposal for cmd in cwd into f's store and reloads
// m; it returns its id.
func submitCommand(t *testing.T, f *fixture, m *Model, cmd, cwd string) string {
	t.Helper()
	return submitDraft(t, f, m, risk.Draft{Command: cmd, Cwd: cwd, SessionKey: "agent:why", TTL: time.Hour})
}

// submitDraft puts a proposal of d into f's store, as another process
// would (m counts it as foreign), and reloads m; it returns its id.
func submitDraft(t *testing.T, f *fixture, m *Model, d risk.Draft) string {
	t.Helper()
	p, _, err := risk.Propose(d, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.Submit(context.Background(), p, rival); err != nil {
		t.Fatal(err)
	}
	m.foreign++
	Settle(m, m.reload())
	return p.ApprovalID
}

// The console explains a HIGH: the detail says why, in the judgement's
// words (each finding's rule and why), at 80x24 too; View computes
// nothing (the judgement came in a command).
func TestDetailExplainsAHigh(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 80, 24)
	id := submitCommand(t, f, m, "rm -rf /", "/home/dev")
	selectThenPress(t, m, id, "enter")
	j := risk.Judge("rm -rf /", risk.Context{Cwd: "/home/dev"})
	if len(j.Findings) == 0 {
		t.Fatal("rm -rf / has no findings")
	}
	// The screen's words, wrapped lines joined.
	words := " " + strings.Join(strings.Fields(m.View()), " ") + " "
	want := []string{"why " + strings.ToUpper(string(j.Level))}
	for _, fd := range j.Findings[:min(len(j.Findings), maxWhyFindings)] {
		want = append(want, " "+fd.Rule, strings.Join(strings.Fields(fd.Why), " "))
	}
	for _, w := range want {
		if !strings.Contains(words, w) {
			t.Fatalf("the detail does not say %q:\n%s", w, m.View())
		}
	}
	for _, l := range strings.Split(m.View(), "\n") {
		if n := len([]rune(l)); n > 80 {
			t.Fatalf("a line of %d cells at 80x24: %q", n, l)
		}
	}
}

// A proposal's judgement is asked for once per command and directory, in
// a tea.Cmd; until it comes the detail says it is judging; a command
// rewritten in place is judged again.
func TestJudgementIsACommandAndCached(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 120, 40)
	id := submitCommand(t, f, m, "git status", "/home/dev/src")
	// Selected by hand, without running the commands: nothing is judged
	// in Update.
	press(m, "home")
	for i := 0; i < 200 && m.selID != id; i++ {
		_, _ = m.Update(keyMsg("down"))
	}
	if m.selID != id {
		t.Fatalf("%s not in the list", id)
	}
	if m.detail.judgement != nil {
		t.Fatal("judged in Update")
	}
	if !strings.Contains(m.View(), "judging…") {
		t.Fatalf("the detail does not say it is judging:\n%s", m.View())
	}
	key := judgeKey{command: "git status", cwd: "/home/dev/src"}
	if !m.judging[key] {
		t.Fatal("no judgement asked for")
	}
	msg := judge(m.opt.Judge, key)()
	m.Update(msg)
	if m.detail.judgement == nil || !m.detail.judgement.ReadOnly {
		t.Fatalf("judgement not shown, or git status not read-only: %+v", m.detail.judgement)
	}
	screenHas(t, m, "why LOW", "proven read-only")
	// Selecting it again asks nothing: the judgement is kept.
	press(m, "up", "down")
	if m.selID != id || m.judging[key] {
		t.Fatal("asked again for a judgement kept")
	}
	// A late result for a key no longer on screen is kept, not shown.
	other := judgeKey{command: "rm -rf /", cwd: ""}
	m.Update(judge(m.opt.Judge, other)())
	if m.judged[other] == nil || m.detail.judgement != m.judged[key] {
		t.Fatal("a result for another command was shown, or not kept")
	}
}

// A hostile command's findings are shown inert: no escape sequence from
// the command reaches the screen raw.
func TestDetailWhyInert(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 120, 40)
	id := submitCommand(t, f, m, "rm -rf /srv/x \x1b]0;pwn\a\x1b[2J", "/home/\x1b[31mdev")
	selectThenPress(t, m, id, "enter")
	v := m.View()
	if !strings.Contains(v, "why ") {
		t.Fatalf("no why lines:\n%s", v)
	}
	if strings.Contains(v, "\x1b]0;pwn") || strings.Contains(v, "\x1b[2J") {
		t.Fatalf("a raw escape on screen: %q", v)
	}
}

// The judgements kept are bounded in number and in bytes.
func TestJudgedBounded(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 120, 40)
	big := strings.Repeat("x", 1<<20)
	for i := 0; i < 40; i++ {
		key := judgeKey{command: big + strings.Repeat("y", i), cwd: "/w"}
		m.Update(judgedMsg{key: key})
		if m.judgedBytes > maxJudgedBytes || len(m.judged) > maxJudged {
			t.Fatalf("kept %d judgements of %d bytes", len(m.judged), m.judgedBytes)
		}
	}
	for i := 0; i < 2*maxJudged; i++ {
		m.Update(judgedMsg{key: judgeKey{command: strings.Repeat("z", i%50) + string(rune('a'+i%26)) + strings.Repeat("q", i/26)}})
		if len(m.judged) > maxJudged {
			t.Fatalf("kept %d judgements", len(m.judged))
		}
	}
}

// The explanation is said once: the findings that decided the level (at
// most maxWhyFindings, then how many more show lists), none below it at a
// HIGH, words only when they add to the why, and no reason line that
// repeats them.
func TestDetailWhyIsCompact(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 80, 40)
	for _, cmd := range []string{"rm -rf /srv/app/releases/2024", "dd if=/dev/zero of=/dev/sdb bs=4M && mkfs.ext4 /dev/sdb"} {
		id := submitCommand(t, f, m, cmd, "/home/dev")
		selectThenPress(t, m, id, "enter")
		view := m.View()
		j := risk.Judge(cmd, risk.Context{Cwd: "/home/dev"})
		var deciding, below int
		for _, fd := range j.Findings {
			if fd.Level == j.Level {
				deciding++
			} else {
				below++
			}
		}
		if below == 0 {
			t.Fatalf("%s: no finding below %s to leave out: %+v", cmd, j.Level, j.Findings)
		}
		for _, fd := range j.Findings {
			if fd.Level != j.Level && strings.Contains(view, fd.Why) {
				t.Errorf("%s: a %s finding at a %s is listed: %q\n%s", cmd, fd.Level, j.Level, fd.Why, view)
			}
		}
		for _, l := range strings.Split(view, "\n") {
			if strings.HasPrefix(l, "reason ") {
				t.Errorf("%s: the reason repeats the why: %q\n%s", cmd, l, view)
			}
			if strings.Contains(l, " — ") && strings.Contains(l, "deletes /srv/app/releases/2024") {
				t.Errorf("%s: words the why already says: %q", cmd, l)
			}
		}
		more := strings.Contains(view, "more: approve-tui show "+id)
		if more != (deciding > maxWhyFindings) {
			t.Errorf("%s: %d deciding findings, \"more\" shown %v:\n%s", cmd, deciding, more, view)
		}
		press(m, "esc")
	}
}
