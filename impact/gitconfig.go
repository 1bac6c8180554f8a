package impact

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// A git command that only reads (status, diff, log) still runs programs
// when configuration names them: core.fsmonitor, a pager, a diff driver's
// textconv or command, diff.external, a clean filter (status runs it over
// modified files), and, for commands that write or talk to a remote,
// hooks, editors, credential helpers, ssh commands and remote helpers.
// The agent writes the repository (and often the user's global config),
// so it can make `git status` run its code. GitPrograms reads that
// configuration as data, with go-git's config format (no git runs, no
// include is trusted unread), so that a command git would run that way is
// asked, never let through unseen.

// GitCheck says which configuration a git command reads besides its
// repository's, and what the command does.
type GitCheck struct {
	// Home is $HOME of the command's environment: $HOME/.gitconfig is
	// read, and ~/ in include paths ("": neither).
	Home string
	// XDGConfigHome is $XDG_CONFIG_HOME ("": $HOME/.config):
	// XDG_CONFIG_HOME/git/config is read.
	XDGConfigHome string
	// Local: the subcommand only reads what is here (status, diff, log,
	// show …): hooks, editors, credential helpers, ssh commands and
	// transports do not count, as it runs none of them. Otherwise every
	// program configuration names counts.
	Local bool
	// Subcommand is the git subcommand (an alias of that name counts).
	Subcommand string
}

// gitConfigLimit bounds one config file; a larger one is not read (and so
// asked).
const gitConfigLimit = 1 << 20

// gitIncludeDepth bounds include.path chains, as git does.
const gitIncludeDepth = 10

// gitMaxFiles bounds how many config files one check reads (submodules,
// includes).
const gitMaxFiles = 256

// GitPrograms says why a git command run in dir, as c describes, may run a
// program its configuration names: the key and the file that sets it
// ("core.fsmonitor in /r/.git/config"), "" when none does. It reads the
// configuration of the repository dir is in (found as git finds it, a .git
// file's gitdir: followed, a linked work tree's common directory), its
// config.worktree, the configs of its submodules, the global config
// (Home/.gitconfig and XDGConfigHome/git/config), and every file they
// include (include.path and includeIf.*.path, whatever the condition),
// and the hooks a command that is not Local may run. A file that cannot be
// read, does not parse, or that go-git and a plain reading of its lines
// disagree about is an error: the caller asks (fail closed). A directory
// in no repository has only the global config.
func GitPrograms(dir string, c GitCheck) (string, error) {
	r := &gitReader{c: c, seen: map[string]bool{}}
	home := c.Home
	xdg := c.XDGConfigHome
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	for _, p := range []string{filepath.Join(xdg, "git", "config"), filepath.Join(home, ".gitconfig")} {
		if xdg == "" || home == "" || !filepath.IsAbs(p) {
			continue
		}
		if why, err := r.file(p, 0); why != "" || err != nil {
			return why, err
		}
	}
	root, gitDir, commonDir, err := findRepo(dir)
	if errors.Is(err, errNoRepo) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("its repository could not be found: %w", err)
	}
	if !validGitDir(gitDir) {
		// git would pass over it and use a repository further up, whose
		// configuration is not read here.
		return "", fmt.Errorf("%s is not a git directory git would use", gitDir)
	}
	return r.repo(root, gitDir, commonDir, 0)
}

type gitReader struct {
	c     GitCheck
	root  string // the work tree whose configuration is being read
	seen  map[string]bool
	files int
}

// repo checks one repository's own config files, its hooks and its
// submodules'.
func (r *gitReader) repo(root, gitDir, commonDir string, depth int) (string, error) {
	r.root = root
	for _, p := range []string{filepath.Join(commonDir, "config"), filepath.Join(commonDir, "config.worktree"), filepath.Join(gitDir, "config.worktree")} {
		if why, err := r.file(p, 0); why != "" || err != nil {
			return why, err
		}
	}
	if !r.c.Local {
		if why, err := gitHooks(filepath.Join(commonDir, "hooks")); why != "" || err != nil {
			return why, err
		}
	} else if p := filepath.Join(commonDir, "hooks", "post-index-change"); exists(p) {
		// A read refreshes the index and writes it back when it can: every
		// index write runs post-index-change.
		return "a hook run when a read refreshes the index, " + p, nil
	}
	if depth > 0 {
		return "", nil
	}
	// Submodules: git status runs git in each one checked out, whose own
	// config counts. Their git directories are under modules/ (absorbed)
	// or a .git directory in their work tree.
	if why, err := r.modules(filepath.Join(commonDir, "modules"), 0); why != "" || err != nil {
		return why, err
	}
	if root == "" {
		return "", nil
	}
	b, err := readConfigFile(filepath.Join(root, ".gitmodules"))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	mods := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(b)).Decode(mods); err != nil {
		return "", fmt.Errorf("%s does not parse: %v", filepath.Join(root, ".gitmodules"), err)
	}
	for _, s := range mods.Sections {
		for _, ss := range s.Subsections {
			for _, o := range ss.Options {
				if !strings.EqualFold(o.Key, "path") || o.Value == "" {
					continue
				}
				sub := absolute(o.Value, root)
				if _, err := os.Lstat(filepath.Join(sub, ".git")); err != nil {
					continue // not checked out
				}
				sroot, sgit, scommon, err := findRepo(sub)
				if err != nil {
					return "", fmt.Errorf("submodule %s could not be read: %w", sub, err)
				}
				if sroot != sub {
					continue
				}
				if why, err := r.repo(sroot, sgit, scommon, depth+1); why != "" || err != nil {
					return why, err
				}
			}
		}
	}
	return "", nil
}

