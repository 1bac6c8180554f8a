package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/storage"
)

func TestGeminiHookLowAllowIsAudited(t *testing.T) {
	s, _ := emptyStore(t)
	o := hookOpts(s)
	o.Low = LowAllow
	d, msg := geminiCheck(t, recvHook(t, runAsync(GeminiHook, sample(t, "gemini.txtar", "before-shell-ls.json"), o)))
	if d != "allow" || !strings.Contains(msg, "allowed by policy") {
		t.Fatalf("%s %q", d, msg)
	}
	evs, _ := s.Audit(context.Background(), storage.AuditQuery{})
	if len(evs) != 1 || evs[0].Event != storage.EventPolicy || evs[0].Reason != storage.PolicyAllow || evs[0].Detail["session"] != "gemini:abc123" {
		t.Fatalf("audit %+v", evs)
	}
}

// Two hook processes on one event (same session, timestamp and command)
// share one proposal; the same command at another time is another one.
func TestGeminiHookSameEventSharesTheProposal(t *testing.T) {
	s, o := emptyStore(t)
	in := sample(t, "gemini.txtar", "before-shell-rm.json")
	a, b := runAsync(GeminiHook, in, hookOpts(s)), runAsync(GeminiHook, in, hookOpts(s))
	rec := awaitHookProposal(t, o)
	awaitDuplicateSubmit(t, o, rec.ApprovalID, "the second hook never submitted")
	approve(t, o, rec.ApprovalID)
	for _, ch := range []<-chan HookAnswer{a, b} {
		if d, _ := geminiCheck(t, recvHook(t, ch)); d != "allow" {
			t.Fatal(d)
		}
	}
	if GeminiHookID("abc123", "2025-12-01T10:30:00Z", "rm -rf build/") == GeminiHookID("abc123", "2025-12-01T10:30:01Z", "rm -rf build/") {
		t.Fatal("the timestamp is not in the id")
	}
}

func TestGeminiHookDefaultTimeout(t *testing.T) {
	if DefaultGeminiTimeout >= 60*time.Second {
		t.Fatalf("%v is not within Gemini CLI's default 60 s hook timeout", DefaultGeminiTimeout)
	}
}

func TestGeminiAnswerJSON(t *testing.T) {
	if got := string(Denied(AgentGemini, "no <x>").JSON()); got != `{"decision":"deny","reason":"no <x>"}`+"\n" {
		t.Fatalf("%s", got)
	}
	if got := string((HookAnswer{Agent: AgentGemini, Decision: "allow", Reason: "ok"}).JSON()); got != `{"decision":"allow","systemMessage":"ok"}`+"\n" {
		t.Fatalf("%s", got)
	}
}
