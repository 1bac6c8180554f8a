package agent

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// postAgent is one agent's recorded post-run input and the call it names.
type postAgent struct {
	name      string
	fn        hookFunc
	archive   string
	post      string // the post-run sample
	requester string
	session   string // the proposal's session key
	cwd       string // where the call runs
	id        string // the call's own proposal id ("": the agent names no call)
}

const postCommand = "rm -rf build/"

var postAgents = []postAgent{
	{"claude-code", ClaudeCodeHook, "claude-code.txtar", "post-bash-rm.json", "claude-code", "claude-code:abc123", "/home/user/my-project", HookID("abc123", "toolu_01RM")},
	{"claude-code failure", ClaudeCodeHook, "claude-code.txtar", "post-failure-bash-rm.json", "claude-code", "claude-code:abc123", "/home/user/my-project", HookID("abc123", "toolu_01RM")},
	{"codex", CodexHook, "codex.txtar", "post-bash-rm.json", "codex", "codex:019a3c2e-7d1f-7c8e-9a41-1c2d3e4f5a6b", "/tmp", CodexHookID("019a3c2e-7d1f-7c8e-9a41-1c2d3e4f5a6b", "call_rm_1")},
	{"gemini", GeminiHook, "gemini.txtar", "after-shell-rm.json", "gemini", "gemini:abc123", "/path/to/project/web", ""},
}

