package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	gossh "golang.org/x/crypto/ssh"
)

// The queries a terminal answers with its background colour and the
// cursor position (termenv's, Lip Gloss', Bubble Tea's at start).
var terminalQueries = []string{"\x1b]11;?", "\x1b]10;?", "\x1b[6n"}

// silentPty runs bin with args on a real pseudo-terminal whose other end
// reads everything and answers nothing, as a pty held by a script, a CI
// runner or an editor does. It returns what the program wrote to the
// terminal. until, if not empty, is awaited in the output, then keys are
// typed (the console's quit). The context only guards against a hang.
func silentPty(t testing.TB, bin string, env []string, until, keys string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mu sync.Mutex
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return // EIO once the program has exited
			}
		}
	}()
	if until != "" {
		for {
			mu.Lock()
			seen := strings.Contains(out.String(), until)
			mu.Unlock()
			if seen {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("%v never wrote %q; it wrote %q", args, until, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := io.WriteString(f, keys); err != nil {
			t.Fatal(err)
		}
	}
	err = cmd.Wait()
	<-done
	if ctx.Err() != nil {
		t.Fatalf("%v did not end on a terminal that does not answer; it wrote %q", args, out.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String()
}

func ptyEnv(home string, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TERM=xterm-256color", "LANG=C.UTF-8"}, extra...)
}

// On a terminal that never answers, a command whose output does not
// depend on the background asks the terminal nothing (it used to ask,
// then wait 5 s for the answer), serve's log included; the console asks once, where its colours
// show, and starts all the same; with no colour, or with the background
// given by COLORFGBG, it asks nothing.
func TestTerminalAskedOnlyWhenTheAnswerMatters(t *testing.T) {
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	db := filepath.Join(dir, "state.db")
	if out, err := exec.Command(bin, "init", "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "submit", "--db", db, "--", "rm", "-rf", "build").CombinedOutput(); err != nil {
		t.Fatalf("submit: %v\n%s", err, out)
	}
	env := ptyEnv(dir)
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"list", env, []string{"list", "--db", db}, "rm -rf build"},
		{"list NO_COLOR", append(env, "NO_COLOR=1"), []string{"list", "--db", db}, "rm -rf build"},
		{"list --color never", env, []string{"--color", "never", "list", "--db", db}, "rm -rf build"},
		{"list --color always", env, []string{"--color", "always", "list", "--db", db}, "rm -rf build"},
		{"list --json", env, []string{"list", "--json", "--db", db}, "rm -rf build"},
		{"audit", env, []string{"audit", "--db", db}, "submit"},
		{"stats", env, []string{"stats", "--db", db}, ""},
		{"--version", env, []string{"--version"}, "approve-tui"},
		{"--help", env, []string{"--help"}, "Usage:"},
		{"policy show", env, []string{"policy", "show", "--db", db}, ""},
	} {
		out := silentPty(t, bin, c.env, "", "", c.args...)
		for _, q := range terminalQueries {
			if strings.Contains(out, q) {
				t.Errorf("%s asked the terminal %q: %q", c.name, q, out)
			}
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%s wrote %q, without %q", c.name, out, c.want)
		}
	}

	// serve logs in colour on its terminal, and asks it nothing.
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := gossh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	approvers := filepath.Join(dir, "approvers")
	if err := os.WriteFile(approvers, append(bytes.TrimSpace(gossh.MarshalAuthorizedKey(sshPub)), " alice\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	out := silentPty(t, bin, env, "listening", "\x03", "--db", db, "serve", "--listen", "127.0.0.1:0",
		"--host-key", filepath.Join(dir, "host_ed25519"), "--approvers", approvers)
	for _, q := range terminalQueries {
		if strings.Contains(out, q) {
			t.Errorf("serve asked its terminal %q: %q", q, out)
		}
	}
	if !strings.Contains(out, "\x1b[") {
		t.Errorf("serve's log on a colour terminal has no colour: %q", out)
	}

	// The console: its colours depend on the background.
	out = silentPty(t, bin, env, "rm -rf build", "q", "--db", db)
	if n := strings.Count(out, "\x1b]11;?"); n != 1 {
		t.Errorf("the console in colour asked for the background %d times, want once: %q", n, out)
	}
	for _, q := range []string{"\x1b]10;?"} {
		if strings.Contains(out, q) {
			t.Errorf("the console asked the terminal %q", q)
		}
	}
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"NO_COLOR", append(ptyEnv(dir), "NO_COLOR=1"), []string{"--db", db}},
		{"--color never", ptyEnv(dir), []string{"--color", "never", "--db", db}},
		{"TERM=dumb", append(ptyEnv(dir)[:2], "TERM=dumb"), []string{"--db", db}},
		{"COLORFGBG", append(ptyEnv(dir), "COLORFGBG=0;15"), []string{"--db", db}},
	} {
		out := silentPty(t, bin, c.env, "rm -rf build", "q", c.args...)
		for _, q := range terminalQueries {
			if strings.Contains(out, q) {
				t.Errorf("the console with %s asked the terminal %q", c.name, q)
			}
		}
	}
}

// BenchmarkSilentTerminal is a command's wall time, fork to exit, on a
// real pseudo-terminal that never answers a query: `list` on a file with
// one pending proposal, and the console (first frame, then q). Before
// Bubble Tea's start-up query was kept off, each waited 5 s for the
// answer, the console 10 s (background and foreground).
//
//	go test -run '^$' -bench SilentTerminal -benchtime 20x ./cli/
func BenchmarkSilentTerminal(b *testing.B) {
	dir := b.TempDir()
	bin := buildBinaryTB(b, dir)
	db := filepath.Join(dir, "state.db")
	if out, err := exec.Command(bin, "init", "--db", db).CombinedOutput(); err != nil {
		b.Fatalf("init: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "submit", "--db", db, "--", "rm", "-rf", "build").CombinedOutput(); err != nil {
		b.Fatalf("submit: %v\n%s", err, out)
	}
	env := ptyEnv(dir)
	b.Run("list", func(b *testing.B) {
		for b.Loop() {
			silentPty(b, bin, env, "", "", "list", "--db", db)
		}
	})
	b.Run("console", func(b *testing.B) {
		for b.Loop() {
			silentPty(b, bin, env, "rm -rf build", "q", "--db", db)
		}
	})
}
