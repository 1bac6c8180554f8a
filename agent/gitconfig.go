package agent

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/approve-tui/approve-tui/impact"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/shell"
)

// A git command the judgement proves read-only (git status, git log) runs
// programs all the same when its configuration names them (core.fsmonitor,
// a pager, a diff driver's textconv, a clean filter), and the agent writes
// that configuration: the repository's, and the global one under its HOME.
// gitRunsCode is the check run and every hook make before a git command
// goes unasked: it finds the git commands of the line, the directories
// they run in and the environment they get, and reads their
// configuration with impact.GitPrograms (as data, never running git). What
// it cannot know (a directory not certain, a GIT_* variable that moves
// the repository or adds configuration, a file that cannot be read) is
// asked too.

// gitLocalSubs are the git subcommands that only read what is here: they
// run no hook, no editor, no credential helper and no transport (branch
// and tag: unless their words say otherwise, see gitLocal).
var gitLocalSubs = []string{
	"status", "diff", "log", "show", "ls-files", "ls-tree", "rev-parse", "rev-list", "branch", "tag",
	"describe", "blame", "annotate", "grep", "shortlog", "reflog", "cat-file", "show-ref", "for-each-ref",
	"whatchanged", "version", "diff-files", "diff-index", "diff-tree", "var", "count-objects",
	"check-ignore", "check-attr", "name-rev", "merge-base", "range-diff",
}

// gitLocal says whether git sub with its words (after the subcommand)
// runs as gitLocalSubs say: git branch --edit-description and an
// annotated, signed or edited tag open an editor or run a signing
// program.
func gitLocal(sub string, rest []shell.Word) bool {
	if !slices.Contains(gitLocalSubs, sub) {
		return false
	}
	for _, w := range rest {
		v := w.Value
		switch {
		case !w.Known:
			if sub == "branch" || sub == "tag" {
				return false
			}
		case sub == "branch" && v == "--edit-description":
			return false
		case sub == "tag" && (v == "--annotate" || v == "--sign" || v == "--edit" || strings.HasPrefix(v, "--local-user")):
			return false
		case sub == "tag" && len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v, "aseu"):
			return false
		}
	}
	return true
}

// gitSafeEnv are the GIT_* variables that neither move the repository nor
// name configuration or a program.
var gitSafeEnv = []string{
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
	"GIT_COMMITTER_DATE", "GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS", "GIT_FLUSH", "GIT_LITERAL_PATHSPECS",
	"GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS", "GIT_MERGE_AUTOEDIT",
	"GIT_PAGER_IN_USE", "GIT_CONFIG_NOSYSTEM", "GIT_ADVICE", "GIT_DEFAULT_HASH",
}

// gitWhyPrefix starts every reason gitRunsCode gives.
const gitWhyPrefix = "git may run a program its configuration or environment names: "

// gitRunsCode says why a git command in command, run in cwd with env (the
// environment the command inherits), may run a program that configuration
// or its environment names; "" when no git command in it does (or the
// line holds none). See impact.GitPrograms for what is read.
func gitRunsCode(command, cwd string, env []string) string {
	s, err := shell.Parse(command, shell.Options{})
	if err != nil {
		return "" // the judgement asks about a line it could not read
	}
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	g := &gitLine{cwd: cwd, vars: vars, dirs: []string{filepath.Clean(cwd)}}
	for _, c := range s.Commands {
		if why := g.command(c); why != "" {
			return gitWhyPrefix + why
		}
	}
	return ""
}

type gitLine struct {
	cwd  string
	vars map[string]string
	// dirs are the directories a command of the line may run in: the
	// working directory and every one a cd before it may have gone to
	// (a subshell's cd too: more places are read, never fewer).
	dirs []string
	// unsureDir says why a later command's directory is not known.
	unsureDir string
}

const gitMaxDirs = 16

func (g *gitLine) command(c *shell.Command) string {
	if c.Remote() != "" {
		return "" // runs elsewhere: this machine's configuration is not read
	}
	name := c.Name()
	if !name.Known {
		return ""
	}
	switch base := filepath.Base(name.Value); {
	case base == "cd" || base == "pushd":
		g.cd(c)
		return ""
	case base == "git" || strings.HasPrefix(base, "git-"):
		return g.git(c, base)
	}
	return ""
}