// modules checks every git directory under a modules/ directory (nested
// submodules' too).
func (r *gitReader) modules(dir string, depth int) (string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if depth > 8 {
		return "", errors.New(dir + " nests too deep to read")
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if isGitDir(p) {
			if why, err := r.repo("", p, p, 1); why != "" || err != nil {
				return why, err
			}
			if why, err := r.modules(filepath.Join(p, "modules"), depth+1); why != "" || err != nil {
				return why, err
			}
			continue
		}
		// A submodule named a/b has its directory at modules/a/b.
		if why, err := r.modules(p, depth+1); why != "" || err != nil {
			return why, err
		}
	}
	return "", nil
}

// gitHooks names a hook in dir that git would run (any file but the
// samples git installs).
func gitHooks(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sample") {
			continue
		}
		return "a hook, " + filepath.Join(dir, e.Name()), nil
	}
	return "", nil
}

// readConfigFile reads a config file of at most gitConfigLimit bytes (a
// FIFO or a device is refused, a larger file is an error).
func readConfigFile(p string) ([]byte, error) {
	b, err := readSmall(p, gitConfigLimit+1)
	if err != nil {
		return nil, err
	}
	if len(b) > gitConfigLimit {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, gitConfigLimit)
	}
	return b, nil
}

// file checks one config file and what it includes. A missing file is
// nothing.
func (r *gitReader) file(p string, depth int) (string, error) {
	if depth > gitIncludeDepth {
		return "", fmt.Errorf("includes nest deeper than %d at %s", gitIncludeDepth, p)
	}
	p = filepath.Clean(p)
	if r.seen[p] {
		return "", nil
	}
	r.seen[p] = true
	if r.files++; r.files > gitMaxFiles {
		return "", fmt.Errorf("more than %d config files to read", gitMaxFiles)
	}
	b, err := readConfigFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil // git skips a missing include or global file
	}
	if err != nil {
		return "", fmt.Errorf("could not read %s: %v", p, err)
	}
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(b)).Decode(cfg); err != nil {
		return "", fmt.Errorf("%s does not parse: %v", p, err)
	}
	parsed := map[string]int{}
	var includes []string
	for _, s := range cfg.Sections {
		for _, o := range s.Options {
			name, sub := splitSection(s.Name, "")
			parsed[name+"."+strings.ToLower(o.Key)]++
			if why := r.program(name, sub, strings.ToLower(o.Key), o.Value); why != "" {
				return why + " in " + p, nil
			}
			if name == "include" && strings.EqualFold(o.Key, "path") {
				includes = append(includes, o.Value)
			}
		}
		for _, ss := range s.Subsections {
			for _, o := range ss.Options {
				name, _ := splitSection(s.Name, "")
				parsed[name+"."+strings.ToLower(o.Key)]++
				if why := r.program(name, ss.Name, strings.ToLower(o.Key), o.Value); why != "" {
					return why + " in " + p, nil
				}
				if name == "includeif" && strings.EqualFold(o.Key, "path") {
					includes = append(includes, o.Value)
				}
			}
		}
	}
	// A key git would read where go-git read none is a key this check did
	// not judge: asked.
	for k, n := range plainKeys(b) {
		if n > parsed[k] {
			return "", fmt.Errorf("%s holds %s where its parse does not (ambiguous)", p, k)
		}
	}
	for _, inc := range includes {
		q, err := r.includePath(inc, filepath.Dir(p))
		if err != nil {
			return "", fmt.Errorf("%s: %v", p, err)
		}
		if why, err := r.file(q, depth+1); why != "" || err != nil {
			return why, err
		}
	}
	return "", nil
}

// includePath is where an include.path value points, relative to the
// including file's directory.
func (r *gitReader) includePath(v, dir string) (string, error) {
	switch {
	case v == "":
		return "", errors.New("an include with an empty path")
	case strings.HasPrefix(v, "~/"):
		if r.c.Home == "" {
			return "", fmt.Errorf("include %q names a home not known", v)
		}
		return filepath.Join(r.c.Home, v[2:]), nil
	case strings.HasPrefix(v, "~"), strings.HasPrefix(v, "%("):
		return "", fmt.Errorf("include %q names a place not known here", v)
	}
	return absolute(v, dir), nil
}

