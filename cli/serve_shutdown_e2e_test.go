package cli

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/serve"
	"github.com/approve-tui/approve-tui/storage"
)

// A real SIGTERM to the real server while a real OpenSSH client has a
// console open: the session's end is audited, as every session end is
// (event session, reason end), with the reason "server shutdown", before
// the server exits.
func TestServeShutdownAuditsOpenSessions(t *testing.T) {
	r := newSSHRig(t)
	alice := r.key("id_alice", "oncall-alice", false)
	carol := r.key("id_carol", "carol", true)
	r.submit("rm -rf /srv/shutdown")
	r.serve()
	for _, c := range []struct{ user, key string }{{"alice", alice}, {"carol", carol}} {
		tm := r.connect(c.user, c.key, 100, 30)
		tm.waitFor("pending")
	}
	if n := len(r.sessionEvents(t, "start")); n != 2 {
		t.Fatalf("%d session starts audited, want 2", n)
	}
	if err := r.srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.srv.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the server exited with %v\n%s", err, r.log.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the server did not exit after SIGTERM\n%s", r.log.String())
	}
	ends := r.sessionEvents(t, "end")
	if len(ends) != 2 {
		t.Fatalf("%d session ends audited, want 2: %+v\nserver log:\n%s", len(ends), ends, r.log.String())
	}
	who := map[string]bool{}
	for _, e := range ends {
		if e.Detail["reason"] != serve.ReasonShutdown || e.Surface != "ssh" {
			t.Fatalf("session end %+v: want reason %q", e, serve.ReasonShutdown)
		}
		who[strings.Fields(e.Actor)[0]] = true
	}
	if !who["oncall-alice"] || !who["carol"] {
		t.Fatalf("ends audited for %v", who)
	}
	if res, err := r.verify(); err != nil || !res.OK {
		t.Fatalf("audit chain after the shutdown: %+v %v", res, err)
	}
}

// sessionEvents are the session events with reason what in the rig's store.
func (r *sshRig) sessionEvents(t *testing.T, what string) []storage.AuditEvent {
	t.Helper()
	evs := readStore(t, r.db, func(ctx context.Context, s *storage.Store) ([]storage.AuditEvent, error) {
		return s.Audit(ctx, storage.AuditQuery{})
	})
	var out []storage.AuditEvent
	for _, e := range evs {
		if e.Event == storage.EventSession && e.Reason == what {
			out = append(out, e)
		}
	}
	return out
}

func (r *sshRig) verify() (*storage.VerifyResult, error) {
	s, err := storage.Open(context.Background(), r.db, storage.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.VerifyAudit(context.Background())
}
