package risk

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk/catalogue"
	"github.com/approve-tui/approve-tui/shell"
)

const (
	low    = model.RiskLow
	medium = model.RiskMedium
	high   = model.RiskHigh
)

// maxInner bounds how deep commands given in options (tar --to-command,
// git -c core.pager=, GIT_SSH_COMMAND) are parsed and judged in turn.
const maxInner = 4

// analysis is the judgement of one command line beyond the table.
type analysis struct {
	c        Context
	cat      *catalogue.Catalogue
	findings []Finding
	effects  []string
	readOnly bool
	// What the line does as a whole, for the data-flow findings.
	downloads  []string // words of commands that download
	decodes    []string // words of commands that decode or unpack a payload
	secretRead []string // words of reads of secrets
	egressCmd  []string // words of commands that send data to another host
	opaque     []string // words of code that cannot be read
	inner      int      // depth of commands given in options
	s          *shell.Script
	roots      map[*shell.Command][]string // find's start paths
	placed     map[locKey]place            // words already located
	// noWorkspace: the working directory is not a workspace (/, a system
	// directory, a home directory itself): nothing is inside it.
	noWorkspace bool
	// dir is where cd (or pushd) earlier in the line went: an absolute
	// path, "~…" when the home is not known, a path relative to an
	// unknown Cwd, "?" when not certain; "" when no cd came before.
	dir string
	// lookupVar names a variable that chooses where commands are found
	// (PATH) set earlier in the line, with its value ("" for none).
	lookupVar, lookupVal string
	// cdpath: CDPATH was set earlier in the line.
	cdpath     bool
	lookupMemo lookupMemo
	slab       []string // see values
	slabSize   int
	placeBuf   [1]place // see places
	// results are the catalogue's results of the lookups under way, the
	// first lookups of them (see lookup).
	results []*catalogue.Result
	lookups int
	// rated are the effects on places rated so far (see rateTarget).
	rated map[ratedPlace]bool
	// indexed is the long command whose words wordIndex indexes (see
	// shellWord).
	indexed   *shell.Command
	wordIndex map[string]int
	// seen, ranks and kept are the deduplication's and the ordering's
	// buffers (see judgeLater).
	seen  map[uint64]int
	ranks []uint8
	kept  []int
	// long: the analysis is kept with those of long lines (see analyses).
	long bool
}

func (a *analysis) add(f Finding) {
	if f.Words == nil {
		f.Words = []string{}
	}
	for k, w := range f.Words {
		if len(w) > maxWord {
			f.Words = slices.Clone(f.Words)
			f.Words[k] = clip(w, maxWord)
		}
	}
	a.findings = append(a.findings, f)
}

// findingKey appends to b what tells findings apart (rule, level, why and
// words, joined by NULs): a byte slice reused for every finding, so that
// only the distinct ones cost a string.
func findingKey(b []byte, f Finding) []byte {
	b = append(b, f.Rule...)
	b = append(b, 0)
	b = append(b, f.Level...)
	b = append(b, 0)
	b = append(b, f.Why...)
	b = append(b, 0)
	for k, w := range f.Words {
		if k > 0 {
			b = append(b, 0)
		}
		b = append(b, w...)
	}
	return b
}

// maxWord bounds a finding's word (a long -c script is shown cut).
const maxWord = 256

// clip cuts w to at most n bytes on a character boundary, marked with "…".
func clip(w string, n int) string {
	if len(w) <= n {
		return w
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(w[cut]) {
		cut--
	}
	return w[:cut] + "…"
}

func (a *analysis) effect(e string) {
	if e != "" && !slices.Contains(a.effects, e) {
		a.effects = append(a.effects, e)
	}
}

// script judges every command of a parsed line.
func (a *analysis) script(s *shell.Script) {
	a.s = s
	if a.roots == nil {
		a.roots = map[*shell.Command][]string{}
	}
	if n := len(s.Findings) + 2*len(s.Commands); cap(a.findings)-len(a.findings) < n {
		// About two findings a command on the corpora: grown once, not
		// doubled a dozen times on a long line.
		a.findings = slices.Grow(a.findings, n)
	}
	for _, f := range s.Findings {
		a.readOnly = false
		switch {
		case errors.Is(f.Kind, shell.ErrUncertain):
			a.add(Finding{Rule: "unknown", Level: medium, Why: f.Why})
		case errors.Is(f.Kind, shell.ErrTooDeep):
			a.add(Finding{Rule: "parse", Level: medium, Why: "could not parse: " + f.Why})
		default:
			w := f.Why
			if !strings.HasPrefix(w, "could not parse") {
				w = "could not parse: " + w
			}
			a.add(Finding{Rule: "parse", Level: medium, Why: w})
		}
	}
	for i, cmd := range s.Commands {
		a.command(s, i, cmd)
	}
	a.flows(s)
}

// wordValues returns the words' best readings.
func wordValues(ws []shell.Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Value
	}
	return out
}