// proposeFor submits a proposal of a's call (command, under id, which
// draws a fresh one when empty) as its hook would have.
func proposeFor(t *testing.T, s *storage.Store, a postAgent, id, command string) string {
	t.Helper()
	p, _, err := risk.Propose(risk.Draft{Command: command, SessionKey: a.session, Requester: a.requester, Cwd: a.cwd,
		Backend: "local", TTL: time.Hour, ID: id}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Submit(context.Background(), p, hookActor); err != nil {
		t.Fatal(err)
	}
	return p.ApprovalID
}

// proposeReservedFor is proposeFor with the reservation a waiter that may
// park it submits (a park counts only on a reserved proposal).
func proposeReservedFor(t *testing.T, s *storage.Store, a postAgent, id, command string) string {
	t.Helper()
	p, _, err := risk.Propose(risk.Draft{Command: command, SessionKey: a.session, Requester: a.requester, Cwd: a.cwd,
		Backend: "local", TTL: time.Hour, ID: id}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SubmitReserved(context.Background(), p, model.FromEpoch(*p.ExpiresAt), hookActor); err != nil {
		t.Fatal(err)
	}
	return p.ApprovalID
}

func (a postAgent) match(command string) model.Match {
	return model.Match{Requester: a.requester, SessionKey: a.session, Command: command, Cwd: a.cwd}
}

func park(t *testing.T, s *storage.Store, id string) {
	t.Helper()
	if _, err := s.Park(context.Background(), id, time.Now().Add(30*time.Minute), "hook timeout", hookActor); err != nil {
		t.Fatal(err)
	}
}

// runPost feeds a's post-run sample to its hook and returns what it logged.
func runPost(t *testing.T, s *storage.Store, a postAgent) string {
	t.Helper()
	var log bytes.Buffer
	o := hookOpts(s)
	o.Log = &log
	if ans := recvHook(t, runAsync(a.fn, sample(t, a.archive, a.post), o)); !ans.Silent || ans.JSON() != nil {
		t.Fatalf("%s: the post-run event was answered %+v", a.name, ans)
	}
	return log.String()
}

// ranWithoutApproval checks that id's call is recorded as run without
// approval, its status now want, with the agent's report in the reason and
// the store's events in the log.
func ranWithoutApproval(t *testing.T, o *storage.Store, a postAgent, id string, want model.Status, words ...string) {
	t.Helper()
	r := get(t, o, id)
	if r.ExecutionStatus != model.ExecRanWithoutApproval || r.EffectiveStatus != want {
		t.Fatalf("%s: %s is %s, execution %s", a.name, id, r.EffectiveStatus, r.ExecutionStatus)
	}
	for _, w := range append(words, "reported the call as run", "not approved", "any process of this user can also send") {
		if !strings.Contains(r.ExecutionReason, w) {
			t.Fatalf("%s: reason %q lacks %q", a.name, r.ExecutionReason, w)
		}
	}
	if strings.Contains(r.ExecutionReason, "s3cr3t") || strings.Contains(r.ExecutionReason, "Permission denied") {
		t.Fatalf("%s: the agent's output is in the reason: %q", a.name, r.ExecutionReason)
	}
	evs := auditOf(t, o, id)
	if evs[len(evs)-1] != storage.EventExecution+":"+string(model.ExecRanWithoutApproval) {
		t.Fatalf("%s: audit %v", a.name, evs)
	}
	if rep, err := o.VerifyAudit(context.Background()); err != nil || !rep.OK {
		t.Fatalf("%s: audit verify %+v %v", a.name, rep, err)
	}
}

func notRecorded(t *testing.T, o *storage.Store, a postAgent, id string, was model.Status) {
	t.Helper()
	r := get(t, o, id)
	if r.ExecutionStatus != model.ExecNotStarted || r.EffectiveStatus != was {
		t.Fatalf("%s: %s became %s, execution %s %q", a.name, id, r.EffectiveStatus, r.ExecutionStatus, r.ExecutionReason)
	}
}

// A post-run report of a call whose proposal was not approved: recorded
// as run without approval (an open proposal closed expired in the same
// transaction, a denied one kept denied), for each agent; an approved one
// is recorded executed. A report the hook cannot tie to exactly one
// proposal records nothing.
func TestPostRunRecordsRanWithoutApproval(t *testing.T) {
	ctx := context.Background()
	for _, a := range postAgents {
		byID := a.id != ""
		t.Run(a.name+"/pending", func(t *testing.T) {
			s, o := emptyStore(t)
			id := proposeFor(t, s, a, a.id, postCommand)
			runPost(t, s, a)
			if !byID {
				// Gemini names no call: a proposal with no parks row
				// (reserved or parked) cannot be tied.
				notRecorded(t, o, a, id, model.StatusPending)
				return
			}
			ranWithoutApproval(t, o, a, id, model.StatusExpired, "while its proposal was pending", tieByID)
			evs, err := o.Audit(ctx, storage.AuditQuery{ApprovalID: id})
			if err != nil || evs[1].Event != storage.EventExpire || evs[1].Reason != storage.DetailRanWithoutApproval {
				t.Fatalf("audit %+v %v", evs, err)
			}
			// Reported again: nothing more.
			runPost(t, s, a)
			if n := len(auditOf(t, o, id)); n != len(evs) {
				t.Fatalf("a second report added %d events", n-len(evs))
			}
		})
		t.Run(a.name+"/parked", func(t *testing.T) {
			s, o := emptyStore(t)
			id := proposeFor(t, s, a, a.id, postCommand)
			park(t, s, id)
			runPost(t, s, a)
			how := tieByID
			if !byID {
				how = tieByMatch
			}
			ranWithoutApproval(t, o, a, id, model.StatusExpired, "while its proposal was parked (its waiter stopped at", how)
		})
		t.Run(a.name+"/approved", func(t *testing.T) {
			s, o := emptyStore(t)
			id := proposeFor(t, s, a, a.id, postCommand)
			if !byID {
				// Tied by match: parked (with its reservation, as a
				// parking waiter submits it), approved, taken by its retry.
				id = proposeReservedFor(t, s, a, "", postCommand)
				park(t, s, id)
				approve(t, o, id)
				if _, err := s.Take(ctx, id, a.match(postCommand), hookActor); err != nil {
					t.Fatal(err)
				}
			} else {
				approve(t, o, id)
			}
			runPost(t, s, a)
			if r := get(t, o, id); r.ExecutionStatus != model.ExecExecuted && r.ExecutionStatus != model.ExecStarted {
				t.Fatalf("approved: execution %s", r.ExecutionStatus)
			}
		})
		t.Run(a.name+"/denied", func(t *testing.T) {
			s, o := emptyStore(t)
			id := proposeFor(t, s, a, a.id, postCommand)
			if !byID {
				park(t, s, id)
			}
			if _, err := o.Deny(ctx, id, operator, "no"); err != nil {
				t.Fatal(err)
			}
			runPost(t, s, a)
			if !byID {
				// Its hook answered deny: a report tied only by match may
				// be another call's.
				notRecorded(t, o, a, id, model.StatusDenied)
				return
			}
			ranWithoutApproval(t, o, a, id, model.StatusDenied, "while its proposal was denied")
		})
		t.Run(a.name+"/expired", func(t *testing.T) {
			s, o := emptyStore(t)
			id := proposeFor(t, s, a, a.id, postCommand)
			if _, err := o.Abandon(ctx, id, "its hook stopped", hookActor); err != nil {
				t.Fatal(err)
			}
			runPost(t, s, a)
			if !byID {
				notRecorded(t, o, a, id, model.StatusExpired)
				return
			}
			ranWithoutApproval(t, o, a, id, model.StatusExpired, "while its proposal was expired")
		})
		t.Run(a.name+"/unknown", func(t *testing.T) {
			s, o := emptyStore(t)
			// Another session's proposal of the same command, and one of
			// this session in another directory: neither is this call.
			other := a
			other.session = a.requester + ":another-session"
			park(t, s, proposeFor(t, s, other, "", postCommand))
			elsewhere := a
			elsewhere.cwd = "/elsewhere"
			park(t, s, proposeFor(t, s, elsewhere, "", postCommand))
			before, _ := o.AuditSeq(ctx)
			if log := runPost(t, s, a); log != "" {
				t.Fatalf("logged %q", log)
			}
			if after, _ := o.AuditSeq(ctx); after != before {
				t.Fatalf("an unknown call wrote %d events", after-before)
			}
		})
		t.Run(a.name+"/mismatched command", func(t *testing.T) {
			s, o := emptyStore(t)
			if !byID {
				// Tied by match, another command is another call.
				id := proposeFor(t, s, a, "", "rm -rf dist/")
				park(t, s, id)
				runPost(t, s, a)
				notRecorded(t, o, a, id, model.StatusPending)
				return
			}
			id := proposeFor(t, s, a, a.id, "rm -rf dist/")
			runPost(t, s, a)
			ranWithoutApproval(t, o, a, id, model.StatusExpired, "with another command than the one proposed")
		})
	}
}

// A call that resumed a parked proposal made under another call's id (a
// retry) is tied by its match: run while still pending, it ran without
// approval; an approval parked for the retry that nobody took yet is left
// alone; and a proposal whose waiter never stopped is never another
// call's.
func TestPostRunOfARetryIsTiedByMatch(t *testing.T) {
	a := postAgents[2] // Codex: the post names call_rm_1, the proposal is another call's
	s, o := emptyStore(t)
	first := CodexHookID("019a3c2e-7d1f-7c8e-9a41-1c2d3e4f5a6b", "call_rm_0")

	// Reserved-like: no park row at all (its waiter never stopped).
	id := proposeFor(t, s, a, first, postCommand)
	runPost(t, s, a)
	notRecorded(t, o, a, id, model.StatusPending)

	// Parked (submitted with its reservation, as a waiter that parks
	// does), approved, taken by the retry: its run is this proposal's.
	id = proposeReservedFor(t, s, a, "", postCommand)
	park(t, s, id)
	approve(t, o, id)
	if _, err := s.Take(context.Background(), id, a.match(postCommand), hookActor); err != nil {
		t.Fatal(err)
	}
	runPost(t, s, a)
	if r := get(t, o, id); r.ExecutionStatus != model.ExecExecuted {
		t.Fatalf("taken: execution %s", r.ExecutionStatus)
	}

	// Another parked proposal, still pending, that the retry ran anyway.
	s2, o2 := emptyStore(t)
	id2 := proposeFor(t, s2, a, first, postCommand)
	park(t, s2, id2)
	runPost(t, s2, a)
	ranWithoutApproval(t, o2, a, id2, model.StatusExpired, tieByMatch, "parked")

	// Parked and approved, its approval taken by no call: the call that ran
	// did not go through it (every allow takes it first), so it ran
	// without approval, and the approval is closed.
	s3, o3 := emptyStore(t)
	id3 := proposeFor(t, s3, a, first, postCommand)
	park(t, s3, id3)
	approve(t, o3, id3)
	runPost(t, s3, a)
	ranWithoutApproval(t, o3, a, id3, model.StatusConsumed, tieByMatch, "approval had reached no call")
	if _, err := s3.Take(context.Background(), id3, a.match(postCommand), hookActor); err == nil {
		t.Fatal("its approval is taken after the call ran without it")
	}
}

// Two proposals that could both be the call a report names no id of: no
// execution is recorded, and the log says why; each gets a report event
// that it may have run, which its history shows.
func TestPostRunNeverGuesses(t *testing.T) {
	a := postAgents[3] // Gemini
	s, o := emptyStore(t)
	id1 := proposeFor(t, s, a, "", postCommand)
	id2 := proposeFor(t, s, a, "", postCommand)
	park(t, s, id1)
	park(t, s, id2)
	log := runPost(t, s, a)
	notRecorded(t, o, a, id1, model.StatusPending)
	notRecorded(t, o, a, id2, model.StatusPending)
	if !strings.Contains(log, "could be any of 2 proposals") || !strings.Contains(log, "no execution is recorded") {
		t.Fatalf("log %q", log)
	}
	for _, id := range []string{id1, id2} {
		evs, err := o.Audit(context.Background(), storage.AuditQuery{ApprovalID: id})
		if err != nil || len(evs) == 0 || evs[0].Event != storage.EventReport || !strings.Contains(evs[0].Reason, "it may have run already") {
			t.Fatalf("%s: %+v %v", id, evs, err)
		}
	}
}

// Gemini's AfterTool is decoded: the shell call, its directory as
// BeforeTool's, and what it reported; other tools are not the hook's.
func TestDecodeGeminiAfterTool(t *testing.T) {
	c, deny := decodeGemini([]byte(sample(t, "gemini.txtar", "after-shell-rm.json")))
	if deny != "" || c.event != eventPost || !c.guarded || *c.command != postCommand || c.cwd != "/path/to/project/web" ||
		c.key != "" || c.outcome != model.ExecExecuted || c.outcomeReason != "ran in Gemini CLI (AfterTool)" {
		t.Fatalf("%+v %q", c, deny)
	}
	failed := strings.Replace(sample(t, "gemini.txtar", "after-shell-rm.json"), `"error": null`, `"error": {"message":"exit 1"}`, 1)
	if c, _ := decodeGemini([]byte(failed)); c.outcomeReason != "ran in Gemini CLI, which reported an error (AfterTool)" {
		t.Fatalf("%+v", c)
	}
	if c, deny := decodeGemini([]byte(sample(t, "gemini.txtar", "after-read-file.json"))); deny != "" || c.guarded || c.event != eventPost {
		t.Fatalf("%+v %q", c, deny)
	}
}