// cd adds where cd may go to the directories.
func (g *gitLine) cd(c *shell.Command) {
	args := c.Args()
	var target string
	switch {
	case len(args) == 0:
		target = g.vars["HOME"]
		if target == "" {
			g.unsureDir = "cd to a home not known"
			return
		}
	case len(args) > 1 && args[0].Known && args[0].Value == "--":
		args = args[1:]
		fallthrough
	default:
		w := args[0]
		v, ok := g.dirWord(w)
		if !ok || len(args) > 1 || v == "-" || strings.HasPrefix(v, "-") {
			g.unsureDir = fmt.Sprintf("cd to %s, not known here", model.Sanitize(w.Raw, model.Line))
			return
		}
		target = v
	}
	if !filepath.IsAbs(target) && g.vars["CDPATH"] != "" && !strings.HasPrefix(target, "./") && !strings.HasPrefix(target, "../") {
		g.unsureDir = "cd " + model.Sanitize(target, model.Line) + " with CDPATH set"
		return
	}
	for _, d := range g.dirs {
		g.addDir(absPath(target, d))
	}
}

// dirWord is a directory word's value: its certain value, or ~ and ~/PATH
// with the HOME the command gets (PATH plain: letters, digits, . _ - /).
func (g *gitLine) dirWord(w shell.Word) (string, bool) {
	if w.Known {
		return w.Value, true
	}
	home := g.vars["HOME"]
	if home == "" || !filepath.IsAbs(home) || !strings.HasPrefix(w.Why, "tilde") {
		return "", false
	}
	if w.Raw == "~" {
		return home, true
	}
	rest, ok := strings.CutPrefix(w.Raw, "~/")
	if !ok || strings.IndexFunc(rest, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/", r))
	}) >= 0 {
		return "", false
	}
	return filepath.Join(home, rest), true
}

func (g *gitLine) addDir(d string) {
	if slices.Contains(g.dirs, d) {
		return
	}
	if len(g.dirs) >= gitMaxDirs {
		g.unsureDir = "too many directories to read"
		return
	}
	g.dirs = append(g.dirs, d)
}