// values is wordValues cut from the analysis' slab of strings (capacity
// exactly len(ws): an append copies it elsewhere).
func (a *analysis) values(ws []shell.Word) []string {
	n := len(ws)
	if n > len(a.slab) {
		if n > 64 {
			return wordValues(ws)
		}
		a.slabSize = min(max(2*a.slabSize, 16), 512) // grows with the line
		a.slab = make([]string, max(a.slabSize, n))
	}
	out := a.slab[:n:n]
	a.slab = a.slab[n:]
	for i, w := range ws {
		out[i] = w.Value
	}
	return out
}

// command judges one simple command of the line.
func (a *analysis) command(s *shell.Script, i int, cmd *shell.Command) {
	words := a.values(cmd.Words)
	a.redirects(cmd, words)
	for _, w := range cmd.Wrappers {
		if w.Dir != "" {
			// env -C DIR, sudo -D DIR: this command's relative words are
			// below DIR (its redirections are opened before, here).
			old := a.dir
			a.chdir([]shell.Word{{}, {Raw: w.Dir, Value: w.Dir, Known: !strings.HasPrefix(w.Dir, "?")}})
			defer func() { a.dir = old }()
		}
	}
	a.lookupChanged(cmd, words)
	a.setsLookup(cmd, words)
	for _, as := range cmd.Assigns {
		if !as.Value.Known {
			a.readOnly = false
		}
		if len(cmd.Words) > 0 {
			a.envAssign(as, cmd)
		}
		a.proofEnvAssign(as, cmd)
	}
	for _, w := range cmd.Wrappers {
		if w.Name == "ssh" {
			a.sshForward(append(wordValues(w.Args), wordValues(cmd.Words)...))
		}
		for _, as := range w.Env {
			a.envAssign(as, cmd)
			a.proofEnvAssign(as, cmd)
		}
		if w.User != "" || w.Remote != "" {
			// Run as another user or elsewhere: what it reads there is not
			// what this user could read here. Not proven read-only.
			a.readOnly = false
		}
	}
	if cmd.MoreArgs {
		a.readOnly = false
	}
	if len(words) == 0 {
		return
	}
	for k, w := range cmd.Words {
		if !w.Known && unknownMatters(cmd.Words[0], k, w) {
			a.readOnly = false
		}
	}
	a.proofWords(cmd)
	name := cmd.Words[0]
	base := path.Base(name.Value)
	if lvl, ok := a.c.Programs[base]; ok {
		if !lvl.Valid() || lvl.Rank() > high.Rank() {
			lvl = high // a level the judgement does not give: the highest it does
		}
		a.add(Finding{Rule: "config", Level: model.MaxRisk(lvl, low), Words: []string{name.Raw},
			Why: base + " is a program the configuration marks sensitive"})
		a.readOnly = false
	}
	if why := oddName(name.Value); why != "" {
		a.add(Finding{Rule: "opaque", Level: medium, Words: []string{name.Raw},
			Why: "the command's name holds " + why + ": it is not the program it looks like"})
		a.readOnly = false
	}
	if name.Known && name.Raw != name.Value && strings.ContainsAny(name.Raw, "$`") {
		a.add(Finding{Rule: "opaque", Level: medium, Words: []string{name.Raw},
			Why: "the command's name is hidden in a variable (" + name.Raw + " runs " + name.Value + ")"})
		a.readOnly = false
	}
	if name.Known && name.Raw != name.Value && !strings.ContainsAny(name.Raw, "$`") {
		a.add(Finding{Rule: "opaque", Level: medium, Words: []string{name.Raw},
			Why: "the command's name is written in pieces or quoted (" + name.Raw + " runs " + name.Value + "), as if to hide it"})
	}
	if r := cmd.Remote(); r != "" && len(cmd.Pipe.From) > 0 {
		a.effect(string(catalogue.Egress))
		a.egressCmd = append(a.egressCmd, r)
		a.add(Finding{Rule: "flow", Level: medium, Effect: string(catalogue.Egress), Words: []string{name.Raw},
			Why: "sends the output of the command before it to " + r})
	}
	if cmd.Opaque != nil {
		a.opaqueCommand(s, i, cmd, words)
		if cmd.Opaque.Kind == "unknown" && cmd.NameUnknown() {
			return
		}
	}
	a.throughOptions(s, i, cmd)
	a.lookup(cmd, words, 0)
	if !slices.ContainsFunc(cmd.Wrappers, func(w shell.Wrap) bool {
		// cd in a nested shell (sh -c 'cd /etc && …') moves the commands
		// after it there; run by any other wrapper it moves nothing here.
		return w.Name != "builtin" && w.Name != "command" && !strings.HasSuffix(w.Name, " -c")
	}) {
		ws := cmd.Words
		if (words[0] == "builtin" || words[0] == "command") && len(ws) > 1 {
			ws = ws[1:]
		}
		switch ws[0].Value {
		case "cd", "pushd":
			a.chdir(ws)
		case "popd":
			a.dir = "?"
		}
	}
}

