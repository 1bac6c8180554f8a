package cli

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// `submit` then `wait ID && COMMAND` (the README's way for any other
// agent) under trust required: wait exits 0 only on an approval whose
// signatures hold, as run and the hooks check them; a row the agent's
// user marked consumed with sqlite3, or one signature under a two-person
// policy, exits 14, recorded blocked_after_consume signature_invalid.
func TestSignedWaitE2E(t *testing.T) {
	r := newSignedRig(t)
	submit := func() (string, *storage.Record) {
		t.Helper()
		out, err := exec.Command(r.bin, "--db", r.db, "--config", r.cfg, "submit", "--session", "agent:h", "--", "rm", "-rf", "/srv/cache").Output()
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		id := strings.TrimSpace(string(out))
		return id, readStore(t, r.db, func(ctx context.Context, s *storage.Store) (*storage.Record, error) { return s.Get(ctx, id) })
	}
	type waited struct {
		code           int
		stdout, stderr string
	}
	startWait := func(id string) <-chan waited {
		ch := make(chan waited, 1)
		cmd := exec.Command(r.bin, "--db", r.db, "--config", r.cfg, "wait", id, "--timeout", "30s")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		go func() {
			err := cmd.Wait()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			ch <- waited{code, stdout.String(), stderr.String()}
		}()
		time.Sleep(300 * time.Millisecond) // wait is watching
		return ch
	}
	recv := func(ch <-chan waited) waited {
		t.Helper()
		select {
		case w := <-ch:
			return w
		case <-time.After(40 * time.Second):
			t.Fatal("wait did not end")
		}
		return waited{}
	}
	blocked := func(w waited, id string, words ...string) {
		t.Helper()
		if w.code != agent.ExitBlocked {
			t.Fatalf("wait exited %d, want %d:\n%s%s", w.code, agent.ExitBlocked, w.stdout, w.stderr)
		}
		for _, word := range words {
			if !strings.Contains(w.stdout, word) {
				t.Errorf("wait's output does not say %q:\n%s", word, w.stdout)
			}
		}
		rec := readStore(t, r.db, func(ctx context.Context, s *storage.Store) (*storage.Record, error) { return s.Get(ctx, id) })
		if rec.ExecutionStatus != model.ExecBlockedAfterConsume || rec.ExecutionReason != agent.ReasonSignatureInvalid {
			t.Fatalf("recorded %s %q, want blocked_after_consume signature_invalid", rec.ExecutionStatus, rec.ExecutionReason)
		}
	}

	t.Run("consumed with sqlite3, unsigned", func(t *testing.T) {
		id, _ := submit()
		ch := startWait(id)
		r.consume(id)
		blocked(recv(ch), id, "its signatures do not hold: not signed", "do not run it")
	})
	t.Run("one signature under a two-person policy", func(t *testing.T) {
		id, rec := submit()
		ch := startWait(id)
		var v *storage.VoteRecorded
		if err := r.approve("alice", rec); !errors.As(err, &v) {
			t.Fatalf("alice: %v, want a vote", err)
		}
		r.consume(id)
		blocked(recv(ch), id, "not enough valid signatures: 1 of 2")
	})
	t.Run("two operators sign", func(t *testing.T) {
		id, rec := submit()
		ch := startWait(id)
		if err := r.approve("alice", rec); err == nil {
			t.Fatal("alice alone completed a two-person policy")
		}
		if err := r.approve("bob", rec); err != nil {
			t.Fatalf("bob: %v", err)
		}
		w := recv(ch)
		if w.code != 0 || !strings.Contains(w.stdout, "signed by alice, bob (2 of 2)") {
			t.Fatalf("wait exited %d:\n%s%s", w.code, w.stdout, w.stderr)
		}
	})
}
