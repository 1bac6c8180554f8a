package tui

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/model"
)

// Golden screens of parked proposals and of a call run without approval,
// at 80x24 and 120x40, over the demo file.

var hookActor = model.Actor{Surface: model.SurfaceRunner, Name: "hook@agent-host"}

// parkDrop parks the demo's "drop" proposal as a hook that timed out, for
// window, and shows the console the change.
func parkDrop(t *testing.T, f *fixture, m *Model, window time.Duration) string {
	t.Helper()
	id := f.ids["drop"]
	if _, err := f.s.Park(t.Context(), id, t0.Add(window), "hook timeout", hookActor); err != nil {
		t.Fatal(err)
	}
	Settle(m, m.reload())
	return id
}

// endWindow moves the park window of id to before now behind the store's
// back, as the clock would: its window is over.
func endWindow(t *testing.T, f *fixture, id string) {
	t.Helper()
	db, err := sql.Open("sqlite", f.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), `UPDATE approve_tui_parks SET stopped_at = ?, park_until = ? WHERE approval_id = ?`,
		model.Epoch(t0.Add(-50*time.Minute)), model.Epoch(t0.Add(-5*time.Minute)), id); err != nil {
		t.Fatal(err)
	}
}

func parkScenarios() []scenario {
	return []scenario{
		{name: "parked-list", run: func(t *testing.T, f *fixture, m *Model) {
			parkDrop(t, f, m, 45*time.Minute)
		}},
		{name: "parked-detail", run: func(t *testing.T, f *fixture, m *Model) {
			selectThenPress(t, m, parkDrop(t, f, m, 45*time.Minute), "enter")
		}},
		{name: "parked-approved", run: func(t *testing.T, f *fixture, m *Model) {
			id := parkDrop(t, f, m, 45*time.Minute)
			typedApproval(t, m, id)
			press(m, "enter")
		}},
		{name: "parked-window-over-refused", run: func(t *testing.T, f *fixture, m *Model) {
			id := parkDrop(t, f, m, 45*time.Minute)
			endWindow(t, f, id)
			Settle(m, m.reload())
			typedApproval(t, m, id)
			press(m, "enter")
		}},
		{name: "ran-without-approval-gone", run: func(t *testing.T, f *fixture, m *Model) {
			id := f.ids["drop"]
			selectThenPress(t, m, id, "enter")
			if _, err := f.s.RecordRanWithoutApproval(t.Context(), id, "Codex PostToolUse reported it run", hookActor); err != nil {
				t.Fatal(err)
			}
			Settle(m, m.reload())
		}},
		{name: "ran-without-approval-history", run: func(t *testing.T, f *fixture, m *Model) {
			id := parkDrop(t, f, m, 45*time.Minute)
			if _, err := f.s.RecordRanWithoutApproval(t.Context(), id, "Codex PostToolUse reported it run", hookActor); err != nil {
				t.Fatal(err)
			}
			Settle(m, m.reload())
			press(m, "tab")
		}},
		{name: "ran-without-approval-event", run: func(t *testing.T, f *fixture, m *Model) {
			id := f.ids["drop"]
			if _, err := f.s.RecordRanWithoutApproval(t.Context(), id, "Codex PostToolUse reported it run", hookActor); err != nil {
				t.Fatal(err)
			}
			Settle(m, m.reload())
			press(m, "tab", "enter")
		}},
	}
}

func TestGoldenParkScreens(t *testing.T) {
	for _, sc := range parkScenarios() {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			name := fmt.Sprintf("%s-%dx%d", sc.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				m := sc.play(t, size)
				golden.Assert(t, name, m.View())
			})
		}
	}
}

// What the park screens must say, whatever their layout.
func TestParkScreensSay(t *testing.T) {
	for _, c := range []struct {
		name string
		want []string
	}{
		{"parked-detail", []string{"parked", "the agent stopped waiting at", "(hook timeout)", "approving lets this exact"}},
		{"parked-approved", []string{"Parked: nothing runs now"}},
		{"parked-window-over-refused", []string{"NOT approved: the park window of"}},
		{"ran-without-approval-gone", []string{"ran without approval (Codex PostToolUse reported it run)"}},
		{"ran-without-approval-history", []string{"ran without approval", "parked"}},
	} {
		for _, sc := range parkScenarios() {
			if sc.name != c.name {
				continue
			}
			m := sc.play(t, [2]int{200, 50})
			v := m.View()
			for _, w := range c.want {
				if !strings.Contains(v, w) {
					t.Errorf("%s lacks %q:\n%s", c.name, w, v)
				}
			}
		}
	}
}
