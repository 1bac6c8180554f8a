package cli

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/docstest"
	"github.com/approve-tui/approve-tui/internal/pgtest"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/charmbracelet/x/ansi"
)

// The README's command blocks, run as a new user would run them (the
// binary that its own install block installs, a fresh HOME, a real
// terminal where the README shows one), checked against what the README
// says they show: a README claim that stops being true fails here.
//
// A block is found by the "<!-- readme-test: NAME -->" line before it.
func TestREADME(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed for the README's terminal sessions (apt-get install tmux)")
	}
	blocks := readmeBlocks(t)
	r := &readmeRun{t: t, root: repoRoot(t), blocks: blocks}
	r.install()
	t.Run("two-commands", r.twoCommands)
	t.Run("release", r.release)
	t.Run("completion", r.completion)
	t.Run("one-shell", r.oneShell)
	t.Run("postgres", r.postgres)
	t.Run("hermes", r.hermes)
	t.Run("policy", r.policy)
}

type readmeRun struct {
	t      *testing.T
	root   string // the repository
	blocks map[string]string
	gopath string // where the install block put the binary: $GOPATH/bin
}

// readmeBlocks reads the marked blocks of README.md and the guides in
// docs/, wherever each now stands.
func readmeBlocks(t *testing.T) map[string]string {
	marked, err := docstest.Marked(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]string{}
	for name, b := range marked {
		blocks[name] = b.Body
	}
	for _, name := range []string{"two-commands", "install", "release", "completion", "manpath", "first-session", "default-store", "postgres", "hermes", "hermes-config", "hermes-doctor", "policy-file", "policy"} {
		if blocks[name] == "" {
			t.Fatalf("neither README.md nor docs/ has a block marked <!-- readme-test: %s -->", name)
		}
	}
	return blocks
}

