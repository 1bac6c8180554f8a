package agent

import (
	"os"
	"path/filepath"
	"testing"
)

// selfDecides raises every form of a command that would decide approvals
// (the binary's deciding subcommands however it is invoked, the store's
// files, its tables) and leaves the read-only ones and unrelated commands
// alone.
func TestSelfDecides(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	hermes := filepath.Join(home, ".hermes")
	if err := os.MkdirAll(hermes, 0o755); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "approvals.db")
	for _, f := range []string{store, filepath.Join(hermes, "state.db")} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A copy of this executable under another name, in PATH.
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(bin, "at2")); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + bin + ":/usr/bin:/bin", "DB=" + store}
	asked := []string{
		"approve-tui approve X --confirm X",
		"approve-tui deny X",
		"approve-tui --db " + store + " approve X --confirm X",
		"approve-tui --json approve X",
		"/usr/local/bin/approve-tui approve X",
		"./approve-tui approve X",
		"approve-tui policy set p.yaml",
		"approve-tui lockouts clear rm x",
		"approve-tui expire",
		"approve-tui copy --from a --to b",
		"approve-tui init --force",
		"approve-tui serve --approvers mine",
		"approve-tui", // the console
		"approve-tui $SUB X",
		"env X=1 approve-tui approve X",
		"sudo -u root approve-tui approve X",
		"timeout 5 nice -n 3 approve-tui approve X",
		"echo X | xargs approve-tui approve",
		"find . -name x -exec approve-tui approve X ';'",
		"bash -c 'approve-tui approve X'",
		"sh -lc \"env approve-tui deny X\"",
		"eval approve-tui approve X",
		"true && (approve-tui approve X)",
		"echo $(approve-tui approve X)",
		"A=approve-tui; $A approve X",
		"\"$(which approve-tui)\" approve X",
		"at2 approve X", // this executable under another name
		exe + " approve X",
		"python3 -c \"import os; os.system('approve-tui approve X')\"",
		"sqlite3 ~/.hermes/state.db \"update gateway_approvals set status='consumed'\"",
		"sqlite3 " + store + " .dump",
		"sqlite3 $DB 'select 1'",
		"cp forged.db " + store,
		"cat x > " + store + "-wal",
		"rm " + store + "-shm",
		"sqlite3 " + filepath.Join(dir, "approv*.db") + " 'select 1'",
		"cd " + hermes + " && sqlite3 state.db .tables",
		"dd if=x of=" + store,
		"sqlite3 other.db 'UPDATE APPROVE_TUI_VOTES SET x=1'",
		"psql -c 'update gateway_approvals set status=1'",
		"sqlite3 x.db <<'EOF'\nupdate gateway_approvals set status='consumed';\nEOF",
		// A hook ends proposals on its input alone (a forged report of a
		// run, a signal): the agent's own command must not be one.
		`echo '{"hook_event_name":"PostToolUse"}' | approve-tui hook codex`,
		"approve-tui hook claude-code --low allow < forged.json",
		"approve-tui hook",
		// Wrappers shell.Parse looks through: a container's or a pod's
		// command, an array's words.
		"docker exec c approve-tui approve X",
		"kubectl exec pod -- approve-tui approve X",
		"podman run --rm img approve-tui deny X",
		"a=(approve-tui approve X); \"${a[@]}\"",
		// Words outside simple commands, and lines that do not parse
		// (looked at word by word).
		"for f in " + store + "; do cat $f; done",
		"[[ -f ~/.hermes/state.db ]] && echo y",
		"approve-tui approve 'unterminated",
		"sudo approve-tui deny X; echo $(",
	}
	for _, c := range asked {
		if selfDecides(c, dir, store, env) == "" {
			t.Errorf("not raised: %q", c)
		}
	}
	left := []string{
		"approve-tui list",
		"approve-tui --db /elsewhere.db list",
		"approve-tui show X",
		"approve-tui --json audit --limit 5",
		"approve-tui wait X",
		"approve-tui policy show",
		"approve-tui version",
		"approve-tui --help",
		"approve-tui run -- make test",
		"approve-tui hook doctor codex",
		"approve-tui hook codex --help",
		"ls -la",
		"rm -rf build",
		"git commit -m 'approve-tui: the console'",
		"go build -o approve-tui ./cmd/approve-tui",
		"echo approve",
		"sqlite3 other.db 'select 1'",
		"APPROVE_TUI_DB=x make",
		"psql -c 'select 1'", // the store is not PostgreSQL
	}
	for _, c := range left {
		if why := selfDecides(c, dir, store, env); why != "" {
			t.Errorf("raised: %q", c)
		}
	}
	// A relative store path names the file this process opens, whatever
	// directory the command runs in: a glob over it is raised.
	t.Chdir(dir)
	if selfDecides("rm -f "+filepath.Join(dir, "*.db"), filepath.Join(dir, "bin"), "approvals.db", env) == "" {
		t.Error("a glob over the store given by a relative path not raised")
	}
	// On a PostgreSQL store, psql is raised.
	if selfDecides("psql -h db approvals", dir, "postgres://u@db/approvals", env) == "" {
		t.Error("psql on a PostgreSQL store not raised")
	}
}

// BenchmarkSelfDecides: the check of four ordinary command lines (a
// status, a wrapped nested script, find -exec piped to xargs, a store
// name behind ~).
func BenchmarkSelfDecides(b *testing.B) {
	lines := []string{"git status", "sudo -u root bash -c 'cd /srv && make deploy'",
		"find . -name '*.go' -exec gofmt -l {} + | xargs -r rm", "sqlite3 ~/.hermes/state.db .tables"}
	for b.Loop() {
		for _, l := range lines {
			selfDecides(l, "/tmp", "/tmp/x.db", []string{"HOME=/root"})
		}
	}
}