// splitSection undoes the old [section.sub] form: git reads it as section
// "section", subsection "sub".
func splitSection(name, sub string) (string, string) {
	name = strings.ToLower(name)
	if s, rest, ok := strings.Cut(name, "."); ok && sub == "" {
		return s, rest
	}
	return name, sub
}

// localPagers are pagers named by a bare word that run no configured code
// of their own.
var localPagers = []string{"less", "more", "cat"}

// plainPager: v names a pager that is one of localPagers with options only.
func plainPager(v string) bool { return plainWords(v, localPagers...) }

// plainWords: v is a program among names, with options only (words that
// start with -), no shell syntax.
func plainWords(v string, names ...string) bool {
	f := strings.Fields(v)
	if len(f) == 0 {
		return true
	}
	if !slices.Contains(names, f[0]) || strings.ContainsAny(v, "|;&$`<>()\\\"'\n") {
		return false
	}
	for _, w := range f[1:] {
		if !strings.HasPrefix(w, "-") {
			return false
		}
	}
	return true
}

// commonEditors are editors named by a bare word: programs the user
// installed, not code of the repository.
var commonEditors = []string{"vi", "vim", "nvim", "nano", "emacs", "emacsclient", "code", "subl", "hx", "micro", "ed", "mg", "true", ":"}

// lfsFilter are the values `git lfs install` writes: git-lfs, found as
// git itself is, on PATH.
var lfsFilter = map[string]string{
	"clean":   "git-lfs clean -- %f",
	"smudge":  "git-lfs smudge -- %f",
	"process": "git-lfs filter-process",
}

// isGitBool: v is a git boolean (a key with no value is true).
func isGitBool(v string) bool {
	if v == "" {
		return true
	}
	_, ok := gitBool(strings.ToLower(strings.TrimSpace(v)))
	return ok
}

// gitTrue: v is a git boolean that says true.
func gitTrue(v string) bool {
	b, ok := gitBool(strings.ToLower(strings.TrimSpace(v)))
	return ok && b == "true"
}

// builtinCredential: a credential helper that is git's own (store,
// cache), with options only.
func builtinCredential(v string) bool { return plainWords(v, "store", "cache") }