// chdir follows cd and pushd: the relative words of the commands after
// them are judged where they run (cd /etc && echo x >> sudoers writes
// /etc/sudoers). A directory not certain (cd "$D", cd -, CDPATH) makes
// every later relative word not certain.
func (a *analysis) chdir(words []shell.Word) {
	var ops []shell.Word
	for _, w := range words[1:] {
		if w.Known && (w.Value == "-L" || w.Value == "-P" || w.Value == "-e" || w.Value == "-@" || w.Value == "--") {
			continue
		}
		ops = append(ops, w)
	}
	if len(ops) == 0 {
		a.dir = a.homeDir("~")
		return
	}
	w := ops[0]
	if len(ops) > 1 || w.Value == "-" || strings.HasPrefix(w.Value, "+") || strings.HasPrefix(w.Value, "-") {
		a.dir = "?"
		return
	}
	if h, ok := strings.CutPrefix(strings.Trim(w.Raw, `"`), "$HOME"); ok && (h == "" || h[0] == '/') {
		w = shell.Word{Raw: "~" + h, Value: "~" + h, Known: !strings.ContainsAny(h, "$`*?[")}
	} else if h, ok := strings.CutPrefix(strings.Trim(w.Raw, `"`), "${HOME}"); ok && (h == "" || h[0] == '/') {
		w = shell.Word{Raw: "~" + h, Value: "~" + h, Known: !strings.ContainsAny(h, "$`*?[")}
	}
	pl := a.locate(w.Raw, w.Value, w.Known)
	if !pl.known || pl.p == "" || strings.HasPrefix(pl.p, "?") || strings.HasPrefix(pl.p, "$") {
		a.dir = "?"
		return
	}
	if a.cdpath && !strings.HasPrefix(w.Value, "/") && !strings.HasPrefix(w.Value, "~") && !strings.HasPrefix(w.Value, ".") {
		// cd NAME looks NAME up in the CDPATH the line set.
		a.dir = "?"
		return
	}
	a.dir = a.homeDir(pl.p)
}

// homeDir turns ~ and ~/x into the home directory's path when it is known.
func (a *analysis) homeDir(p string) string {
	if h := a.c.Home; h != "" && strings.HasPrefix(h, "/") && (p == "~" || strings.HasPrefix(p, "~/")) {
		return path.Join(path.Clean(h), p[1:])
	}
	return p
}

// throughOptions rates a shell or interpreter started by another program
// through its options or input (find -exec sh, xargs sh -c): a way to run
// what a reader of the line does not see as a command.
func (a *analysis) throughOptions(s *shell.Script, i int, cmd *shell.Command) {
	via := ""
	for _, w := range cmd.Wrappers {
		switch w.Name {
		case "find -exec", "xargs", "parallel", "watch", "flock", "script", "trap":
			via = w.Name
		}
	}
	if via == "" && cmd.Parent >= 0 && cmd.Parent < len(s.Commands) {
		if ws := s.Commands[cmd.Parent].Words; len(ws) > 0 {
			via = ws[0].Value
		}
	}
	if via == "" {
		return
	}
	spawnsShell := slices.ContainsFunc(cmd.Wrappers, func(w shell.Wrap) bool { return strings.HasSuffix(w.Name, " -c") })
	if !spawnsShell && len(cmd.Words) > 0 {
		res := a.cat.Lookup(wordValues(cmd.Words[:1]))
		spawnsShell = res.Has(catalogue.Shell)
	}
	if spawnsShell {
		a.add(Finding{Rule: "flow", Level: medium, Effect: string(catalogue.Shell), Words: rawWords(cmd.Words),
			Why: "starts a shell or interpreter through " + via})
	}
}

