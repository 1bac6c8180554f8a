package notify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
)

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts")
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExecRecordsStdinAndEnv(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "stdin.json")
	env := filepath.Join(dir, "env.txt")
	p := script(t, dir, "notify.sh", `cat > "$1"
printf '%s\n%s\n%s\n%s\n' "$APPROVE_TUI_EVENT" "$APPROVE_TUI_APPROVAL_ID" "$APPROVE_TUI_DELIVERY_ID" "$KEEP_ME" > "$2"
`)
	t.Setenv("KEEP_ME", "parent-env")
	t.Setenv("APPROVE_TUI_EVENT", "stale")
	ch := &config.Channel{Name: "script", Type: config.TypeExec, Command: []string{p, out, env}}
	s := mustSender(t, ch, testOptions(nil))
	ev := baseEvent()
	ev.Kind, ev.Step = KindEscalation, 1
	if err := s.Send(context.Background(), ev, Delivery{ID: "hm-abc123:escalation:1:script", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var w webhookDoc
	decodeStrict(t, data, &w)
	if w.Event != "escalation" || w.Step != 1 || w.ApprovalID != "hm-abc123" || w.DeliveryID != "hm-abc123:escalation:1:script" ||
		w.Command == nil || *w.Command != ev.Command {
		t.Errorf("stdin %+v", w)
	}
	envs, _ := os.ReadFile(env)
	if got := string(envs); got != "escalation\nhm-abc123\nhm-abc123:escalation:1:script\nparent-env\n" {
		t.Errorf("environment %q", got)
	}
}

func TestExecFailures(t *testing.T) {
	dir := t.TempDir()
	fail := script(t, dir, "fail.sh", `cat >/dev/null
echo "partial output"
echo "smtp relay refused: 451 try later" >&2
exit 3
`)
	s := mustSender(t, &config.Channel{Name: "script", Type: config.TypeExec, Command: []string{fail}}, testOptions(nil))
	err := s.Send(context.Background(), hostileEvent(), Delivery{})
	se := sendErr(t, err)
	if !se.Retryable || se.Status != 0 || !strings.Contains(err.Error(), "exit status 3") ||
		!strings.Contains(err.Error(), "stderr: smtp relay refused: 451 try later") || !strings.Contains(err.Error(), "stdout: partial output") {
		t.Errorf("exit 3: %v", err)
	}

	// Output is bounded and made safe for one line.
	noisy := script(t, dir, "noisy.sh", `cat >/dev/null
i=0; while [ $i -lt 2000 ]; do printf 'line %s \033[31m\n' $i >&2; i=$((i+1)); done
exit 1
`)
	s = mustSender(t, &config.Channel{Name: "script", Type: config.TypeExec, Command: []string{noisy}}, testOptions(nil))
	err = s.Send(context.Background(), baseEvent(), Delivery{})
	if msg := err.Error(); len(msg) > 3*maxExecOutput || strings.ContainsAny(msg, "\n\x1b") || !strings.Contains(msg, "more bytes)") {
		t.Errorf("unbounded or unsafe output (%d bytes): %.200q", len(msg), msg)
	}

	// A timeout kills the command and is retryable.
	slow := script(t, dir, "slow.sh", "sleep 30\n")
	s = mustSender(t, &config.Channel{Name: "script", Type: config.TypeExec, Command: []string{slow}, Timeout: 200 * time.Millisecond}, testOptions(nil))
	start := time.Now()
	err = s.Send(context.Background(), baseEvent(), Delivery{})
	if se := sendErr(t, err); !se.Retryable || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("timeout took %v", d)
	}

	// A command that cannot start is permanent.
	s = mustSender(t, &config.Channel{Name: "script", Type: config.TypeExec, Command: []string{filepath.Join(dir, "missing")}}, testOptions(nil))
	err = s.Send(context.Background(), baseEvent(), Delivery{})
	if se := sendErr(t, err); se.Retryable || !strings.Contains(err.Error(), "cannot start") {
		t.Errorf("missing: %v", err)
	}
	notExec := filepath.Join(dir, "plain.txt")
	_ = os.WriteFile(notExec, []byte("x"), 0o644)
	s = mustSender(t, &config.Channel{Name: "script", Type: config.TypeExec, Command: []string{notExec}}, testOptions(nil))
	if se := sendErr(t, s.Send(context.Background(), baseEvent(), Delivery{})); se.Retryable {
		t.Errorf("not executable: %v", se)
	}
}

// An exec channel's program another user may change is not run, at every
// delivery (it may have changed since the configuration was loaded): a
// script others may write, one in a directory others may write. The
// refusal is permanent and says why; the same script, kept right, runs.
func TestExecRefusesAProgramOthersMayChange(t *testing.T) {
	base := t.TempDir()
	safe := filepath.Join(base, "safe")
	open := filepath.Join(base, "open")
	for _, d := range []string{safe, open} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(base, "ran")
	body := "cat >/dev/null\necho x >> " + ran + "\n"
	loose := script(t, safe, "loose.sh", body)
	if err := os.Chmod(loose, 0o777); err != nil {
		t.Fatal(err)
	}
	inOpen := script(t, open, "page.sh", body)
	good := script(t, safe, "good.sh", body)
	for prog, want := range map[string]string{
		loose:  "program " + loose + " may be written by its group and others (mode 0777): refused; chmod go-w " + loose,
		inOpen: "directory " + open + " on its path may be written by its group and others (mode 0777",
	} {
		s := mustSender(t, &config.Channel{Name: "desk", Type: config.TypeExec, Command: []string{prog}}, testOptions(nil))
		err := s.Send(context.Background(), baseEvent(), Delivery{ID: "d1", Attempt: 1})
		if se := sendErr(t, err); se.Retryable || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "channel desk (exec)") {
			t.Errorf("%s: %v", prog, err)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("a refused program ran")
	}
	s := mustSender(t, &config.Channel{Name: "desk", Type: config.TypeExec, Command: []string{good}}, testOptions(nil))
	if err := s.Send(context.Background(), baseEvent(), Delivery{ID: "d1", Attempt: 1}); err != nil {
		t.Fatalf("a program kept right: %v", err)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Fatalf("the program did not run: %v", err)
	}
	// Changed after the sender was made: refused at the next delivery.
	if err := os.Chmod(good, 0o757); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(context.Background(), baseEvent(), Delivery{ID: "d2", Attempt: 1}); err == nil || !strings.Contains(err.Error(), "may be written by others (mode 0757)") {
		t.Errorf("made writable since: %v", err)
	}
}