// program says why key (section lower case, subsection as written, key
// lower case) set to value makes git run a program, "" when it does not.
func (r *gitReader) program(section, sub, key, value string) string {
	name := section + "." + key
	if sub != "" {
		// The subsection is the repository's text: quoted and bounded
		// unless it is a plain name.
		shown := sub
		if len(sub) > 80 || strings.IndexFunc(sub, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) >= 0 {
			shown = strconv.Quote(truncate(sub, 80))
		}
		name = section + "." + shown + "." + key
	}
	says := func(what string) string {
		return fmt.Sprintf("%s (%s) = %q", name, what, truncate(value, 80))
	}
	writes := !r.c.Local
	switch section {
	case "core":
		switch key {
		case "fsmonitor":
			if !isGitBool(value) {
				return says("runs a file-system monitor hook")
			}
		case "pager":
			if !plainPager(value) {
				return says("a pager")
			}
		case "editor":
			if writes && !plainWords(value, commonEditors...) {
				return says("an editor")
			}
		case "sshcommand", "gitproxy", "askpass":
			if writes {
				return says("a program for remotes")
			}
		case "hookspath":
			// post-index-change there runs on a read's index refresh too.
			if writes || r.hookThere(value) {
				return says("hooks")
			}
		case "alternaterefscommand":
			if writes {
				return says("a command for remotes")
			}
		}
	case "sequence":
		if key == "editor" && writes && !plainWords(value, commonEditors...) {
			return says("an editor")
		}
	case "pager":
		if !isGitBool(value) && !plainPager(value) {
			return says("a pager")
		}
	case "alias":
		if r.c.Subcommand != "" && strings.EqualFold(key, r.c.Subcommand) {
			return says("an alias of the subcommand")
		}
	case "diff":
		switch {
		case sub == "" && key == "external":
			return says("an external diff")
		case sub != "" && (key == "command" || key == "textconv"):
			return says("a diff driver")
		}
	case "filter":
		if sub != "" && (key == "clean" || key == "smudge" || key == "process") {
			if sub == "lfs" && strings.Join(strings.Fields(value), " ") == lfsFilter[key] {
				return "" // git lfs install's own
			}
			return says("a filter")
		}
	case "merge":
		if sub != "" && key == "driver" {
			return says("a merge driver")
		}
	case "gpg":
		if key == "program" || key == "defaultkeycommand" {
			return says("a signing program")
		}
	case "credential":
		if key == "helper" && writes && !builtinCredential(value) {
			return says("a credential helper")
		}
	case "extensions":
		if key == "partialclone" && value != "" {
			// Even a read fetches the objects a partial clone lacks, by
			// the remote's transport, ssh command and credential helper.
			return says("a partial clone: reading fetches")
		}
	case "remote":
		if key == "promisor" && (value == "" || gitTrue(value)) {
			return says("a partial clone: reading fetches")
		}
		if writes && (key == "uploadpack" || key == "receivepack" || key == "vcs" || key == "proxy" ||
			(key == "url" || key == "pushurl") && strings.Contains(value, "::")) {
			return says("a program for remotes")
		}
	case "url":
		if writes && strings.Contains(sub, "::") {
			return says("a remote helper")
		}
	case "protocol":
		if writes && key == "allow" && strings.EqualFold(strings.TrimSpace(value), "always") {
			return says("lets any transport run")
		}
	case "difftool", "mergetool", "man", "browser", "trailer":
		if writes && (key == "cmd" || key == "command" || key == "path") {
			return says("a tool")
		}
	case "web":
		if writes && key == "browser" {
			return says("a browser")
		}
	case "interactive":
		if writes && key == "difffilter" {
			return says("a diff filter")
		}
	case "submodule":
		if writes && key == "update" && strings.HasPrefix(strings.TrimSpace(value), "!") {
			return says("a submodule update command")
		}
	case "uploadpack":
		if writes && key == "packobjectshook" {
			return says("a hook")
		}
	case "sendemail":
		if writes && (strings.HasSuffix(key, "cmd") || key == "smtpserver") {
			return says("a program")
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// plainKeys counts the keys a plain reading of config lines finds, as
// "section.key" (both lower case; the subsection left out): a key after
// a section header on the same line counts, a line that continues a value
// (the one before ends in a backslash) and comments do not. It is a second
// reading to compare with go-git's: where it finds more of a key, the two
// disagree about what git would read.
func plainKeys(b []byte) map[string]int {
	keys := map[string]int{}
	section := ""
	cont := false
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		wasCont := cont
		cont = strings.HasSuffix(line, "\\") && (len(line)-len(strings.TrimRight(line, "\\")))%2 == 1
		if wasCont {
			continue
		}
		rest := strings.TrimLeft(line, " \t")
		for strings.HasPrefix(rest, "[") {
			end := headerEnd(rest)
			if end < 0 {
				rest = ""
				break
			}
			h := strings.TrimSpace(rest[1:end])
			name, _, _ := strings.Cut(h, " ")
			name, _, _ = strings.Cut(name, "\t")
			name, _, _ = strings.Cut(name, ".")
			section = strings.ToLower(strings.Trim(name, `"`))
			rest = strings.TrimLeft(rest[end+1:], " \t")
		}
		if rest == "" || rest[0] == '#' || rest[0] == ';' {
			continue
		}
		i := 0
		for i < len(rest) && (rest[i] == '-' || rest[i] >= 'a' && rest[i] <= 'z' || rest[i] >= 'A' && rest[i] <= 'Z' || rest[i] >= '0' && rest[i] <= '9') {
			i++
		}
		if i == 0 {
			continue
		}
		keys[section+"."+strings.ToLower(rest[:i])]++
	}
	return keys
}

// headerEnd is the index of the ] that closes the section header s starts
// with (a quoted subsection may hold ]), -1 when none does.
func headerEnd(s string) int {
	quoted := false
	for i := 1; i < len(s); i++ {
		switch {
		case quoted && s[i] == '\\':
			i++
		case s[i] == '"':
			quoted = !quoted
		case s[i] == ']' && !quoted:
			return i
		}
	}
	return -1
}

// exists reports whether p is there (any kind of file).
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// validGitDir reports whether dir is a git directory as git checks one:
// HEAD, and objects and refs (or a commondir file naming where they are).
func validGitDir(dir string) bool {
	if !exists(filepath.Join(dir, "HEAD")) {
		return false
	}
	return exists(filepath.Join(dir, "commondir")) || exists(filepath.Join(dir, "objects")) && exists(filepath.Join(dir, "refs"))
}

// hookThere reports whether a core.hooksPath of value may hold a
// post-index-change hook (a path it cannot resolve may).
func (r *gitReader) hookThere(value string) bool {
	dir := value
	switch {
	case strings.HasPrefix(value, "~/"):
		if r.c.Home == "" {
			return true
		}
		dir = filepath.Join(r.c.Home, value[2:])
	case strings.HasPrefix(value, "~"):
		return true
	case !filepath.IsAbs(value):
		if r.root == "" {
			return true
		}
		dir = filepath.Join(r.root, value)
	}
	return exists(filepath.Join(dir, "post-index-change"))
}