func rawWords(ws []shell.Word) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.Raw)
	}
	if len(out) > 8 {
		out = out[:8]
	}
	return out
}

// opaqueCommand rates code the analysis cannot read.
func (a *analysis) opaqueCommand(s *shell.Script, i int, cmd *shell.Command, words []string) {
	o := cmd.Opaque
	a.readOnly = false
	code := clip(o.Code, 80)
	ws := []string{}
	if len(cmd.Words) > 0 {
		ws = append(ws, cmd.Words[0].Raw)
	}
	if code != "" {
		ws = append(ws, code)
	}
	switch o.Kind {
	case "script":
		// A script of the workspace (node scripts/build.js, python
		// manage.py) is the workspace's code, like make.
		if o.Code != "" && !strings.HasPrefix(o.Code, "-") && len(a.downloads) == 0 {
			pl := a.locate(o.Code, unquote(o.Code), !strings.ContainsAny(o.Code, "$`*?[~"))
			if pl.inside && pl.sens == nil {
				a.effect(string(catalogue.RunWorkspace))
				a.add(Finding{Rule: "effect", Level: low, Effect: string(catalogue.RunWorkspace), Words: ws,
					Why: "runs " + o.Code + ", a script inside the workspace"})
				return
			}
		}
		if mod, rest, ok := moduleArgs(words); ok {
			// python -m pip install …: the module is a program the
			// catalogue may know.
			if a.cat.Program(mod) != nil {
				a.lookup(cmd, append([]string{mod}, rest...), 1)
				return
			}
		}
	case "input":
		if cmd.Pipe.Len > 0 && len(cmd.Pipe.From) > 0 {
			for _, from := range cmd.Pipe.From {
				if from >= 0 && from < len(s.Commands) && len(s.Commands[from].Words) > 0 {
					fw := wordValues(s.Commands[from].Words)
					if why := a.feeds(fw); why != "" {
						a.add(Finding{Rule: "flow", Level: high, Effect: string(catalogue.Shell), Words: append(rawWords(s.Commands[from].Words), "|", cmd.Words[0].Raw),
							Why: why + " into " + cmd.Words[0].Value + ", which runs it"})
					}
				}
			}
		}
	}
	a.opaque = append(a.opaque, ws...)
	a.add(Finding{Rule: "opaque", Level: medium, Effect: string(catalogue.ExecArg), Words: ws, Why: o.Why})
}

// moduleArgs finds "-m MODULE ARGS..." of an interpreter.
func moduleArgs(words []string) (string, []string, bool) {
	for k := 1; k+1 < len(words); k++ {
		if words[k] == "-m" {
			return words[k+1], words[k+2:], true
		}
	}
	return "", nil, false
}

func unquote(s string) string { return strings.Trim(s, `'"`) }

// feeds says what a command that feeds an interpreter's input is, when
// what it gives is code from elsewhere: a download, a decoded payload.
func (a *analysis) feeds(words []string) string {
	res := a.cat.Lookup(words)
	switch {
	case res.Has(catalogue.Download):
		return "pipes code downloaded from another host"
	case decoder(words):
		return "pipes a decoded payload"
	}
	return ""
}

// decoder reports whether words decode or unpack data (a payload hidden
// from the reader of the line).
func decoder(words []string) bool {
	if len(words) == 0 {
		return false
	}
	name := path.Base(words[0])
	has := func(opts ...string) bool {
		for _, w := range words[1:] {
			if slices.Contains(opts, w) {
				return true
			}
		}
		return false
	}
	switch name {
	case "base64", "base32", "basenc":
		return has("-d", "--decode", "-D")
	case "xxd":
		return has("-r", "-revert", "-r -p")
	case "openssl":
		return has("-d", "base64", "enc")
	case "gunzip", "zcat", "bunzip2", "bzcat", "xzcat", "unxz", "zstdcat", "uudecode", "rev":
		return true
	case "gzip", "bzip2", "xz", "zstd":
		return has("-d", "--decompress", "-dc", "-cd")
	case "printf", "echo":
		for _, w := range words[1:] {
			if strings.Contains(w, `\x`) || strings.Contains(w, `\0`) {
				return true
			}
		}
	case "tr":
		return true
	}
	return false
}