func absPath(p, base string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// git checks one git command: its options before the subcommand, its
// environment, the directories it may run in and their configuration.
func (g *gitLine) git(c *shell.Command, base string) string {
	if g.unsureDir != "" {
		return g.unsureDir
	}
	if c.MoreArgs {
		return "git gets words the line does not hold"
	}
	dirs := slices.Clone(g.dirs)
	sub := strings.TrimPrefix(base, "git-")
	rest := c.Args()
	if base == "git" {
		sub = ""
		args := c.Args()
		for i := 0; i < len(args); i++ {
			w := args[i]
			if !w.Known {
				return "git is given a word not known: " + model.Sanitize(w.Raw, model.Line)
			}
			v := w.Value
			if !strings.HasPrefix(v, "-") {
				sub, rest = v, args[i+1:]
				break
			}
			switch {
			case v == "-C":
				if i+1 >= len(args) {
					return "git -C with no directory"
				}
				i++
				d, ok := g.dirWord(args[i])
				if !ok {
					return "git -C with a directory not known: " + model.Sanitize(args[i].Raw, model.Line)
				}
				if d == "" {
					continue
				}
				for j := range dirs {
					dirs[j] = absPath(d, dirs[j])
				}
			case v == "-c":
				if i+1 >= len(args) || !args[i+1].Known {
					return "git -c with a value not known"
				}
				i++
				key, val, _ := strings.Cut(args[i].Value, "=")
				if why := gitCommandLineKey(key, val); why != "" {
					return why
				}
			case v == "--no-pager", v == "-P", v == "-p", v == "--paginate", v == "--no-replace-objects",
				v == "--literal-pathspecs", v == "--glob-pathspecs", v == "--noglob-pathspecs",
				v == "--icase-pathspecs", v == "--no-optional-locks", v == "--no-advice", v == "--no-lazy-fetch":
			default:
				// --git-dir, --work-tree, --exec-path, --config-env,
				// --namespace, --bare, --super-prefix …: not read here.
				return "git " + model.Sanitize(v, model.Line) + " is not followed here"
			}
		}
	}
	if sub == "grep" {
		for _, w := range rest {
			if strings.HasPrefix(w.Value, "-O") || strings.HasPrefix(w.Value, "--open-files-in-pager") || !w.Known {
				return "git grep -O runs the program it names, or the pager"
			}
		}
	}
	local := gitLocal(sub, rest)
	home, xdg := g.vars["HOME"], g.vars["XDG_CONFIG_HOME"]
	for _, k := range slices.Sorted(maps.Keys(g.vars)) {
		if why := gitEnvRisk(k, g.vars[k], local); why != "" {
			return why + " in the environment"
		}
	}
	set := func(a shell.Assign) string {
		if !a.Value.Known {
			return a.Name + " is set to a value not known"
		}
		if why := gitEnvRisk(a.Name, a.Value.Value, local); why != "" {
			return why + " for it"
		}
		switch a.Name {
		case "HOME":
			home = a.Value.Value
		case "XDG_CONFIG_HOME":
			xdg = a.Value.Value
		}
		return ""
	}
	for _, w := range c.Wrappers {
		if strings.Contains(w.Name, "execdir") || strings.Contains(w.Name, "okdir") {
			return "git runs in directories " + w.Name + " finds"
		}
		if w.Login || w.User != "" {
			return "git runs as another user, whose configuration is not read here"
		}
		if w.Dir != "" {
			if strings.HasPrefix(w.Dir, "?") {
				return w.Name + " runs it in a directory not known"
			}
			for i := range dirs {
				dirs[i] = absPath(w.Dir, dirs[i])
			}
		}
		for _, a := range w.Env {
			if why := set(a); why != "" {
				return why
			}
		}
	}
	for _, a := range c.Assigns {
		if why := set(a); why != "" {
			return why
		}
	}
	for _, d := range dirs {
		why, err := impact.GitPrograms(d, impact.GitCheck{Home: home, XDGConfigHome: xdg, Local: local, Subcommand: sub})
		if err != nil {
			return "its configuration could not be read (" + model.Sanitize(err.Error(), model.Line) + ")"
		}
		if why != "" {
			return model.Sanitize(why, model.Line)
		}
	}
	return ""
}

// gitEnvRisk says why the variable k=v in a git command's environment
// may make it run a program or read configuration not read here, "" when
// it does not: any GIT_* variable but those that only set names, dates,
// pathspec modes, and TLS and HTTP settings (GIT_SSL_*, GIT_HTTP_*); a pager that is not less, more or cat; for a local
// subcommand, the editor and ssh variables do not count (it runs neither).
func gitEnvRisk(k, v string, local bool) string {
	switch k {
	case "PAGER", "GIT_PAGER":
		if plainPagerWord(v) {
			return ""
		}
		return k + "=" + model.Sanitize(truncateWords(v), model.Line) + " (a pager)"
	case "GIT_EDITOR", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS":
		if local || k == "GIT_EDITOR" && (v == "true" || v == ":") {
			return ""
		}
		return k + " (a program)"
	}
	if strings.HasPrefix(k, "GIT_SSL_") || strings.HasPrefix(k, "GIT_HTTP_") {
		return "" // certificates, keys and HTTP settings: files and values, no program
	}
	if strings.HasPrefix(k, "GIT_") && !slices.Contains(gitSafeEnv, k) {
		return k + " (it moves the repository, adds configuration or names a program)"
	}
	return ""
}

func truncateWords(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// gitCommandLineKey judges a git -c KEY=VALUE: only keys that name no
// program are let through.
func gitCommandLineKey(key, val string) string {
	k := strings.ToLower(key)
	switch {
	case k == "core.pager" && plainPagerWord(val), strings.HasPrefix(k, "color."), k == "core.quotepath",
		k == "log.showsignature" && val == "false", k == "core.fsmonitor" && (val == "false" || val == "0"),
		k == "diff.noprefix", k == "log.decorate", k == "core.abbrev":
		return ""
	}
	return "git -c " + model.Sanitize(key, model.Line) + " is not judged here"
}

// plainPagerWord: v is less, more or cat with options only.
func plainPagerWord(v string) bool {
	f := strings.Fields(v)
	if len(f) == 0 {
		return true
	}
	if !slices.Contains([]string{"less", "more", "cat", "/usr/bin/less", "/bin/less", "/usr/bin/more", "/bin/more", "/bin/cat", "/usr/bin/cat"}, f[0]) ||
		strings.ContainsAny(v, "|;&$`<>()\\\"'\n") {
		return false
	}
	for _, w := range f[1:] {
		if !strings.HasPrefix(w, "-") {
			return false
		}
	}
	return true
}

// raiseGit raises d to at least medium when why (gitRunsCode's answer for
// its command) says git would run configured code, and says so: in the
// raise, or in the notes when it is at least medium already.
func raiseGit(d *risk.Draft, why string) {
	if why != "" {
		raiseAtLeast(d, model.RiskMedium, "because "+why, why)
	}
}
