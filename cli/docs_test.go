package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/approve-tui/approve-tui/internal/docstest"
)

// markedBlockTests are the readme-test blocks and the tests that run them:
// a block marked with a name no test knows would be run by nobody.
var markedBlockTests = map[string]string{
	"two-commands": "TestREADME", "install": "TestREADME", "release": "TestREADME",
	"completion": "TestREADME", "manpath": "TestREADME", "first-session": "TestREADME",
	"default-store": "TestREADME", "postgres": "TestREADME", "hermes": "TestREADME",
	"hermes-config": "TestREADME", "hermes-doctor": "TestREADME", "serve": "TestREADME",
	"policy-file": "TestREADME", "policy": "TestREADME", "agent-hooks": "TestREADMEAgentHooks",
}

// Every shell block of README.md and docs/*.md runs: the marked ones in
// the tests that know them (markedBlockTests), every other one here, with
// bash -e in a fresh HOME whose default store exists (as the README leaves
// it), from the repository's root, with the binary on PATH. A block that
// cannot run on this machine alone says why in its fence,
// "```sh {no-test: WHY}".
func TestDocsShellBlocks(t *testing.T) {
	root := repoRoot(t)
	files, err := docstest.Files(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := docstest.Marked(root); err != nil {
		t.Fatal(err)
	}
	var run []docstest.Block
	skipped := 0
	for _, b := range docstest.AllBlocks(files) {
		if b.Marker != "" {
			if markedBlockTests[b.Marker] == "" {
				t.Errorf("%s:%d: readme-test: %s names a block no test runs", b.File, b.Line, b.Marker)
			}
			continue
		}
		if b.Lang != "sh" && b.Lang != "bash" {
			continue
		}
		if m := docstest.NoTest.FindStringSubmatch(b.Info); m != nil {
			skipped++
			continue
		} else if strings.TrimSpace(b.Info) != "" {
			t.Errorf("%s:%d: a shell block's fence says %q: want nothing, or {no-test: WHY}", b.File, b.Line, b.Info)
			continue
		}
		run = append(run, b)
	}
	// The blocks left out stay few: daemons, servers elsewhere, sudo,
	// operators' decisions and long benchmarks.
	for _, f := range files {
		if n := len(regexp.MustCompile("(?m)^```").FindAllString(f.Text, -1)); n%2 != 0 {
			t.Errorf("%s: %d lines start a fence: one is not closed, and the blocks after it are read wrong", f.Path, n)
		}
	}
	if skipped > 12 {
		t.Errorf("%d shell blocks are marked no-test; make the new ones run", skipped)
	}
	if len(run) == 0 {
		t.Fatal("no shell block to run: the docs test finds none")
	}
	bin := buildBinary(t, t.TempDir())
	for _, b := range run {
		t.Run(strings.ReplaceAll(b.File, "/", "_")+":"+strings.TrimSpace(strings.Fields(b.Body + " x")[0]), func(t *testing.T) {
			home := homeDir(t)
			env := []string{"HOME=" + home, "PATH=" + filepath.Dir(bin) + ":/usr/local/bin:/usr/bin:/bin",
				"TERM=dumb", "LANG=C.UTF-8", "APPROVE_TUI_HOST=vm"}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			script := "approve-tui init >/dev/null\n" + b.Body
			cmd := exec.CommandContext(ctx, "bash", "--norc", "--noprofile", "-e", "-c", script)
			cmd.Dir, cmd.Env = root, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("%s:%d: %v running:\n%s\n%s", b.File, b.Line, err, b.Body, out)
			}
		})
	}
}

// Every relative link of README.md and docs/ (the generated reference
// too) names a file that exists, and a #fragment names a heading of it.
func TestDocsLinks(t *testing.T) {
	root := repoRoot(t)
	var paths []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && rel != "docs" && !strings.HasPrefix(rel, "docs"+string(filepath.Separator)) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".md") && (rel == "README.md" || strings.HasPrefix(rel, "docs"+string(filepath.Separator))) {
			paths = append(paths, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	code := regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")
	checked := 0
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		text := code.ReplaceAllString(string(b), "")
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := filepath.Join(root, filepath.Dir(p), file)
			if file == "" {
				dest = filepath.Join(root, p)
			}
			checked++
			st, err := os.Stat(dest)
			if err != nil {
				t.Errorf("%s: link %s: %v", p, target, err)
				continue
			}
			if frag == "" || st.IsDir() {
				continue
			}
			body, err := os.ReadFile(dest)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(headingAnchors(string(body)), frag) {
				t.Errorf("%s: link %s: %s has no heading #%s", p, target, file, frag)
			}
		}
	}
	if checked < 30 {
		t.Errorf("only %d relative links checked: the link pattern no longer finds them", checked)
	}
}

// headingAnchors are the anchors GitHub gives a Markdown file's headings:
// lower case, letters, digits, spaces as '-', '-' and '_' kept, the rest
// dropped; a repeated one gets -1, -2...
func headingAnchors(md string) []string {
	var out []string
	seen := map[string]int{}
	inFence := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out = append(out, a+"-"+string(rune('0'+n)))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

// The settings docs/agents-and-hooks.md shows for each agent are the ones
// hook install writes (for the user me, the binary in ~/.local/bin), key
// for key; Codex's trust tables are named as install names them.
func TestDocsHookSettings(t *testing.T) {
	root := repoRoot(t)
	files, err := docstest.Files(root)
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]string{} // agent -> the JSON the guide shows
	toml := ""
	for _, b := range docstest.AllBlocks(files) {
		if b.File != filepath.Join("docs", "agents-and-hooks.md") {
			continue
		}
		for _, agent := range []string{"claude-code", "codex", "gemini"} {
			if b.Lang == "json" && strings.Contains(b.Body, "approve-tui hook "+agent+" ") {
				shown[agent] = b.Body
			}
		}
		if b.Lang == "toml" {
			toml = b.Body
		}
	}
	if len(shown) != 3 || toml == "" {
		t.Fatalf("docs/agents-and-hooks.md shows the settings of %d agents, want 3, and Codex's trust tables (%v)", len(shown), toml != "")
	}
	home := homeDir(t)
	bin := buildBinary(t, filepath.Join(home, ".local", "bin"))
	env := []string{"HOME=" + home, "PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin", "TERM=dumb"}
	sh := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = home, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	sh("init")
	asShown := func(s string) string { return strings.ReplaceAll(s, home, "/home/me") }
	for agent, file := range map[string]string{"claude-code": ".claude/settings.json", "codex": ".codex/hooks.json", "gemini": ".gemini/settings.json"} {
		sh("hook", "install", agent)
		b, err := os.ReadFile(filepath.Join(home, file))
		if err != nil {
			t.Fatal(err)
		}
		var got, want any
		if err := json.Unmarshal([]byte(asShown(string(b))), &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(shown[agent]), &want); err != nil {
			t.Fatalf("the guide's %s settings: %v", agent, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("hook install %s writes, as the guide would show it:\n%s\nthe guide shows:\n%s", agent, asShown(string(b)), shown[agent])
		}
	}
	b, err := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(toml, "\n") {
		if strings.HasPrefix(l, "[") && !strings.Contains(asShown(string(b)), l+"\n") {
			t.Errorf("hook install codex writes no %s into config.toml:\n%s", l, b)
		}
	}
}