// flows rates what the line does as a whole: code it downloads or
// decodes and also runs unread, secrets it reads and also sends.
func (a *analysis) flows(s *shell.Script) {
	if len(a.opaque) > 0 && len(a.downloads) > 0 {
		a.add(Finding{Rule: "flow", Level: high, Effect: string(catalogue.Download), Words: append(slices.Clone(a.downloads), a.opaque...),
			Why: "downloads from another host and runs code the analysis cannot read"})
	} else if len(a.opaque) > 0 && len(a.decodes) > 0 {
		a.add(Finding{Rule: "flow", Level: high, Effect: string(catalogue.Shell), Words: append(slices.Clone(a.decodes), a.opaque...),
			Why: "decodes a payload and runs code the analysis cannot read"})
	}
	if len(a.secretRead) > 0 && len(a.egressCmd) > 0 {
		a.add(Finding{Rule: "flow", Level: high, Effect: string(catalogue.Egress), Words: append(slices.Clone(a.secretRead), a.egressCmd...),
			Why: "reads secrets and sends data to another host"})
	}
}

// envAssign rates an assignment to a variable that makes programs run
// a command or load code (GIT_SSH_COMMAND, LD_PRELOAD, PAGER ...).
func (a *analysis) envAssign(as shell.Assign, cmd *shell.Command) {
	n := as.Name
	if as.Value.Known && plainPaging(n, as.Value.Value) {
		// GH_PAGER=cat, PAGER=, LESS=-R: what agents set so that nothing
		// waits at a terminal; the pager only prints what it is given.
		a.add(Finding{Rule: "flow", Level: low, Effect: string(catalogue.Read), Words: []string{assignWord(as)},
			Why: n + " only pages " + commandName(cmd) + "'s output"})
		return
	}
	if strings.HasPrefix(n, "GIT_TRACE") || n == "SSLKEYLOGFILE" || n == "HISTFILE" {
		// GIT_TRACE*=PATH: git appends its trace to that file (a number
		// or a boolean is a descriptor or stderr); SSLKEYLOGFILE gets the
		// TLS keys, HISTFILE the shell's history.
		v := as.Value.Value
		if !as.Value.Known && strings.HasPrefix(as.Value.Raw, "~") && !strings.ContainsAny(as.Value.Raw, "$`") {
			v = as.Value.Raw
		}
		if !as.Value.Known && v != as.Value.Raw {
			a.readOnly = false
			return
		}
		if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || n != "GIT_TRACE" && !strings.HasPrefix(n, "GIT_TRACE") && v != "" {
			a.readOnly = false
			a.effect(string(catalogue.Write))
			pl := a.locate(as.Value.Raw, v, true)
			pl.word = assignWord(as)
			a.rateTarget(catalogue.Write, pl, false, "")
		}
		return
	}
	if why, ok := configVars[n]; ok || strings.HasPrefix(n, "NPM_CONFIG_") || strings.HasPrefix(strings.ToUpper(n), "NPM_CONFIG_") {
		if !ok {
			why = "npm's configuration (script-shell, registry, hooks)"
		}
		a.readOnly = false
		lvl := medium
		if n == "GOFLAGS" && !strings.Contains(as.Value.Value, "exec") && !strings.Contains(as.Value.Value, "overlay") && as.Value.Known {
			lvl = low
		} else if as.Value.Known && n != "JAVA_TOOL_OPTIONS" && n != "_JAVA_OPTIONS" && n != "JDK_JAVA_OPTIONS" && n != "GOFLAGS" {
			if pl := a.locate(as.Value.Raw, as.Value.Value, true); pl.inside && pl.sens == nil && pl.extra == "" {
				lvl = low
			}
		}
		a.add(Finding{Rule: "flow", Level: lvl, Effect: string(catalogue.ExecArg), Words: []string{assignWord(as)},
			Why: n + " makes " + commandName(cmd) + " load " + why + " from where the line says, which can run commands"})
		return
	}
	cmdVar := false
	switch n {
	case "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "PAGER", "MANPAGER", "GIT_EDITOR", "EDITOR", "VISUAL",
		"GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_SEQUENCE_EDITOR",
		"GIT_PROXY_COMMAND", "RSYNC_RSH", "PROMPT_COMMAND", "LESSOPEN", "LESSCLOSE", "SYSTEMD_PAGER", "BROWSER", "GH_PAGER", "GH_EDITOR", "GH_BROWSER", "AWS_PAGER", "BAT_PAGER", "KUBECTL_EXTERNAL_DIFF", "KUBE_EDITOR":
		cmdVar = true
	case "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "BASH_ENV", "ENV", "PYTHONSTARTUP",
		"NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "PYTHONPATH", "PERL5LIB", "RUBYLIB", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "PATH",
		"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_DIR", "GIT_WORK_TREE", "LESS", "LESSKEYIN", "LESSKEY", "LESSKEY_CONTENT", "LESSEDIT", "SYSTEMD_LESS", "MORE":
		a.readOnly = false
		a.add(Finding{Rule: "flow", Level: medium, Effect: string(catalogue.ExecArg), Words: []string{assignWord(as)},
			Why: n + " changes what code the command loads or runs"})
		return
	}
	if !cmdVar && !strings.HasPrefix(n, "GIT_CONFIG_") {
		return
	}
	a.readOnly = false
	lvl := medium
	why := n + " makes " + commandName(cmd) + " run a command given in the environment"
	if as.Value.Known && cmdVar {
		if inner := a.innerLine(as.Value.Value); inner.Rank() > lvl.Rank() {
			lvl = inner
			why += " that is itself " + string(inner)
		}
	}
	a.add(Finding{Rule: "flow", Level: lvl, Effect: string(catalogue.ExecArg), Words: []string{assignWord(as)}, Why: why})
}

