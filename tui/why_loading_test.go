package tui

import (
	"context"
	"strings"
	"testing"
)

// Approving before the proposal's explanation (why) or its waiter's state
// has arrived is refused, and the refusal says what is still loading, not
// that lines which are on screen have not been read. Once they arrive,
// approving goes on as usual.
func TestApproveBeforeTheExplanationSaysItIsLoading(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 120, 40)
	id := submitCommand(t, f, m, "git status", "/home/dev/src")
	// Selected and opened by hand, without running the commands that
	// judge it and read its waiter: neither has arrived.
	_, _ = m.Update(keyMsg("home"))
	for i := 0; i < 200 && m.selID != id; i++ {
		_, _ = m.Update(keyMsg("down"))
	}
	if m.selID != id {
		t.Fatalf("%s not in the list", id)
	}
	_, _ = m.Update(keyMsg("enter"))
	m.View()
	_, _ = m.Update(keyMsg("a"))
	for _, want := range []string{"the explanation of its risk (why)", "whether anything waits on it (waiter)", "are still loading for " + id} {
		if !strings.Contains(m.note.text, want) {
			t.Errorf("approve before both arrived: %q lacks %q", m.note.text, want)
		}
	}
	if strings.Contains(m.note.text, "not been on screen") || m.prompt != nil {
		t.Errorf("approve before both arrived: %q (prompt %v)", m.note.text, m.prompt != nil)
	}
	screenHas(t, m, "still loading")
	_, _ = m.Update(keyMsg("esc"))

	// The waiter's state arrives; the explanation has not.
	m.Update(readWaiter(context.Background(), f.s, id))
	m.View()
	_, _ = m.Update(keyMsg("a"))
	if !strings.Contains(m.note.text, "not yet: the explanation of its risk (why) is still loading for "+id) ||
		strings.Contains(m.note.text, "waiter") {
		t.Errorf("approve before the explanation: %q", m.note.text)
	}
	_, _ = m.Update(keyMsg("esc"))

	// The explanation arrives: it is read, then approving opens the prompt.
	m.Update(judge(m.opt.Judge, judgeKeyOf(m.selected()))())
	screenHas(t, m, "why LOW")
	m.View()
	press(m, "a")
	if m.prompt == nil {
		t.Fatalf("approve once everything arrived and was on screen: no prompt; note %q", m.note.text)
	}
}
