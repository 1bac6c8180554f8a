package tui

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

var (
	markerCount  = regexp.MustCompile(`▼ (\d+) `)
	refusalCount = regexp.MustCompile(`read it all first: (\d+) lines? `)
)

// unreadOnScreen counts the lines of the command and diff not drawn yet,
// from what the pane shows (not from its own count).
func unreadOnScreen(d *detail) int {
	n := 0
	for _, seen := range d.drawn {
		if !seen {
			n++
		}
	}
	return n
}

// The detail's marker and a refused approve say one count of the lines not
// yet on screen, the true one, in one grammar, for every proposal of the
// demo set at 80x24.
func TestUnreadIsOneCount(t *testing.T) {
	f := newFixture(t)
	checked := 0
	list := console(t, f, operator, 80, 24)
	for _, i := range list.list.visible {
		id := list.rows[i].rec.ApprovalID
		m := console(t, f, operator, 80, 24)
		selectThenPress(t, m, id, "enter")
		mk := markerCount.FindStringSubmatch(m.View())
		if mk == nil {
			continue // it fits the page: nothing to count
		}
		press(m, "a")
		if m.prompt != nil {
			t.Fatalf("%s: approve opened unread", id)
		}
		rf := refusalCount.FindStringSubmatch(m.note.text)
		if rf == nil {
			continue // refused for another reason (corrupt, hardline, short id)
		}
		truth := unreadOnScreen(&m.detail)
		if mk[1] != rf[1] || mk[1] != strconv.Itoa(truth) {
			t.Fatalf("%s: the pane says %s, approve says %s, %d lines are not on screen:\n%s", id, mk[1], rf[1], truth, m.View())
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no proposal of the demo set was counted")
	}
}

// One line unread is one line: on the marker and on the refusal. After
// everything was read, the marker says how many lines are below, truly.
func TestUnreadGrammarOfOne(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 80, 24)
	selectThenPress(t, m, f.ids["heredoc"], "enter")
	d := &m.detail
	// Scroll to where End skips exactly one line, jump, come back up.
	for i := 0; i < 200 && d.offset < len(d.lines)-2*d.height; i++ {
		press(m, "down")
	}
	if d.offset != len(d.lines)-2*d.height {
		t.Fatalf("heredoc: %d lines in a pane of %d", len(d.lines), d.height)
	}
	press(m, "end", "home")
	if unreadOnScreen(d) != 1 {
		t.Fatalf("%d lines unread, want 1", unreadOnScreen(d))
	}
	screenHas(t, m, "▼ 1 line not yet on screen")
	press(m, "a")
	if !strings.Contains(m.note.text, "read it all first: 1 line of the command and diff has not been on screen") {
		t.Fatalf("refusal: %q", m.note.text)
	}
	// Read it all; from the top, the marker counts the lines below.
	press(m, "esc")
	for i := 0; i < 200 && !d.SeenAll(); i++ {
		press(m, "down")
	}
	press(m, "home")
	want := len(d.lines) - (d.height - 1)
	screenHas(t, m, "▼ "+strconv.Itoa(want)+" more lines below")
	if strings.Contains(m.View(), "not yet on screen") {
		t.Fatal("read all, the marker still says unread")
	}
}

// A line of the command and diff counts as read only when a frame that
// shows it was drawn, never when the pane was merely laid out: an update
// that moves lines under the marker before any frame shows them (the
// waiter line arriving and wrapping, above the command) leaves them
// unread. Checked for every proposal of the demo set at three sizes,
// against the frames' own text.
func TestReadOnlyWhatAFrameShowed(t *testing.T) {
	f := newFixture(t)
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {200, 50}} {
		list := console(t, f, operator, sz[0], sz[1])
		for _, i := range list.list.visible {
			id := list.rows[i].rec.ApprovalID
			m := console(t, f, operator, sz[0], sz[1])
			seen := map[string]bool{} // body lines some frame of this proposal showed
			frames := func() {
				if m.detail.rec == nil || m.detail.rec.ApprovalID != id {
					return
				}
				v := m.View()
				for _, l := range m.detail.body {
					if k := strings.TrimSpace(ansi.Strip(l)); k != "" && strings.Contains(ansi.Strip(v), k) {
						seen[k] = true
					}
				}
			}
			check := func(step string) {
				count := map[string]int{}
				for _, l := range m.detail.body {
					count[strings.TrimSpace(ansi.Strip(l))]++
				}
				for b, l := range m.detail.body {
					k := strings.TrimSpace(ansi.Strip(l))
					if m.detail.drawn != nil && m.detail.drawn[b] && k != "" && count[k] == 1 && !seen[k] {
						t.Errorf("%dx%d %s after %s: body line %d %q counts as read, and no frame showed it", sz[0], sz[1], id, step, b, k)
					}
				}
			}
			selectID(t, m, id)
			frames()
			check("selecting it")
			for _, k := range []string{"enter", "down", "down", "pgdown"} {
				_, cmd := m.Update(keyMsg(k))
				Settle(m, cmd)
				frames()
				check(k)
			}
		}
	}
}