func commandName(cmd *shell.Command) string {
	if len(cmd.Words) == 0 {
		return "the command"
	}
	return cmd.Words[0].Value
}

// innerLine judges a command line given in a word (an option's value, a
// variable) and returns its level; its findings join this analysis with
// the words that run it.
func (a *analysis) innerLine(line string) model.RiskLevel {
	if a.inner >= maxInner {
		a.add(Finding{Rule: "opaque", Level: medium, Words: []string{line}, Why: "commands given in options nested too deep to read"})
		return medium
	}
	s, err := shell.Parse(line, shell.Options{})
	if err != nil || s == nil {
		a.add(Finding{Rule: "parse", Level: medium, Words: []string{line}, Why: "could not parse the command given in an option: " + errText(err)})
		return medium
	}
	defer s.Release()
	sub := newAnalysis(false)
	defer release(sub)
	sub.c, sub.cat, sub.readOnly, sub.inner, sub.noWorkspace = a.c, a.cat, true, a.inner+1, a.noWorkspace
	sub.script(s)
	lvl := low
	for _, f := range sub.findings {
		lvl = model.MaxRisk(lvl, f.Level)
		a.add(f)
	}
	for _, e := range sub.effects {
		a.effect(e)
	}
	a.downloads = append(a.downloads, sub.downloads...)
	a.decodes = append(a.decodes, sub.decodes...)
	a.secretRead = append(a.secretRead, sub.secretRead...)
	a.egressCmd = append(a.egressCmd, sub.egressCmd...)
	a.opaque = append(a.opaque, sub.opaque...)
	// A shell or interpreter run through an option: its code runs with
	// nothing on the line looking like a command.
	for _, c := range s.Commands {
		if len(c.Words) == 0 {
			continue
		}
		if r := a.cat.Lookup(wordValues(c.Words[:1])); r.Has(catalogue.Shell) {
			lvl = model.MaxRisk(lvl, medium)
		}
	}
	return lvl
}

func errText(err error) string {
	if err == nil {
		return "no command"
	}
	return err.Error()
}

// printers only print their operands: what an operand holds does not
// change what they do.
var printers = map[string]bool{"echo": true, "basename": true, "dirname": true, "true": true, "false": true, ":": true}