// docsText is README.md and every guide in docs/, one after the other.
func docsText(t *testing.T) string {
	text, err := docstest.Text(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// homeDir is a fresh HOME for a shell of the README's. Not a t.TempDir:
// the go command leaves a process behind that may still write its
// telemetry under HOME when the test ends; removing it is best effort.
func homeDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "approve-tui-readme-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func repoRoot(t *testing.T) string {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// goEnv is the environment in which go commands reuse this machine's module
// and build caches (nothing is downloaded again) with GOPATH a fresh one.
func (r *readmeRun) goEnv() []string {
	keys := []string{"GOMODCACHE", "GOCACHE", "GOPROXY", "GONOSUMDB", "GOSUMDB", "GOTOOLCHAIN", "GOROOT"}
	out, err := exec.Command("go", append([]string{"env"}, keys...)...).Output()
	vals := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if err != nil || len(vals) != len(keys) {
		r.t.Fatalf("go env: %v %q", err, out)
	}
	env := []string{"GOPATH=" + r.gopath, "GOFLAGS="}
	for i, k := range keys[:len(keys)-1] {
		env = append(env, k+"="+vals[i])
	}
	return append(env, "PATH="+filepath.Join(vals[len(vals)-1], "bin")+":/usr/local/bin:/usr/bin:/bin")
}

// sh runs a block's lines with bash -e in dir, with env, and returns what
// it printed.
func (r *readmeRun) sh(t *testing.T, dir string, env []string, script string) string {
	t.Helper()
	cmd := exec.Command("bash", "--norc", "--noprofile", "-e", "-c", script)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v running the README's lines:\n%s\n%s", err, script, out)
	}
	return string(out)
}

// install runs the install block: go install, PATH, --version.
func (r *readmeRun) install() {
	t := r.t
	r.gopath = homeDir(t)
	block := r.blocks["install"]
	for _, want := range []string{"go install ./cmd/approve-tui", `export PATH="$PATH:$(go env GOPATH)/bin"`, "approve-tui --version"} {
		if !strings.Contains(block, want) {
			t.Fatalf("the install block lost %q:\n%s", want, block)
		}
	}
	home := homeDir(t)
	out := r.sh(t, r.root, append(r.goEnv(), "HOME="+home), block)
	if !regexp.MustCompile(`(?m)^approve-tui \S+`).MatchString(out) {
		t.Fatalf("approve-tui --version printed %q", out)
	}
	if _, err := os.Stat(filepath.Join(r.gopath, "bin", "approve-tui")); err != nil {
		t.Fatalf("go install did not put approve-tui into $(go env GOPATH)/bin: %v", err)
	}
}

// release installs a release archive (made here as goreleaser lays it
// out: the binary and build/man) as the README says, on an account that
// has no ~/.local/bin yet; the binary is then on PATH and man finds the
// pages.
func (r *readmeRun) release(t *testing.T) {
	home := homeDir(t)
	dl := filepath.Join(home, "Downloads")
	stage := t.TempDir()
	if err := os.MkdirAll(filepath.Join(stage, "build/man"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(filepath.Join(r.gopath, "bin", "approve-tui"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stage, "approve-tui"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	man := exec.Command(filepath.Join(stage, "approve-tui"), "man", filepath.Join(stage, "build/man"))
	if out, err := man.CombinedOutput(); err != nil {
		t.Fatalf("man: %v %s", err, out)
	}
	if err := os.MkdirAll(dl, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := "approve-tui_0.0.0_linux_amd64.tar.gz"
	r.sh(t, stage, []string{"PATH=/usr/bin:/bin"}, "tar czf "+filepath.Join(dl, archive)+" approve-tui build && cd "+dl+" && sha256sum "+archive+" > checksums.txt")
	env := append(r.shellEnv(home), "PATH=/usr/bin:/bin")
	out := r.sh(t, dl, env, r.blocks["release"]+"\napprove-tui --version\nman -w approve-tui-list 2>&1 || true\n")
	if !strings.Contains(out, archive+": OK") || !regexp.MustCompile(`(?m)^approve-tui \S+`).MatchString(out) {
		t.Errorf("the release block:\n%s", out)
	}
	if _, err := exec.LookPath("man"); err == nil && !strings.Contains(out, filepath.Join(home, ".local/share/man/man1/approve-tui-list.1")) {
		t.Errorf("man does not find the release's pages:\n%s", out)
	}
}

// shellEnv is a new user's login: a fresh HOME, the installed binary on
// PATH, a UTF-8 locale, and nothing of this process's environment.
func (r *readmeRun) shellEnv(home string, extra ...string) []string {
	env := append(r.goEnv(), "HOME="+home, "TERM=xterm-256color", "LANG=C.UTF-8", "PS1=$ ")
	for i, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			env[i] = "PATH=" + filepath.Join(r.gopath, "bin") + ":" + strings.TrimPrefix(e, "PATH=")
		}
	}
	return append(env, extra...)
}

// The two commands: the demo opens the console; the test command is the
// one CI runs.
func (r *readmeRun) twoCommands(t *testing.T) {
	block := r.blocks["two-commands"]
	lines := commandLines(block)
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "go run ./cmd/approve-tui demo") || !strings.HasPrefix(lines[1], "go test -race -timeout 20m ./...") {
		t.Fatalf("the two commands are not the demo and the tests:\n%s", block)
	}
	ci, err := os.ReadFile(filepath.Join(r.root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^go test -race (-count=1 )?-timeout 20m \./\.\.\.$`).Match(ci) {
		t.Errorf(".ci/run does not run the README's test command (go test -race -timeout 20m ./...)")
	}
	sh := startShell(t, r.root, r.shellEnv(homeDir(t)), 80, 24)
	sh.send(lines[0])
	sh.waitScreen(t, 2*time.Minute, "approve-tui  pending   history", " pending · ", "state.db", "HIGH", "? help")
	sh.key("q")
	sh.waitPrompt(t, 1)
}

// Completion and man pages into a fresh HOME, as the README has them.
func (r *readmeRun) completion(t *testing.T) {
	home := homeDir(t)
	env := r.shellEnv(home)
	r.sh(t, home, env, r.blocks["completion"])
	for file, has := range map[string]string{
		".local/share/bash-completion/completions/approve-tui": "__start_approve-tui",
		".config/fish/completions/approve-tui.fish":            "complete -c approve-tui",
		".local/share/man/man1/approve-tui.1":                  `approve\-tui`,
		".local/share/man/man1/approve-tui-list.1":             "list",
	} {
		b, err := os.ReadFile(filepath.Join(home, file))
		if err != nil || !strings.Contains(string(b), has) {
			t.Errorf("%s after the completion block: %v (no %q)", file, err, has)
		}
	}
	// man finds the pages beside ~/.local/bin on PATH, as the README says.
	if _, err := exec.LookPath("man"); err == nil {
		if err := os.MkdirAll(filepath.Join(home, ".local/bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("man", "-w", "approve-tui")
		cmd.Env = []string{"HOME=" + home, "PATH=" + filepath.Join(home, ".local/bin") + ":/usr/bin:/bin"}
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), filepath.Join(home, ".local/share/man")) {
			t.Errorf("man -w approve-tui with ~/.local/bin on PATH: %v %s", err, out)
		}
	}
	// The zsh lines are plain POSIX too: run them with bash when there is
	// no zsh, which is what matters (the file lands where fpath reads it).
	zsh := "bash"
	if _, err := exec.LookPath("zsh"); err == nil {
		zsh = "zsh"
	}
	m := regexp.MustCompile("(?m)^mkdir -p ~/.zfunc && approve-tui completion zsh > ~/.zfunc/_approve-tui$").Find([]byte(docsText(t)))
	if m == nil {
		t.Fatal("the docs lost their zsh completion line")
	}
	cmd := exec.Command(zsh, "-c", string(m))
	cmd.Env, cmd.Dir = env, home
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s -c %q: %v %s", zsh, m, err, out)
	}
	if b, err := os.ReadFile(filepath.Join(home, ".zfunc/_approve-tui")); err != nil || !strings.Contains(string(b), "#compdef approve-tui") {
		t.Errorf("~/.zfunc/_approve-tui: %v", err)
	}
}

// oneShell follows the README from the completion lines to the policy in
// one shell, in a real terminal 80x24, as a new user would: state carried
// from each section to the next (the exported variables, the default
// store), every block as written. The first session's screen is compared
// with the README's line for line; after the first session, the default
// store is the one every later section uses (Hermes' install does not
// write into the demo file); no output line is wider than the terminal.
func (r *readmeRun) oneShell(t *testing.T) {
	home := homeDir(t)
	// Directories named as long as the README's, so that what wraps at
	// 80 columns wraps where the README shows it.
	dbDir := sameLengthDir(t, "/tmp/demo")
	work := sameLengthDir(t, "/root/app")
	sh := startShell(t, work, r.shellEnv(home, "APPROVE_TUI_HOST=vm"), 80, 24)
	commands := 0
	send := func(l string) string {
		t.Helper()
		return typeLine(t, sh, &commands, l)
	}
	for _, l := range commandLines(r.blocks["completion"]) {
		send(l)
	}
	for _, l := range commandLines(r.blocks["manpath"]) {
		out := send(l)
		if _, err := exec.LookPath("man"); err == nil && strings.HasPrefix(l, "man ") &&
			!strings.Contains(out, filepath.Join(home, ".local/share/man/man1/approve-tui.1")) {
			t.Errorf("man did not find the pages after the README's MANPATH line:\n%s", out)
		}
	}
	r.firstSessionIn(t, sh, &commands, home, dbDir, work)

	out := ""
	for _, l := range commandLines(r.blocks["default-store"]) {
		out += send(l)
	}
	if !strings.Contains(out, "created "+filepath.Join(home, ".hermes/state.db")) {
		t.Errorf("the default-store block did not create ~/.hermes/state.db:\n%s", out)
	}
	out = ""
	for _, l := range commandLines(r.blocks["hermes"]) {
		out += send(l)
	}
	if strings.Contains(out, dbDir) || !strings.Contains(out, "opened existing "+filepath.Join(home, ".hermes/state.db")) {
		t.Errorf("hermes install after the first session did not use the default store:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(home, ".hermes", "config.yaml"), []byte(r.blocks["hermes-config"]), 0o644); err != nil {
		t.Fatal(err)
	}
	out = ""
	for _, l := range commandLines(r.blocks["hermes-doctor"]) {
		out += send(l)
	}
	if !strings.Contains(out, "no problems") {
		t.Errorf("hermes doctor after the README's steps:\n%s", out)
	}

	if pgtest.Available() {
		r.postgresIn(t, sh, &commands, t.TempDir())
	} else if os.Getenv(pgtest.EnvRequired) == "1" {
		t.Fatal(pgtest.Env + " is not set, and the PostgreSQL tests are required")
	} else {
		t.Log("no PostgreSQL server: the PostgreSQL block is left out of the one shell")
	}

	r.serveIn(t, sh, &commands, home)

	if err := os.WriteFile(filepath.Join(work, "policy.yaml"), []byte(r.blocks["policy-file"]), 0o644); err != nil {
		t.Fatal(err)
	}
	out = ""
	for _, l := range commandLines(r.blocks["policy"]) {
		out += send(l)
	}
	for _, want := range []string{"policy v1 in force", "needs 2 approvers, at least one from dba", "refused: you submitted it"} {
		if !strings.Contains(out, want) {
			t.Errorf("the policy block, after the sections before it, did not say %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".hermes/state.db")); err != nil {
		t.Error(err)
	}

	// What the terminal showed: no line of output wider than it (a line
	// the terminal wrapped comes back joined). The lines typed at the
	// prompt, and bash's job notices, are the shell's.
	for _, l := range sh.lines() {
		if strings.HasPrefix(l, "$ ") || strings.HasPrefix(l, "[1]") ||
			strings.HasPrefix(l, "The authenticity of host") || strings.HasPrefix(l, "Warning: Permanently added") {
			continue // the shell's and OpenSSH's own
		}
		if strings.Contains(l, "postgres://") && strings.Contains(l, "search_path=t_") {
			continue // the test's schema URL, longer than the README's
		}
		if n := ansi.StringWidth(l); n > 80 {
			t.Errorf("a line of %d cells on a terminal of 80: %q", n, l)
		}
	}
}

// serveIn runs the serve block in sh: a key made, the server started in
// the background, the console over the real OpenSSH client (the host key
// accepted at its question), a command without a terminal, the server
// stopped; each session's start and end are audited. The OpenSSH client
// reads ~ from the user database, not HOME: the lines typed name the
// fresh HOME's key and known_hosts, and a free port.
func (r *readmeRun) serveIn(t *testing.T, sh *shellInTmux, commands *int, home string) {
	send := func(l string) string {
		t.Helper()
		return typeLine(t, sh, commands, l)
	}
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Fatal("the OpenSSH client is needed (apt-get install openssh-client)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	lines := commandLines(r.blocks["serve"])
	ssh := "ssh -i " + filepath.Join(home, ".ssh/id_ed25519") + " -o UserKnownHostsFile=" + filepath.Join(home, ".ssh/known_hosts") + " "
	var sawConsole, sawList, sawKill bool
	for _, l := range lines {
		cmd, _, _ := strings.Cut(l, "  #")
		cmd = strings.ReplaceAll(strings.TrimSpace(cmd), "2222", port)
		if rest, ok := strings.CutPrefix(cmd, "ssh "); ok {
			cmd = ssh + rest
		}
		switch {
		case strings.HasPrefix(cmd, ssh) && strings.HasSuffix(cmd, " localhost"):
			sawConsole = true
			sh.send(cmd)
			sh.waitScreen(t, 20*time.Second, "continue connecting")
			sh.send("yes")
			sh.waitScreen(t, 20*time.Second, "approve-tui  pending", "(approver)")
			sh.key("q")
			*commands++
			sh.waitPrompt(t, *commands)
			continue
		case strings.HasPrefix(cmd, ssh) && strings.HasSuffix(cmd, " list"):
			sawList = true
			if out := send(cmd); !strings.Contains(out, "ID") && !strings.Contains(out, "no pending proposals") {
				t.Errorf("list over ssh:\n%s", out)
			}
			continue
		case cmd == "kill $!":
			sawKill = true
		}
		send(cmd)
	}
	if !sawConsole || !sawList || !sawKill {
		t.Fatalf("the serve block lost its console, its list or its kill:\n%s", r.blocks["serve"])
	}
	send("wait")
	log, _ := os.ReadFile(filepath.Join(home, "serve.log"))
	if !strings.Contains(string(log), "shutting down") || strings.Count(string(log), "session end") != 2 {
		t.Errorf("the server's log:\n%s", log)
	}
}

// typeLine types l at sh's prompt, the commands-th, waits for the next
// prompt and returns what the terminal showed from the line typed on.
func typeLine(t *testing.T, sh *shellInTmux, commands *int, l string) string {
	t.Helper()
	before := len(sh.lines())
	sh.send(l)
	*commands++
	sh.waitPrompt(t, *commands)
	got := sh.lines()
	return strings.Join(got[before-1:len(got)-1], "\n")
}

// sameLengthDir makes a new directory whose path is as long as like's.
func sameLengthDir(t *testing.T, like string) string {
	t.Helper()
	n := len(like) - len("/tmp/")
	for range 100 {
		name := fmt.Sprintf("%0*x", n, rand.Uint64())[:n]
		dir := filepath.Join("/tmp", name)
		if err := os.Mkdir(dir, 0o755); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	t.Fatalf("no free directory name as long as %s", like)
	return ""
}

// firstSessionIn types the first session in sh, every answer at its
// prompt, and compares the whole screen with the README's, line for line,
// with ids, times, durations, hashes and the host name as they come (and
// "..." for lines the README leaves out).
func (r *readmeRun) firstSessionIn(t *testing.T, sh *shellInTmux, commands *int, home, dbDir, work string) {
	block := r.blocks["first-session"]
	before := len(sh.lines()) - 1
	want := strings.Split(strings.TrimRight(block, "\n"), "\n")
	ids := map[string]string{} // the README's id -> this run's
	toRun := func(s string) string {
		s = strings.ReplaceAll(s, "/tmp/demo", dbDir)
		for readme, real := range ids {
			s = strings.ReplaceAll(s, readme, real)
		}
		return s
	}
	answers := regexp.MustCompile(`^(Type the approval id to approve: |.*\? \[y/N\] )(.+)$`)
	idLine := regexp.MustCompile(`^[A-Za-z0-9_-]{12}$`)
	for i := 0; i < len(want); i++ {
		l := want[i]
		if !strings.HasPrefix(l, "$ ") {
			continue
		}
		*commands++
		sh.send(toRun(strings.TrimPrefix(l, "$ ")))
		var out []string
		for j := i + 1; j < len(want) && !strings.HasPrefix(want[j], "$ "); j++ {
			out = append(out, want[j])
			if m := answers.FindStringSubmatch(want[j]); m != nil {
				sh.waitScreen(t, 10*time.Second, strings.TrimSpace(toRun(m[1])))
				sh.send(toRun(m[2]))
			}
		}
		sh.waitPrompt(t, *commands)
		if strings.Contains(l, "approve-tui submit ") && len(out) == 1 && idLine.MatchString(out[0]) {
			got := sh.lines()
			ids[out[0]] = got[len(got)-2]
		}
	}
	got := sh.lines()
	got = got[before : len(got)-1] // from the first command to the last prompt
	u, _ := user.Current()
	real := func(s string) string {
		for readme, id := range ids {
			s = strings.ReplaceAll(s, id, readme)
		}
		s = strings.ReplaceAll(s, dbDir, "/tmp/demo")
		s = strings.ReplaceAll(s, work, "/root/app")
		if u != nil && u.Username != "root" {
			s = strings.ReplaceAll(s, u.Username+"@vm", "root@vm")
		}
		return s
	}
	for i := range got {
		got[i] = real(got[i])
	}
	if d := matchTranscript(want, got); d != "" {
		t.Errorf("the first session differs from the README (%s); this run's screen, ids as the README's:\n%s",
			d, strings.Join(got, "\n"))
	}
}

// The PostgreSQL block against the test server (a schema of the test's in
// place of the throw-away server it starts): init says what it made; the
// run line's command waits for an approval; the console shows it, from
// build-1, and approves it; the run then runs it.
func (r *readmeRun) postgres(t *testing.T) {
	pgtest.Require(t)
	sh := startShell(t, r.root, r.shellEnv(homeDir(t)), 100, 30)
	commands := 0
	r.postgresIn(t, sh, &commands, t.TempDir())
}

// postgresIn runs the PostgreSQL block in sh, after commands commands.
func (r *readmeRun) postgresIn(t *testing.T, sh *shellInTmux, commands *int, demoDir string) {
	block := r.blocks["postgres"]
	lines := commandLines(block)
	url := pgtest.Schema(t)
	var sawInit, sawConsole, sawUnset bool
	for _, l := range lines {
		cmd, comment, _ := strings.Cut(l, "   #")
		cmd = strings.TrimSpace(strings.ReplaceAll(cmd, "/tmp/approve-pg-demo", demoDir))
		switch {
		case strings.Contains(cmd, "postgres-local.sh start"):
			if !strings.HasPrefix(cmd, "export APPROVE_TUI_DB=$(") || !strings.Contains(comment, "postgres://") {
				t.Fatalf("the block no longer starts a server and exports its URL: %q", l)
			}
			cmd = "export APPROVE_TUI_DB='" + url + "'"
		case strings.Contains(cmd, "postgres-local.sh stop"):
			continue // the test server is not the block's to stop
		case cmd == "unset APPROVE_TUI_DB":
			sawUnset = true
		case strings.HasSuffix(cmd, "&"):
			// The run in the background says it waits whenever it gets
			// there, before or after the next prompt: once it said so,
			// an empty line gives a prompt of its own.
			sh.send(cmd)
			*commands++
			sh.waitScreen(t, time.Minute, "needs approval")
			sh.key("Enter")
			*commands++
			sh.waitPrompt(t, *commands)
			continue
		case cmd == "approve-tui":
			sawConsole = true
			sh.send(cmd)
			r.approveInConsole(t, sh, url, demoDir, comment)
			*commands++
			sh.waitPrompt(t, *commands)
			continue
		}
		sh.send(cmd)
		*commands++
		sh.waitPrompt(t, *commands)
		if cmd == "approve-tui init" {
			sawInit = true
			if got := sh.lines(); !strings.Contains(got[len(got)-2], "PostgreSQL, Hermes revision pr-41427") || !strings.Contains(comment, "PostgreSQL, Hermes revision pr-41427") {
				t.Errorf("init printed %q; the README says %q", got[len(got)-2], comment)
			}
		}
	}
	if !sawInit || !sawConsole || !sawUnset {
		t.Fatalf("the block lost its init, its console or its unset:\n%s", block)
	}
	// The run in the background ran its command once approved.
	sh.send("wait; echo run exited $?")
	*commands++
	sh.waitPrompt(t, *commands)
	if got := sh.lines(); got[len(got)-2] != "run exited 0" {
		t.Errorf("the README's run: %q", got[len(got)-2])
	}
	if _, err := os.Stat(filepath.Join(demoDir, "build")); !os.IsNotExist(err) {
		t.Errorf("the approved rm -rf did not run: %v", err)
	}
}

// approveInConsole finds the run's proposal in the console, checks it is
// from build-1, approves it by typing its id, and quits.
func (r *readmeRun) approveInConsole(t *testing.T, sh *shellInTmux, url, demoDir, comment string) {
	if !strings.Contains(comment, "from build-1") {
		t.Errorf("the console line no longer says the proposal is from build-1: %q", comment)
	}
	ctx := context.Background()
	s, err := storage.Open(ctx, url, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var id string
	deadline := time.Now().Add(20 * time.Second)
	for id == "" && time.Now().Before(deadline) {
		recs, err := s.List(ctx, storage.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 1 {
			id = recs[0].ApprovalID
			if recs[0].Command != "rm -rf "+filepath.Join(demoDir, "build") {
				t.Fatalf("the proposal is %q", recs[0].Command)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if id == "" {
		t.Fatal("the run line made no proposal (a command no rule matches runs at once)")
	}
	sh.waitScreen(t, 15*time.Second, "1 pending", "rm -rf "+demoDir)
	sh.key("Enter")
	sh.waitScreen(t, 10*time.Second, "build-1")
	// On a small terminal the detail goes on below the screen: read it
	// all, as approving needs.
	for i := 0; i < 30 && strings.Contains(sh.screen(), "not yet on screen"); i++ {
		sh.key("Down")
		time.Sleep(100 * time.Millisecond)
	}
	sh.key("a")
	sh.waitScreen(t, 10*time.Second, "Type the approval id")
	sh.typeID(id)
	sh.key("Enter")
	sh.waitScreen(t, 10*time.Second, "approved "+id)
	sh.key("q")
}

// commandLines are a sh block's lines that are not comments or blank.
func commandLines(block string) []string {
	var out []string
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// shellInTmux is bash in a real terminal (tmux), with PS1 "$ ".
type shellInTmux struct {
	*demoInTmux
	width int
}

func startShell(t *testing.T, dir string, env []string, w, h int) *shellInTmux {
	t.Helper()
	sh := &shellInTmux{&demoInTmux{t: t, sock: fmt.Sprintf("approve-tui-readme-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))}, w}
	args := []string{"new-session", "-d", "-s", "e2e", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-c", dir, "env", "-i"}
	sh.tmux(append(append(args, env...), "bash", "--norc", "--noprofile")...)
	sh.tmux("set-option", "-t", "e2e", "history-limit", "10000")
	t.Cleanup(func() { exec.Command("tmux", "-L", sh.sock, "kill-server").Run() })
	sh.waitPrompt(t, 0)
	return sh
}

// send types a line and Enter. A line that ends exactly at the terminal's
// last column gets a space more: readline leaves the terminal's cursor
// pending there, and tmux then joins the next prompt to it.
func (sh *shellInTmux) send(line string) {
	if (len("$ ")+ansi.StringWidth(line))%sh.width == 0 {
		line += " "
	}
	sh.tmux("send-keys", "-t", "e2e", "-l", line)
	sh.key("Enter")
}

// lines is everything the terminal shows and scrolled past, wrapped lines
// joined, without trailing blanks.
func (sh *shellInTmux) lines() []string {
	ls := strings.Split(strings.TrimRight(sh.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "e2e"), "\n "), "\n")
	for i := range ls {
		ls[i] = strings.TrimRight(ls[i], " ")
	}
	return ls
}

// waitPrompt waits until the shell shows its prompt after n commands.
func (sh *shellInTmux) waitPrompt(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ls := sh.lines()
		prompts := 0
		for _, l := range ls {
			if l == "$" || strings.HasPrefix(l, "$ ") {
				prompts++
			}
		}
		if prompts == n+1 && ls[len(ls)-1] == "$" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no prompt after command %d:\n%s", n, strings.Join(ls, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitScreen waits until the visible screen holds every one of want.
func (sh *shellInTmux) waitScreen(t *testing.T, d time.Duration, want ...string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		scr := sh.tmux("capture-pane", "-p", "-J", "-t", "e2e")
		missing := ""
		for _, w := range want {
			if !strings.Contains(scr, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed %q:\n%s", missing, scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var (
	isoTime  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	duration = regexp.MustCompile(`\b(\d+h\d\dm|\d+m\d\ds|\d+s)\b`)
	// A hash, whole or cut ("d20c97f…").
	sha256x = regexp.MustCompile(`\b[0-9a-f]{7,64}(\b|…)`)
)

// normal is a transcript line as compared: times, durations and hashes as
// placeholders, runs of spaces as one.
func normal(s string) string {
	s = isoTime.ReplaceAllString(s, "<time>")
	s = duration.ReplaceAllString(s, "<d>")
	s = sha256x.ReplaceAllString(s, "<hash>")
	return strings.Join(strings.Fields(s), " ")
}

// sameLine compares two normal lines; a field cut with "…" on either side
// (tables are cut where their room ends) matches what it is a prefix of,
// and ends the comparison.
func sameLine(want, got string) bool {
	w, g := strings.Fields(normal(want)), strings.Fields(normal(got))
	for i := 0; ; i++ {
		if i == len(w) || i == len(g) {
			return len(w) == len(g)
		}
		if w[i] == g[i] {
			continue
		}
		wc, wcut := strings.CutSuffix(w[i], "…")
		gc, gcut := strings.CutSuffix(g[i], "…")
		if !wcut && !gcut {
			return false
		}
		return strings.HasPrefix(wc, gc) || strings.HasPrefix(gc, wc)
	}
}

// matchTranscript matches got against want, where a want line "..." stands
// for any lines; it says where they stop matching ("" when they match).
func matchTranscript(want, got []string) string {
	furthest, at := -1, -1 // the furthest want line matched, and its got line
	var match func(i, j int) bool
	match = func(i, j int) bool {
		for i < len(want) {
			if strings.TrimSpace(want[i]) == "..." {
				for k := j; k <= len(got); k++ {
					if match(i+1, k) {
						return true
					}
				}
				return false
			}
			if j == len(got) || !sameLine(want[i], got[j]) {
				return false
			}
			if i > furthest {
				furthest, at = i, j
			}
			i, j = i+1, j+1
		}
		return j == len(got)
	}
	if match(0, 0) {
		return ""
	}
	next := func(ls []string, i int) string {
		if i < len(ls) {
			return fmt.Sprintf("%q", ls[i])
		}
		return "the end"
	}
	return fmt.Sprintf("after README line %d, the README has %s, this run %s", furthest+1, next(want, furthest+1), next(got, at+1))
}

// The docs name every table of approve-tui's own that opening a Hermes
// state.db makes, and says that even list makes them.
func TestREADMENamesTheTablesAnOpenMakes(t *testing.T) {
	readme := []byte(docsText(t))
	para := regexp.MustCompile(`(?s)keeps its own tables\s*\((.*?)\)`).FindSubmatch(readme)
	if para == nil || !strings.Contains(string(readme), "even `list` or\n`show` on a Hermes `state.db` adds them") {
		t.Fatal("the README no longer lists approve-tui's own tables, or no longer says that list makes them")
	}
	var named []string
	for _, m := range regexp.MustCompile("`(approve_tui_[a-z_]+)`").FindAllSubmatch(para[1], -1) {
		named = append(named, string(m[1]))
	}
	slices.Sort(named)

	db := filepath.Join(t.TempDir(), "state.db")
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TABLE gateway_approvals (approval_id TEXT PRIMARY KEY, created_at REAL NOT NULL,
		expires_at REAL, status TEXT NOT NULL DEFAULT 'pending', consumed_at REAL, consumed_by TEXT, payload_json TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, db, false, "", "list"); code != 0 {
		t.Fatalf("list: %d %s", code, stderr)
	}
	rows, err := raw.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'approve\_tui\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var made []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		made = append(made, n)
	}
	if !slices.Equal(named, made) {
		t.Errorf("the README names %v; list made %v", named, made)
	}
}

// Use with Hermes, as a new user follows it: install, the two config lines
// added as the README shows them, doctor content; then a Hermes (the
// stand-in host, loading the plugin from where install put it) asks, an
// operator approves, and Hermes gets once.
func (r *readmeRun) hermes(t *testing.T) {
	home := homeDir(t)
	hermesHome := filepath.Join(home, ".hermes")
	env := r.shellEnv(home)
	out := r.sh(t, home, env, r.blocks["hermes"])
	if !strings.Contains(out, "plugins:") || !strings.Contains(out, "transport: approve-tui") {
		t.Fatalf("install did not print the config lines:\n%s", out)
	}
	// Before the config lines: doctor says what is missing, exit 1.
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", r.blocks["hermes-doctor"])
	cmd.Dir, cmd.Env = home, env
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "approve-tui") {
		t.Fatalf("doctor before the config lines: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(hermesHome, "config.yaml"), []byte(r.blocks["hermes-config"]), 0o644); err != nil {
		t.Fatal(err)
	}
	out = r.sh(t, home, env, r.blocks["hermes-doctor"])
	if regexp.MustCompile(`(?m)^problem`).MatchString(out) || !strings.Contains(out, "no problems") {
		t.Fatalf("doctor after the README's steps:\n%s", out)
	}
	host := exec.Command("python3", filepath.Join(r.root, "integrations/hermes/testhost/hermes_host.py"), "--hermes-home", hermesHome,
		"--timeout", "120", "--surface", "cli", "--session-key", "agent:main:cli", "--command", "rm -rf /srv/readme-demo")
	host.Env = append(env, "HERMES_HOME="+hermesHome)
	var stdout, stderr strings.Builder
	host.Stdout, host.Stderr = &stdout, &stderr
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(hermesHome, "state.db")
	rec := hermesProposal(t, db, "rm -rf /srv/readme-demo")
	r.sh(t, home, env, "approve-tui approve --confirm "+rec.ApprovalID+" -- "+rec.ApprovalID)
	if err := host.Wait(); err != nil {
		t.Fatalf("host: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"choice": "once"`) && !strings.Contains(stdout.String(), `"choice":"once"`) {
		t.Fatalf("Hermes got %s\n%s", stdout.String(), stderr.String())
	}
}

// The two-person rule as the README shows it: the policy file set, shown
// and explained; the submitter's own approval refused; then two other
// people (alice over SSH, bob on his machine) vote and the second consumes.
func (r *readmeRun) policy(t *testing.T) {
	home := homeDir(t)
	env := r.shellEnv(home)
	if err := os.WriteFile(filepath.Join(home, "policy.yaml"), []byte(r.blocks["policy-file"]), 0o644); err != nil {
		t.Fatal(err)
	}
	out := r.sh(t, home, env, r.blocks["policy"])
	for _, want := range []string{"policy v1 in force", "rule 1 (line 4): matches", "needs 2 approvers, at least one from dba",
		"rule 2 (line 7): matches; it asks for 2 approvers", "refused: you submitted it", "nobody approves a proposal of their own agent"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the README's policy lines did not say %q:\n%s", want, out)
		}
	}
	db := filepath.Join(home, ".hermes", "state.db")
	s, err := storage.Open(context.Background(), db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recs, err := s.List(context.Background(), storage.ListOptions{})
	if err != nil || len(recs) != 1 {
		t.Fatalf("list: %v %d", err, len(recs))
	}
	id := recs[0].ApprovalID
	var v *storage.VoteRecorded
	if _, err := s.Consume(context.Background(), id, id, model.Actor{Surface: model.SurfaceSSH, Name: "carol@laptop (SHA256:c)", Person: "carol", Key: "SHA256:c"}); !errors.As(err, &v) {
		t.Fatalf("carol's approval: %v, want a vote", err)
	}
	if _, err := s.Consume(context.Background(), id, id, model.Actor{Surface: model.SurfaceCLI, Name: "bob@desk", Person: "bob"}); err != nil {
		t.Fatalf("bob's approval (dba) completes it: %v", err)
	}
	out = r.sh(t, home, env, "approve-tui show "+id)
	if !strings.Contains(out, "consumed") || !strings.Contains(out, "carol@laptop") || !strings.Contains(out, "bob@desk") {
		t.Fatalf("show after two votes:\n%s", out)
	}
}
