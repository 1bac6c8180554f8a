package impact

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// A vector is one way a repository, or the environment the preview
// inherits, names a program for git to run. Each has its own marker
// program (bin/NAME) that leaves ran/NAME behind when run. trigger is a
// git command that runs it when git is used as the agent left things
// (proof the vector is live); env are the variables it needs.
type vector struct {
	name    string
	trigger []string
	stdin   string
	tty     bool
	env     []string
	remove  string // a file to remove first (smudge runs on checkout)
}

// marker writes the program bin/name: it leaves ran/name, then behaves
// as a filter, textconv, pager or editor would (copies stdin or its file
// arguments to stdout) so that git goes on.
func marker(t *testing.T, root, name string) string {
	t.Helper()
	p := filepath.Join(root, "bin", name)
	script := "#!/bin/sh\n: > '" + filepath.Join(root, "ran", name) + "'\n" +
		"if [ $# -eq 0 ]; then exec cat; fi\nfor f; do [ -f \"$f\" ] && cat \"$f\"; done\nexit 0\n"
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// ran lists the markers left.
func ran(t *testing.T, root string) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(root, "ran"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// signedCommit writes a commit on parent carrying a signature header of
// the given armor (PGP or SSH), as a fetch would bring, and returns it.
func signedCommit(t *testing.T, dir, parent, armor, subject string, when int64) string {
	t.Helper()
	tree := git(t, dir, "rev-parse", parent+"^{tree}")
	body := fmt.Sprintf("tree %s\nparent %s\nauthor t <t@t> %d +0000\ncommitter t <t@t> %d +0000\n"+
		"gpgsig -----BEGIN %s SIGNATURE-----\n \n QUJD\n -----END %s SIGNATURE-----\n\n%s\n",
		tree, git(t, dir, "rev-parse", parent), when, when, armor, armor, subject)
	cmd := exec.Command("git", "-C", dir, "hash-object", "-t", "commit", "-w", "--stdin")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hash-object: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// hostileRig is pushRig's local clone as a hostile agent leaves it: every
// vector configured, in the repository's config, its attributes, included
// files, hooks, and the global and system config and environment the
// preview inherits (returned as env, not set). origin/main holds two
// signed commits; main has one commit of its own ("attrs"), a modified
// a.txt, an untracked junk.tmp, and files whose stat data changed (so
// that git must read them through their filters to compare).
func hostileRig(t *testing.T) (root, local string, vectors []vector, env []string) {
	t.Helper()
	_, local = pushRig(t)
	root = filepath.Dir(local)
	if err := os.MkdirAll(filepath.Join(root, "ran"), 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	sig := signedCommit(t, local, "origin/main", "PGP", "signed by pgp", now)
	sig = signedCommit(t, local, sig, "SSH", "signed by ssh", now+1)
	git(t, local, "update-ref", "refs/remotes/origin/main", sig)

	// A submodule whose own config names a program: git status looks
	// into a submodule by starting git there.
	subSrc := filepath.Join(root, "sub-src")
	git(t, root, "init", "-q", subSrc)
	tree(t, subSrc, map[string]string{"s.txt": "s"}, nil)
	git(t, subSrc, "add", ".")
	git(t, subSrc, "commit", "-q", "-m", "sub")
	git(t, local, "submodule", "add", "-q", subSrc, "sub")

	filters := []string{"clean", "process", "info", "include", "includeif", "global", "xdg", "system", "params", "count"}
	files := map[string]string{"notes.txt": "notes\n"}
	attrs := "*.txt diff=eviltextconv\nf-smudge.dat filter=evilsmudge\n"
	for _, f := range filters {
		files["f-"+f+".dat"] = f + "\n"
		if f != "info" && f != "xdg" {
			attrs += "f-" + f + ".dat filter=evil" + f + "\n"
		}
	}
	files["f-smudge.dat"] = "smudge\n"
	files[".gitattributes"] = attrs
	tree(t, local, files, nil)
	git(t, local, "add", ".")
	git(t, local, "commit", "-q", "-m", "attrs")
	tree(t, local, map[string]string{"a.txt": "changed by hand", "junk.tmp": "junk", "notes.txt": "more notes\n"}, nil)
	later := time.Now().Add(time.Hour)
	for name := range files {
		if strings.HasPrefix(name, "f-") {
			if err := os.Chtimes(filepath.Join(local, name), later, later); err != nil {
				t.Fatal(err)
			}
		}
	}
	tree(t, filepath.Join(local, "sub"), map[string]string{"s.txt": "changed in the submodule"}, nil)
	git(t, local, "config", "--file", filepath.Join(local, ".git", "modules", "sub", "config"), "core.fsmonitor", marker(t, root, "submodule"))
	if err := os.WriteFile(filepath.Join(local, ".git", "info", "attributes"), []byte("f-info.dat filter=evilinfo\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	m := func(name string) string { return marker(t, root, name) }
	conf := func(file string, kv ...string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(kv); i += 2 {
			git(t, local, "config", "--file", file, kv[i], kv[i+1])
		}
	}
	cfg := filepath.Join(local, ".git", "config")
	hooks := filepath.Join(root, "hooks")
	for _, h := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout", "reference-transaction", "pre-push", "post-index-change", "pre-auto-gc"} {
		if err := os.MkdirAll(hooks, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(m("hook-hookspath"), filepath.Join(hooks, h)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(m("hook-dotgit"), filepath.Join(local, ".git", "hooks", h)); err != nil {
			t.Fatal(err)
		}
	}
	conf(cfg,
		"filter.evilclean.clean", m("filter-clean"),
		"filter.evilsmudge.smudge", m("filter-smudge"),
		"filter.evilprocess.process", m("filter-process"),
		"filter.evilinfo.clean", m("info-attributes"),
		"diff.eviltextconv.textconv", m("textconv"),
		"diff.external", m("diff-external"),
		"core.fsmonitor", m("fsmonitor"),
		"core.pager", m("core-pager"),
		"pager.log", m("pager-log"),
		"log.showSignature", "true",
		"gpg.program", m("gpg-program"),
		"gpg.ssh.program", m("gpg-ssh-program"),
		"gpg.ssh.allowedSignersFile", filepath.Join(root, "allowed_signers"),
		"core.hooksPath", hooks,
		"alias.evil", "!"+m("alias"),
		"alias.status", "!"+m("alias-shadow"),
		"core.sshCommand", m("ssh-command"),
		"remote.sshremote.url", "ssh://example.invalid/r.git",
		"core.gitProxy", m("git-proxy"),
		"remote.gitremote.url", "git://example.invalid/r.git",
		"protocol.ext.allow", "always",
		"remote.extremote.url", "ext::"+m("ext-remote"),
		"remote.uploadremote.url", filepath.Join(root, "remote.git"),
		"remote.uploadremote.uploadpack", m("uploadpack"),
		"remote.origin.receivepack", m("receivepack"),
		"core.askPass", m("askpass"),
		"credential.helper", m("credential-helper"),
		"core.editor", m("editor"),
		"sequence.editor", m("sequence-editor"),
		"core.alternateRefsCommand", m("alternate-refs"),
		"uploadpack.packObjectsHook", m("pack-objects-hook"),
		"include.path", filepath.Join(root, "include.config"),
		"includeIf.gitdir:**/local/.path", filepath.Join(root, "includeif.config"),
	)
	if err := os.WriteFile(filepath.Join(root, "allowed_signers"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	conf(filepath.Join(root, "include.config"), "filter.evilinclude.clean", m("include-path"))
	conf(filepath.Join(root, "includeif.config"), "filter.evilincludeif.clean", m("include-if"))

	home, xdg := filepath.Join(root, "home"), filepath.Join(root, "xdg")
	conf(filepath.Join(home, ".gitconfig"), "filter.evilglobal.clean", m("global-config"))
	conf(filepath.Join(xdg, "git", "config"), "filter.evilxdg.clean", m("xdg-attributes"))
	if err := os.WriteFile(filepath.Join(xdg, "git", "attributes"), []byte("f-xdg.dat filter=evilxdg\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	system := filepath.Join(root, "system.config")
	conf(system, "filter.evilsystem.clean", m("system-config"))
	fake := filepath.Join(root, "fakebin")
	if err := os.MkdirAll(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(m("path-git"), filepath.Join(fake, "git")); err != nil {
		t.Fatal(err)
	}
	decoy := filepath.Join(root, "decoy")
	git(t, root, "init", "-q", decoy)
	conf(filepath.Join(decoy, ".git", "config"), "core.fsmonitor", m("git-dir"))

	status := []string{"status", "--porcelain"}
	credential := "protocol=https\nhost=example.invalid\n\n"
	vectors = []vector{
		{name: "filter-clean", trigger: status},
		{name: "filter-process", trigger: status},
		{name: "info-attributes", trigger: status},
		{name: "include-path", trigger: status},
		{name: "include-if", trigger: status},
		{name: "fsmonitor", trigger: status},
		{name: "submodule", trigger: status},
		{name: "filter-smudge", trigger: []string{"checkout", "HEAD", "--", "f-smudge.dat"}, remove: "f-smudge.dat"},
		{name: "textconv", trigger: []string{"diff", "--no-ext-diff", "HEAD~1", "--", "notes.txt"}},
		{name: "diff-external", trigger: []string{"diff", "HEAD~1"}},
		{name: "core-pager", trigger: []string{"show", "-s", "HEAD"}, tty: true},
		{name: "pager-log", trigger: []string{"log", "-1"}, tty: true},
		{name: "gpg-program", trigger: []string{"log", "-2", "--format=%s", "origin/main"}},
		{name: "gpg-ssh-program", trigger: []string{"log", "-1", "--format=%s", "origin/main"}},
		{name: "hook-hookspath", trigger: []string{"commit", "-q", "--allow-empty", "-m", "x"}},
		{name: "hook-dotgit"},
		{name: "alias", trigger: []string{"evil"}},
		{name: "alias-shadow"},
		{name: "ssh-command", trigger: []string{"fetch", "-q", "sshremote"}},
		{name: "git-proxy", trigger: []string{"fetch", "-q", "gitremote"}},
		{name: "ext-remote", trigger: []string{"fetch", "-q", "extremote"}},
		{name: "uploadpack", trigger: []string{"fetch", "-q", "uploadremote"}},
		{name: "receivepack", trigger: []string{"push", "-q", "--dry-run", "origin", "main"}},
		{name: "credential-helper", trigger: []string{"credential", "fill"}, stdin: credential},
		{name: "askpass", trigger: []string{"credential", "fill"}, stdin: credential},
		{name: "editor", trigger: []string{"commit", "-q", "--allow-empty"}},
		{name: "sequence-editor", trigger: []string{"rebase", "-q", "-i", "--autostash", "HEAD~1"}},
		{name: "alternate-refs"},
		{name: "pack-objects-hook"},
		{name: "global-config", trigger: status, env: []string{"HOME=" + home}},
		{name: "xdg-attributes", trigger: status, env: []string{"XDG_CONFIG_HOME=" + xdg}},
		{name: "system-config", trigger: status, env: []string{"GIT_CONFIG_SYSTEM=" + system}},
		{name: "env-config-parameters", trigger: status, env: []string{
			"GIT_CONFIG_PARAMETERS='filter.evilparams.clean'='" + m("env-config-parameters") + "'"}},
		{name: "env-config-count", trigger: status, env: []string{
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=filter.evilcount.clean", "GIT_CONFIG_VALUE_0=" + m("env-config-count")}},
		{name: "env-external-diff", trigger: []string{"diff", "HEAD~1"}, env: []string{"GIT_EXTERNAL_DIFF=" + m("env-external-diff")}},
		{name: "env-ssh-command", trigger: []string{"fetch", "-q", "sshremote"}, env: []string{"GIT_SSH_COMMAND=" + m("env-ssh-command")}},
		{name: "env-pager", trigger: []string{"log", "-1"}, tty: true, env: []string{"GIT_PAGER=" + m("env-pager")}},
		{name: "env-editor", trigger: []string{"commit", "-q", "--allow-empty"}, env: []string{"GIT_EDITOR=" + m("env-editor")}},
		{name: "env-askpass", trigger: []string{"credential", "fill"}, stdin: credential, env: []string{"GIT_ASKPASS=" + m("env-askpass")}},
		{name: "git-dir", trigger: status, env: []string{"GIT_DIR=" + filepath.Join(decoy, ".git"), "GIT_WORK_TREE=" + decoy}},
		{name: "path-git", trigger: []string{"--version"}, env: []string{"PATH=" + fake + ":" + os.Getenv("PATH")}},
	}
	for _, v := range vectors {
		env = append(env, v.env...)
	}
	env = append(env, "GIT_INDEX_FILE="+filepath.Join(decoy, ".git", "index"), "GIT_OBJECT_DIRECTORY="+filepath.Join(decoy, ".git", "objects"),
		"GIT_EXEC_PATH="+fake, "PAGER="+m("env-pager"), "EDITOR="+m("env-editor"), "GIT_SSH="+m("env-ssh-command"),
		"GIT_ALLOW_PROTOCOL=ext:ssh:git:file", "GIT_PROTOCOL_FROM_USER=1")
	return root, local, vectors, env
}

// cleanEnv is the test process's environment without git's variables.
func cleanEnv() []string {
	var out []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GIT_") && !strings.HasPrefix(e, "XDG_CONFIG_HOME=") && !strings.HasPrefix(e, "PAGER=") && !strings.HasPrefix(e, "EDITOR=") {
			out = append(out, e)
		}
	}
	return out
}

// Every vector is live: git, used as the agent left things, runs its
// program.
func TestHostileRigIsLive(t *testing.T) {
	root, work, vectors, _ := hostileRig(t)
	for _, v := range vectors {
		if v.trigger == nil {
			continue
		}
		if v.remove != "" {
			if err := os.Remove(filepath.Join(work, v.remove)); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		args := append([]string{"-C", work}, v.trigger...)
		var cmd *exec.Cmd
		if v.tty {
			cmd = exec.CommandContext(ctx, "script", "-qec", "git "+shellJoin(args), "/dev/null")
		} else {
			cmd = exec.CommandContext(ctx, "git", args...)
		}
		cmd.Env = append(append(cleanEnv(), "GIT_TERMINAL_PROMPT=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"), v.env...)
		if v.name == "path-git" {
			cmd = exec.CommandContext(ctx, "sh", "-c", "git --version")
			cmd.Env = append(cleanEnv(), v.env...)
		}
		cmd.Stdin = strings.NewReader(v.stdin)
		_, _ = cmd.CombinedOutput() // many fail once their program has run
		cancel()
		if _, err := os.Stat(filepath.Join(root, "ran", v.name)); err != nil {
			t.Errorf("vector %s: git %q did not run its program", v.name, v.trigger)
		}
	}
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// The preview runs none of the vectors' programs, with all of them set at
// once (repository, included files, global and system config, the
// environment it inherits), and still reports what git would.
func TestGitPreviewRunsNothingTheRepositoryNames(t *testing.T) {
	root, local, _, env := hostileRig(t)
	type check func(p *Preview) string
	names := func(p *Preview, op string) []string {
		var out []string
		for _, tg := range p.Targets {
			if tg.Op == op {
				rel, _ := filepath.Rel(local, tg.Path)
				out = append(out, rel)
			}
		}
		slices.Sort(out)
		return out
	}
	byOp := func(p *Preview, op string) *Target {
		for i := range p.Targets {
			if p.Targets[i].Op == op {
				return &p.Targets[i]
			}
		}
		return nil
	}
	cases := map[string]check{
		"git reset --hard": func(p *Preview) string {
			if got := names(p, "discard"); !slices.Equal(got, []string{"a.txt", "notes.txt"}) {
				return fmt.Sprintf("discards %q", got)
			}
			return ""
		},
		"git checkout -- .": func(p *Preview) string {
			if got := names(p, "discard"); !slices.Equal(got, []string{"a.txt", "notes.txt"}) {
				return fmt.Sprintf("discards %q", got)
			}
			return ""
		},
		"git clean -f": func(p *Preview) string {
			if got := names(p, "delete"); !slices.Equal(got, []string{"junk.tmp"}) {
				return fmt.Sprintf("deletes %q", got)
			}
			return ""
		},
		"git push --force origin main": func(p *Preview) string {
			tg := byOp(p, model.OpForcePush)
			if tg == nil || !slices.Equal(subjects(*tg), []string{"c", "d", "signed by pgp", "signed by ssh"}) {
				return fmt.Sprintf("targets %+v", p.Targets)
			}
			return ""
		},
		"git push -f": func(p *Preview) string {
			if tg := byOp(p, model.OpForcePush); tg == nil || tg.Commits != 4 {
				return fmt.Sprintf("targets %+v", p.Targets)
			}
			return ""
		},
		"git reset --hard HEAD~1": func(p *Preview) string {
			tg := byOp(p, model.OpMoveBranch)
			if tg == nil || tg.Path != "main" || !slices.Equal(subjects(*tg), []string{"attrs"}) {
				return fmt.Sprintf("targets %+v", p.Targets)
			}
			if !strings.Contains(p.Summary, "attrs") {
				return "summary " + p.Summary
			}
			return ""
		},
		"git branch -D feature": func(p *Preview) string {
			if tg := byOp(p, model.OpDeleteBranch); tg == nil || tg.Commits != 0 || !tg.Exists {
				return fmt.Sprintf("targets %+v", p.Targets)
			}
			return ""
		},
		"git rebase origin/main": func(p *Preview) string {
			if tg := byOp(p, model.OpMoveBranch); tg == nil || !slices.Equal(subjects(*tg), []string{"attrs"}) {
				return fmt.Sprintf("targets %+v", p.Targets)
			}
			return ""
		},
	}
	for cmd, c := range cases {
		t.Run(cmd, func(t *testing.T) {
			// The preview inherits the agent's environment (restored after).
			for _, e := range env {
				k, v, _ := strings.Cut(e, "=")
				t.Setenv(k, v)
			}
			p := Compute(context.Background(), cmd, Options{Cwd: local})
			if len(p.Unknown) != 0 {
				t.Errorf("unknown %q", p.Unknown)
			}
			if msg := c(p); msg != "" {
				t.Error(msg)
			}
			if got := ran(t, root); len(got) != 0 {
				t.Fatalf("the preview ran the agent's programs: %q", got)
			}
		})
	}
	// The preview left the repository as it was.
	if b, _ := os.ReadFile(filepath.Join(local, "a.txt")); string(b) != "changed by hand" {
		t.Error("the preview changed the work tree")
	}
	if got := git(t, local, "rev-parse", "--abbrev-ref", "HEAD"); got != "main" {
		t.Errorf("HEAD is %s", got)
	}
}