// unknownMatters says whether a word not certain keeps a command from
// being proven read-only. It does not for the operands of a program that
// only prints them, nor for the value of a --name=VALUE option (it stays
// that option's value, whatever it expands to). Anything else might
// expand to an option that writes (a file named "-o" matched by *).
func unknownMatters(name shell.Word, k int, w shell.Word) bool {
	if k == 0 || !name.Known {
		return true
	}
	if printers[name.Value] {
		return false
	}
	if i := strings.IndexByte(w.Raw, '='); strings.HasPrefix(w.Raw, "--") && i > 2 && !strings.ContainsAny(w.Raw[:i], "$`*?[{~'\"\\") {
		return false
	}
	return true
}

// pagerVars hold the command a program pipes its output through.
var pagerVars = map[string]bool{"PAGER": true, "GIT_PAGER": true, "GH_PAGER": true, "MANPAGER": true,
	"SYSTEMD_PAGER": true, "AWS_PAGER": true, "BAT_PAGER": true}

// plainPaging reports whether setting name to value only changes how
// output is paged: a pager variable set to nothing, cat, or less or more
// with display options only, or less's LESS/MORE options set to display
// options only. Anything else (a command, an option that reads a file or
// runs something: -k, +cmd, -o, -#) is judged as a command given in the
// environment.
func plainPaging(name, value string) bool {
	f := strings.Fields(value)
	switch {
	case pagerVars[name]:
		if len(f) == 0 {
			return true
		}
		if f[0] != "cat" && f[0] != "less" && f[0] != "more" {
			return false
		}
		return displayOptions(f[1:], f[0] != "cat")
	case name == "LESS" || name == "MORE" || name == "SYSTEMD_LESS":
		return displayOptions(f, true)
	}
	return false
}

// displayOptions: every word is a cluster of less's display-only flags
// (-R -F -X -S -i ...), with or without its dash; none for cat.
func displayOptions(words []string, less bool) bool {
	for _, w := range words {
		if !less {
			return false
		}
		w = strings.TrimPrefix(w, "-")
		if w == "" {
			return false
		}
		for _, r := range w {
			if !strings.ContainsRune("RFXSiIMmNnEeKQqsJcwWgGr", r) {
				return false
			}
		}
	}
	return true
}

// builtins are the shell's own commands: PATH does not choose them.
var builtins = map[string]bool{"cd": true, "echo": true, "printf": true, "read": true, "export": true, "declare": true,
	"typeset": true, "local": true, "readonly": true, "set": true, "unset": true, "shift": true, "test": true, "[": true,
	"true": true, "false": true, ":": true, "eval": true, "exec": true, "source": true, ".": true, "alias": true,
	"unalias": true, "hash": true, "type": true, "command": true, "builtin": true, "let": true, "return": true,
	"exit": true, "trap": true, "wait": true, "pwd": true, "pushd": true, "popd": true, "dirs": true,
	"umask": true, "ulimit": true, "getopts": true, "mapfile": true, "readarray": true, "shopt": true}

// systemBin are the directories the system's programs are found in.
var systemBin = map[string]bool{"/bin": true, "/sbin": true, "/usr/bin": true, "/usr/sbin": true,
	"/usr/local/bin": true, "/usr/local/sbin": true, "/opt/homebrew/bin": true, "/snap/bin": true, "$PATH": true, "${PATH}": true}

// setsLookup notes a variable that chooses where commands (PATH) or
// directories (CDPATH) are found, set for the rest of the line: by a bare
// assignment, export and the like, printf -v, or read.
func (a *analysis) setsLookup(cmd *shell.Command, words []string) {
	note := func(name, raw string, known bool) {
		switch name {
		case "PATH":
			if !known {
				raw = "?"
			}
			a.lookupVar, a.lookupVal = name, raw
		case "CDPATH":
			a.cdpath = true
		}
	}
	bare := len(words) == 0
	if !bare {
		switch words[0] {
		case "export", "declare", "typeset", "local", "readonly":
			bare = true
		}
	}
	if bare {
		for _, as := range cmd.Assigns {
			note(as.Name, as.Value.Value, as.Value.Known)
		}
	}
	if len(words) == 0 {
		return
	}
	switch words[0] {
	case "printf":
		for k := 1; k+1 < len(words); k++ {
			if words[k] == "-v" {
				note(words[k+1], "?", false)
			}
		}
	case "read", "mapfile", "readarray":
		for k := 1; k < len(words); k++ {
			w := words[k]
			if strings.HasPrefix(w, "-") {
				if strings.ContainsAny(w[len(w)-1:], "adpnNtuCcOs") && k+1 < len(words) {
					k++ // an option with a value
				}
				continue
			}
			note(w, "?", false)
		}
	}
}

