package notify

import (
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

func TestTitles(t *testing.T) {
	ev := baseEvent()
	cases := []struct {
		mod  func(*Event)
		want string
	}{
		{func(*Event) {}, "HIGH approval waiting: hm-abc123 (agent:prod:web)"},
		{func(e *Event) { e.Kind, e.Step = KindEscalation, 1 }, // the route's second step
			"ESCALATION (step 2): HIGH approval waiting: hm-abc123 (agent:prod:web)"},
		{func(e *Event) { e.Kind = KindReminder },
			"reminder: expires in 2m30s: HIGH approval waiting: hm-abc123 (agent:prod:web)"},
		{func(e *Event) { e.Kind, e.ExpiresAt = KindReminder, time.Time{} },
			"reminder: still waiting: HIGH approval waiting: hm-abc123 (agent:prod:web)"},
		{func(e *Event) { e.Kind, e.Outcome, e.Actor = KindResolved, "approved", "alice@laptop via tui" },
			"resolved: approved by alice@laptop via tui: hm-abc123 (agent:prod:web)"},
		{func(e *Event) { e.Kind, e.Outcome, e.Actor = KindResolved, "denied", "bob" },
			"resolved: denied by bob: hm-abc123 (agent:prod:web)"},
		{func(e *Event) { e.Kind, e.Outcome = KindResolved, "expired" },
			"expired unanswered: hm-abc123 (agent:prod:web)"},
		{func(e *Event) { e.Risk = "medium"; e.SessionKey = "" }, "MEDIUM approval waiting: hm-abc123"},
		{func(e *Event) { e.Risk = "tier2_critical" }, "CRITICAL approval waiting: hm-abc123 (agent:prod:web)"},
		{func(e *Event) { e.Risk = "weird" }, "UNKNOWN approval waiting: hm-abc123 (agent:prod:web)"},
	}
	for _, c := range cases {
		e := ev
		c.mod(&e)
		if got := Title(e); got != c.want {
			t.Errorf("Title = %q\n want %q", got, c.want)
		}
	}
}

func TestBody(t *testing.T) {
	ev := baseEvent()
	ev.Command = strings.Repeat("x", 500)
	b := Body(ev, testNow)
	for _, want := range []string{
		"Risk: HIGH\n", "Approval: hm-abc123\n", "Session: agent:prod:web\n", "Requester: claude-code@build-7\n",
		"Time left: 2m30s (expires 2026-03-04T12:02:30Z)\n",
		"Command:\n" + strings.Repeat("x", 299) + "…\n",
		"open it: ssh -t -p 2222 approvals.example open hm-abc123\n",
		"This message cannot approve: the decision is made in the console, by typing the id hm-abc123.",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("body lacks %q:\n%s", want, b)
		}
	}
	ev.CommandOmitted = true
	if b := Body(ev, testNow); !strings.Contains(b, "Command: (command left out by configuration)") || strings.Contains(b, "xxx") {
		t.Errorf("omitted:\n%s", b)
	}
	ev = baseEvent()
	ev.ExpiresAt, ev.OpenHint = time.Time{}, ""
	b = Body(ev, testNow)
	if !strings.Contains(b, "Time left: no expiry") || !strings.Contains(b, "open it in the approve-tui console: hm-abc123") {
		t.Errorf("no expiry / no hint:\n%s", b)
	}
	ev = baseEvent()
	ev.Kind, ev.Outcome, ev.Actor = KindResolved, "approved", "alice"
	b = Body(ev, testNow)
	if !strings.Contains(b, "Outcome: approved by alice") || strings.Contains(b, "Command") || !strings.Contains(b, "cannot approve") {
		t.Errorf("resolved:\n%s", b)
	}
	// Without At, the given now counts.
	ev = baseEvent()
	ev.At = time.Time{}
	if b := Body(ev, testNow.Add(time.Minute)); !strings.Contains(b, "Time left: 1m30s ") {
		t.Errorf("now fallback:\n%s", b)
	}
	ev.ExpiresAt = testNow.Add(-time.Second)
	if b := Body(ev, testNow); !strings.Contains(b, "Time left: expired") {
		t.Errorf("expired:\n%s", b)
	}
}

func TestHostileText(t *testing.T) {
	ev := hostileEvent()
	title := Title(ev)
	if n := utf8.RuneCountInString(title); n > maxTitleRunes {
		t.Errorf("title has %d runes", n)
	}
	body := Body(ev, testNow)
	for _, s := range []string{title, body} {
		for _, r := range s {
			if r == '\n' && s == body {
				continue
			}
			if unicode.IsControl(r) || r == '\u202e' {
				t.Fatalf("unsafe rune %U in %q", r, s)
			}
		}
	}
	if !strings.Contains(title, `\x1b`) || !strings.Contains(title, `\n`) {
		t.Errorf("title does not show the escapes: %q", title)
	}
	if !strings.Contains(body, "<U+202E>") || !strings.Contains(body, `\x1b]0;pwned\x07`) {
		t.Errorf("body does not show the escapes:\n%s", body)
	}
	if strings.Contains(body, strings.Repeat("A", maxCommandRunes)) {
		t.Error("command not cut")
	}
	if !strings.Contains(body, "…") {
		t.Error("no cut mark")
	}
	// One line per field: the session's newline did not make a new line.
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "X-Injected") {
			t.Errorf("a field broke its line: %q", line)
		}
	}
}

func TestIsOpenURL(t *testing.T) {
	for hint, want := range map[string]bool{
		"https://approvals.example/open/hm-abc123":        true,
		"http://10.0.0.1:8080/a?id=hm-1":                  true,
		"ssh -t -p 2222 approvals.example open hm-abc123": false,
		"ssh://approvals.example":                         false,
		"javascript:alert(1)":                             false,
		"https://user:pw@host/":                           false,
		"https://host/<script>":                           false,
		"https://host/a|b":                                false,
		"":                                                false,
	} {
		if got := isOpenURL(hint); got != want {
			t.Errorf("isOpenURL(%q) = %v", hint, got)
		}
	}
}
