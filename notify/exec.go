package notify

// The exec channel runs a command of the operator's with the event on
// stdin: the webhook's JSON body (WebhookPayload), so one receiver can
// serve both. No service documentation rules it; Go's os/exec is the
// reference (https://pkg.go.dev/os/exec: no shell is involved, argv is
// passed as given; Cmd.Env's last duplicate wins; WaitDelay bounds the
// wait for pipes a killed command's children still hold).
//
//   - argv is Channel.Command as given, never through a shell. The
//     program is found as os/exec finds it and refused (permanently)
//     when another user may change it: it is not the user's or root's,
//     its group or others may write it or a directory on its way, or a
//     $PATH directory searched before it (config.ResolveProgram).
//   - environment: ours without any secret (Secrets.Environ: no channel's
//     *_env variable, no variable holding a configured secret's value, no
//     PGPASSWORD or URL with a password), plus APPROVE_TUI_EVENT (page,
//     escalation, reminder, resolved), APPROVE_TUI_APPROVAL_ID (the id
//     when it is a plain token, else empty: read approval_id from stdin)
//     and APPROVE_TUI_DELIVERY_ID (stable across attempts, to
//     de-duplicate).
//   - bounded by Channel.Timeout (10 s by default): then it is killed.
//   - exit 0 is success. stdout and stderr are kept (4 KiB each) and put
//     into the error on failure, without the lines that hold a piece of a
//     configured secret (Secrets.WithholdFragments); the error is then
//     redacted as every channel's is (Secrets.Redact: the secrets' values
//     and encoded forms, white space and line breaks inside ignored).
//
// Retry rule: a non-zero exit or a timeout is retryable (the notifier
// bounds the attempts): notification scripts mostly fail for passing
// reasons (their own network call, a lock). A command that cannot be
// started (not found, not executable) is permanent: retrying cannot help.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
)

// maxExecOutput is how much of each of stdout and stderr is kept.
const maxExecOutput = 4 << 10

// boundedBuffer keeps the first max bytes written and counts the rest.
type boundedBuffer struct {
	mu      sync.Mutex
	max     int
	buf     bytes.Buffer
	dropped int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.max - b.buf.Len()
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		b.buf.Write(p[:room])
	}
	b.dropped += len(p) - max(room, 0)
	return len(p), nil
}

// text is the kept output, safe on one line, without the lines that hold
// a piece of a configured secret (Secrets.WithholdFragments).
func (b *boundedBuffer) text(sec *Secrets) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.TrimSpace(strings.ToValidUTF8(b.buf.String(), "?"))
	s = sec.WithholdFragments(s)
	s = model.Sanitize(s, model.Line)
	if b.dropped > 0 {
		s += fmt.Sprintf("… (%d more bytes)", b.dropped)
	}
	return s
}

// plainIDOrEmpty is id when it is a plain token (model.IsPlainID), else
// "": a script that puts $APPROVE_TUI_APPROVAL_ID into a command line
// never gets text another program wrote (stdin's approval_id has it, as
// data).
func plainIDOrEmpty(id string) string {
	if model.IsPlainID(id) {
		return id
	}
	return ""
}

type execSender struct {
	*base
	argv []string
}

func newExec(b *base, where string) (Sender, error) {
	if len(b.ch.Command) == 0 || b.ch.Command[0] == "" {
		return nil, fmt.Errorf("%s: exec needs a command", where)
	}
	return &execSender{base: b, argv: append([]string(nil), b.ch.Command...)}, nil
}

func (s *execSender) Send(ctx context.Context, ev Event, d Delivery) error {
	body, err := webhookBody(ev, d)
	if err != nil {
		return s.permanent("exec: encoding the event failed")
	}
	ce := cleanEvent(ev)
	name := model.Sanitize(filepath.Base(s.argv[0]), model.Line)
	// What runs is checked at every delivery (the file may have changed
	// since the configuration was loaded): one another user may change
	// is refused, for good.
	prog := s.argv[0]
	switch p, err := config.ResolveProgram("channel "+s.ch.Name+" (exec)", prog); {
	case err == nil:
		prog = p
	case !errors.Is(err, config.ErrProgramNotFound):
		return s.permanent("exec %s: %s", name, model.Sanitize(err.Error(), model.Line))
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, s.argv[1:]...)
	cmd.Args[0] = s.argv[0]
	cmd.Stdin = bytes.NewReader(body)
	stdout := &boundedBuffer{max: maxExecOutput}
	stderr := &boundedBuffer{max: maxExecOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Env = execEnviron(s.secrets,
		"APPROVE_TUI_EVENT="+headerSafe(ce.Kind),
		"APPROVE_TUI_APPROVAL_ID="+plainIDOrEmpty(ce.ApprovalID),
		"APPROVE_TUI_DELIVERY_ID="+deliveryIDSafe(d.ID),
	)
	cmd.WaitDelay = time.Second
	runErr := cmd.Run()
	if runErr == nil {
		return nil
	}
	output := func() string {
		var parts []string
		if t := stderr.text(s.secrets); t != "" {
			parts = append(parts, "stderr: "+t)
		}
		if t := stdout.text(s.secrets); t != "" {
			parts = append(parts, "stdout: "+t)
		}
		if len(parts) == 0 {
			return ""
		}
		return "; " + strings.Join(parts, "; ")
	}
	se := &SendError{Channel: s.ch.Name, Retryable: true}
	var exitErr *exec.ExitError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		se.Err = fmt.Errorf("exec %s: timed out after %s%s: %w", name, s.timeout, output(), context.DeadlineExceeded)
	case errors.Is(ctx.Err(), context.Canceled):
		se.Err = fmt.Errorf("exec %s: canceled%s: %w", name, output(), context.Canceled)
	case errors.As(runErr, &exitErr):
		se.Err = fmt.Errorf("exec %s: %s%s", name, exitErr.ProcessState.String(), output())
	default:
		// Not started: not found, not executable, bad working directory.
		se.Retryable = false
		msg := runErr.Error()
		var ee *exec.Error
		if errors.As(runErr, &ee) {
			msg = ee.Err.Error()
		} else if pe := (*os.PathError)(nil); errors.As(runErr, &pe) {
			msg = pe.Err.Error()
		}
		se.Err = fmt.Errorf("exec %s: cannot start: %s", name, model.Sanitize(msg, model.Line))
	}
	return se
}