// lookupChanged rates a command whose name PATH, set earlier in the line,
// finds: it may not be the program the catalogue knows.
func (a *analysis) lookupChanged(cmd *shell.Command, words []string) {
	if a.lookupVar == "" || len(words) == 0 || strings.Contains(words[0], "/") || builtins[words[0]] {
		return
	}
	a.readOnly = false
	if a.lookupMemo.v != a.lookupVar || a.lookupMemo.val != a.lookupVal || a.lookupMemo.set == "" {
		// Read once for every command the changed PATH finds, not once
		// each.
		lvl := low
		for d := range strings.SplitSeq(a.lookupVal, ":") {
			if !systemBin[strings.TrimSuffix(d, "/")] {
				lvl = medium
			}
		}
		a.lookupMemo = lookupMemo{v: a.lookupVar, val: a.lookupVal, set: a.lookupVar + "=" + a.lookupVal, lvl: lvl, names: map[string]bool{}}
	}
	m := &a.lookupMemo
	if m.names[words[0]] {
		// The same finding as for this name before: only the first of
		// equal findings is kept, so it is not built again.
		return
	}
	m.names[words[0]] = true
	a.add(Finding{Rule: "unknown", Level: m.lvl, Effect: string(catalogue.ExecArg), Words: []string{m.set, words[0]},
		Why: a.lookupVar + " was changed earlier in the line: " + words[0] + " may be a program from " + a.lookupVal + ", not the one the catalogue knows"})
}

// lookupMemo is what lookupChanged read of the variable set last.
type lookupMemo struct {
	v, val, set string
	lvl         model.RiskLevel
	names       map[string]bool // the names already found with this value
}

// configVars choose a configuration a program loads, which can name
// commands to run (git's core.pager and core.fsmonitor, a kubeconfig's
// exec plugin, aws' credential_process, a JVM agent).
var configVars = map[string]string{
	"XDG_CONFIG_HOME":             "its configuration (git's core.pager, core.fsmonitor)",
	"XDG_CONFIG_DIRS":             "its configuration",
	"HOME":                        "its configuration (~/.gitconfig and the like)",
	"KUBECONFIG":                  "a kubeconfig (its exec credential plugin is a command)",
	"AWS_CONFIG_FILE":             "an AWS configuration (credential_process is a command)",
	"AWS_SHARED_CREDENTIALS_FILE": "AWS credentials (credential_process is a command)",
	"AWS_PROFILE":                 "an AWS profile (its credential_process is a command)",
	"JAVA_TOOL_OPTIONS":           "JVM options (-javaagent loads code)",
	"_JAVA_OPTIONS":               "JVM options (-javaagent loads code)",
	"JDK_JAVA_OPTIONS":            "JVM options (-javaagent loads code)",
	"DOCKER_CONFIG":               "Docker's configuration (credential helpers are commands)",
	"GNUPGHOME":                   "GnuPG's configuration",
	"PIP_CONFIG_FILE":             "pip's configuration",
	"CARGO_HOME":                  "cargo's configuration (runners and wrappers)",
	"GOENV":                       "go's environment file (GOFLAGS -toolexec)",
	"GOFLAGS":                     "go flags (-toolexec, -exec run commands)",
	"GIT_CONFIG":                  "a git configuration (core.pager, core.fsmonitor)",
}

// oddName describes the characters of a program name that are invisible
// or not ASCII (a zero-width space, a no-break space, NEL, a bidi control,
// a Cyrillic look-alike), "" when there is none.
func oddName(name string) string {
	var odd []string
	for _, r := range name {
		if r > 0x20 && r < 0x7f {
			continue
		}
		kind := "a character that is not ASCII"
		switch {
		case r == 0x200b || r == 0x200c || r == 0x200d || r == 0x2060 || r == 0xfeff || r == 0xad:
			kind = "an invisible character"
		case r == 0xa0 || r == 0x85 || r == 0x2007 || r == 0x202f || r < 0x20 || r == 0x7f || r >= 0x2000 && r <= 0x200a || r == 0x3000:
			kind = "a space or control character"
		case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f:
			kind = "a bidirectional control"
		}
		odd = append(odd, fmt.Sprintf("%s (U+%04X)", kind, r))
		if len(odd) == 3 {
			break
		}
	}
	return strings.Join(odd, ", ")
}
