package risk

import (
	"maps"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk/catalogue"
	"github.com/approve-tui/approve-tui/shell"
)

// baseLevel is an effect's level when no target says more. Effects on
// paths (read, write, delete, privilege) are rated by their targets.
func baseLevel(e catalogue.Effect) model.RiskLevel {
	switch e {
	case catalogue.Delete, catalogue.Privilege, catalogue.ServiceControl, catalogue.ProcessControl,
		catalogue.InfraApply, catalogue.Publish, catalogue.HistoryRewrite, catalogue.NetworkListen,
		catalogue.NetworkConfig:
		return medium
	case catalogue.InfraDestroy, catalogue.HistoryErase:
		return high
	}
	return low
}

// pathEffects are rated by the place of their targets.
var pathEffects = []catalogue.Effect{catalogue.Read, catalogue.Write, catalogue.Delete, catalogue.Privilege}

var networkPrograms = []string{"nc", "ncat", "netcat", "socat", "telnet", "openssl", "cryptcat", "pwncat"}

// lookup judges one command's words with the catalogue. depth counts the
// commands given in the words of others (git push --exec).
func (a *analysis) lookup(cmd *shell.Command, words []string, depth int) {
	// The catalogue's result in a buffer of the analysis, one for each
	// lookup under way (this one looks up the commands it runs in turn).
	if a.lookups == len(a.results) {
		a.results = append(a.results, new(catalogue.Result))
	}
	res := a.results[a.lookups]
	a.lookups++
	defer func() { a.lookups-- }()
	a.cat.LookupInto(words, res)
	if !res.ReadOnly && !a.provenAnyway(cmd, words, res) {
		a.readOnly = false
	}
	prog := res.Program
	if prog == "" {
		a.unknownProgram(cmd, words)
		return
	}
	for _, e := range res.Effects {
		a.effect(string(e))
	}
	for _, u := range res.Unknown {
		if strings.HasPrefix(u, "no operation of") {
			// A cloud CLI's operation the catalogue does not know: it may
			// destroy as well as look; not knowing is not harmless.
			a.add(Finding{Rule: "unknown", Level: medium, Words: words[:min(len(words), 4)],
				Why: u + ": what it does to the account's resources is not known"})
		}
	}
	if res.Has(catalogue.Download) {
		a.downloads = append(a.downloads, words[0])
	}
	if decoder(words) {
		a.decodes = append(a.decodes, words[0])
	}
	sub := strings.Join(res.Path, " ")
	recursive := recursiveFlag(words)

	// Targets on paths, each rated by effect and place.
	rated := map[catalogue.Effect]bool{}
	if n := len(res.Targets); n > 64 && len(a.placed) < n {
		// Thousands of operands: the maps of places grown once.
		grown := make(map[locKey]place, len(a.placed)+n)
		maps.Copy(grown, a.placed)
		a.placed = grown
		if a.rated == nil {
			a.rated = make(map[ratedPlace]bool, n)
		}
	}
	for _, t := range res.Targets {
		if t.Kind != catalogue.KindPath && t.Kind != catalogue.KindRemote {
			continue
		}
		if t.Kind == catalogue.KindRemote && remoteWord(t.Word) {
			continue
		}
		effs := t.Effects
		if len(effs) == 0 {
			effs = res.Effects
		}
		for _, pl := range a.places(cmd, t.Word) {
			for _, e := range effs {
				if !slices.Contains(pathEffects, e) {
					continue
				}
				rated[e] = true
				a.rateTarget(e, pl, recursive, prog)
			}
		}
	}
	// xargs and the like add operands read from the input: not known.
	if cmd != nil && cmd.MoreArgs && cmd.Parent < 0 {
		for _, e := range []catalogue.Effect{catalogue.Delete, catalogue.Write, catalogue.Privilege} {
			if res.Has(e) && !rated[e] {
				rated[e] = true
				a.rateTarget(e, place{word: "(words from its input)", p: "?"}, recursive, prog)
			}
		}
	}
	// An option that writes (sed -i, perl -i) writes the operands when no
	// operand is labelled as the one written.
	if res.Has(catalogue.Write) && !rated[catalogue.Write] && !slices.ContainsFunc(res.Targets, func(t catalogue.Target) bool {
		return slices.Contains(t.Effects, catalogue.Write) || t.Kind != catalogue.KindPath && t.Kind != catalogue.KindScript && t.Kind != catalogue.KindPattern
	}) {
		for _, t := range res.Targets {
			if t.Kind == catalogue.KindPath && t.From == "arg" {
				rated[catalogue.Write] = true
				a.rateTarget(catalogue.Write, a.locate(t.Word, t.Word, a.wordKnown(cmd, t.Word)), false, prog)
			}
		}
	}
	// Options and operands whose meaning the catalogue does not split.
	a.special(cmd, words, res, rated)
	a.proofSecrets(cmd, words, res)

	for _, f := range res.Findings {
		lvl := baseLevel(f.Effect)
		if slices.Contains(pathEffects, f.Effect) && rated[f.Effect] {
			lvl = low
		}
		if optionRuns(f) {
			lvl = a.optionRunsLevel(cmd, f, res)
		}
		lvl, why := a.adjust(prog, sub, words, f, lvl)
		if why == "" {
			why = f.Why
		}
		a.add(Finding{Rule: "effect", Level: lvl, Effect: string(f.Effect), Words: a.asWritten(cmd, f.Words), Why: why})
	}
	if res.Has(catalogue.Egress) {
		a.egress(cmd, words, res)
	}
	// A host name or URL built from a command's output sends that output
	// to another host (a DNS query, a request's path).
	for _, t := range res.Targets {
		if t.Kind != catalogue.KindHost && t.Kind != catalogue.KindURL && !(t.Kind == catalogue.KindRemote && remoteWord(t.Word)) {
			continue
		}
		if w, ok := a.shellWord(cmd, t.Word); ok && !w.Known && strings.Contains(w.Why, "substitution") {
			a.effect(string(catalogue.Egress))
			a.egressCmd = append(a.egressCmd, words[0])
			a.add(Finding{Rule: "flow", Level: medium, Effect: string(catalogue.Egress), Words: []string{words[0], w.Raw},
				Why: words[0] + " sends the output of a command to another host in " + w.Raw})
		}
	}
	if slices.Contains(networkPrograms, path.Base(words[0])) || prog == "socat" {
		a.networkShell(cmd, words, res)
	}
	for _, t := range res.Targets {
		switch t.Kind {
		case catalogue.KindShell:
			lvl := a.innerLine(t.Word)
			a.add(Finding{Rule: "flow", Level: model.MaxRisk(lvl, medium), Effect: string(catalogue.ExecArg), Words: a.asWritten(cmd, []string{fromWord(t.From, words), t.Word}),
				Why: prog + " runs a command line given in " + describeFrom(t.From)})
		case catalogue.KindCode:
			a.opaque = append(a.opaque, t.Word)
			lvl := medium
			why := prog + " runs code given in " + describeFrom(t.From) + ", which the analysis cannot read"
			if reverseShellCode(t.Word) {
				lvl, why = high, prog+" runs code that connects a shell to the network"
			}
			a.add(Finding{Rule: "opaque", Level: lvl, Effect: string(catalogue.ExecArg), Words: a.asWritten(cmd, []string{fromWord(t.From, words), t.Word}), Why: why})
		case catalogue.KindCommand:
			if isChildOf(cmd, t.Word) {
				continue // find's: shell/ made it a command of its own
			}
			if t.From == "arg" && prog == "command" && slices.ContainsFunc(words[1:], func(w string) bool { return w == "-v" || w == "-V" }) {
				continue // command -v NAME only says what NAME is
			}
			if t.From == "arg" {
				// A command the shell parser does not unwrap (strace,
				// firejail, taskset ...): judged as one.
				if depth >= maxInner || len(t.Words) == 0 {
					a.add(Finding{Rule: "opaque", Level: medium, Words: t.Words, Why: "commands run by other commands nested too deep to read"})
					continue
				}
				if r := a.cat.Lookup(t.Words[:1]); r.Has(catalogue.Shell) {
					a.add(Finding{Rule: "flow", Level: medium, Effect: string(catalogue.Shell), Words: append([]string{words[0]}, t.Words...),
						Why: "starts a shell or interpreter through " + prog})
				}
				a.lookup(nil, t.Words, depth+1)
				continue
			}
			if depth >= maxInner {
				a.add(Finding{Rule: "opaque", Level: medium, Words: t.Words, Why: "commands given in options nested too deep to read"})
				continue
			}
			a.add(Finding{Rule: "flow", Level: medium, Effect: string(catalogue.ExecArg), Words: append([]string{t.From}, t.Words...),
				Why: prog + " runs a command given in " + describeFrom(t.From)})
			if len(t.Words) > 0 && !strings.HasPrefix(t.From, "-exec") && !strings.HasPrefix(t.From, "-ok") {
				a.lookup(cmd, t.Words, depth+1)
			}
		case catalogue.KindScript:
			a.script1(prog, t.Word, a.wordKnown(cmd, t.Word))
		}
	}
	if cmd != nil && cmd.Opaque == nil && (res.Has(catalogue.Shell) || res.Has(catalogue.ExecArg)) {
		for _, r := range cmd.Redirs {
			if r.Here {
				a.opaque = append(a.opaque, r.Target.Raw)
				a.add(Finding{Rule: "opaque", Level: medium, Effect: string(catalogue.ExecArg), Words: []string{words[0], r.Op + " " + r.Target.Raw},
					Why: prog + " reads commands it can run from a here-document, which the analysis does not read"})
				break
			}
		}
	}
	if cmd != nil && cmd.Opaque != nil && cmd.Opaque.Kind == "inline" && reverseShellCode(cmd.Opaque.Code) {
		a.add(Finding{Rule: "flow", Level: high, Effect: string(catalogue.NetworkListen), Words: []string{words[0], cmd.Opaque.Code},
			Why: "runs code that connects a shell to the network (a reverse or bind shell)"})
	}
}

func describeFrom(from string) string {
	if from == "" || from == "arg" {
		return "its words"
	}
	return from
}

// isChildOf: for find -exec, the shell parser made the command run a
// command of its own (judged there).
func isChildOf(cmd *shell.Command, _ string) bool {
	return cmd != nil && len(cmd.Words) > 0 && (cmd.Words[0].Value == "find" || path.Base(cmd.Words[0].Value) == "find")
}

// wordKnown says whether the first of cmd's words whose value is value
// is certain (true when none is).
func (a *analysis) wordKnown(cmd *shell.Command, value string) bool {
	if w, ok := a.shellWord(cmd, value); ok {
		return w.Known
	}
	return true
}

// shellWord finds the first of cmd's words whose value is value. A long
// command's words are indexed once (rm with thousands of operands asks
// for each).
func (a *analysis) shellWord(cmd *shell.Command, value string) (shell.Word, bool) {
	if cmd == nil {
		return shell.Word{}, false
	}
	if len(cmd.Words) <= 16 {
		for _, w := range cmd.Words {
			if w.Value == value {
				return w, true
			}
		}
		return shell.Word{}, false
	}
	if a.indexed != cmd {
		a.indexed, a.wordIndex = cmd, make(map[string]int, len(cmd.Words))
		for i, w := range cmd.Words {
			if _, ok := a.wordIndex[w.Value]; !ok {
				a.wordIndex[w.Value] = i
			}
		}
	}
	if i, ok := a.wordIndex[value]; ok {
		return cmd.Words[i], true
	}
	return shell.Word{}, false
}

// remoteWord: host:path (scp, rsync), not a local path.
func remoteWord(w string) bool {
	i := strings.IndexByte(w, ':')
	if i <= 0 {
		return strings.HasPrefix(w, "rsync://")
	}
	return !strings.Contains(w[:i], "/")
}

func recursiveFlag(words []string) bool {
	for _, w := range words[1:] {
		if w == "--recursive" || w == "--no-preserve-root" {
			return true
		}
		if len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.ContainsAny(w[1:], "rR") {
			return true
		}
	}
	return false
}

// rateTarget adds the finding for effect e on a path at pl.
func (a *analysis) rateTarget(e catalogue.Effect, pl place, recursive bool, prog string) {
	switch {
	case pl.harmless:
		return
	case e == catalogue.Read:
		if pl.sens != nil && pl.sens.secret || pl.extra != "" {
			a.secretRead = append(a.secretRead, pl.word)
			a.add(Finding{Rule: pl.rule(), Level: medium, Effect: string(e), Words: []string{pl.word}, Why: "reads " + pl.word + ", " + pl.describe()})
		}
		return
	}
	// The same effect on the same place gives the same finding, of which
	// only the first is kept: it is not built again (rm's thousand
	// operands that are one path).
	key := ratedPlace{e, recursive, pl}
	if a.rated[key] {
		return
	}
	if a.rated == nil {
		a.rated = map[ratedPlace]bool{}
	}
	a.rated[key] = true
	var verb string
	switch e {
	case catalogue.Write:
		verb = "writes"
	case catalogue.Delete:
		verb = "deletes"
	case catalogue.Privilege:
		verb = "changes the owner or mode of"
	}
	var why string
	lvl := low
	switch {
	case pl.net:
		lvl, why = high, verb+" "+pl.word+", a network connection"
	case pl.device:
		lvl, why = high, verb+" "+pl.word+", a disk device (its data is lost)"
	case pl.sens != nil || pl.extra != "":
		lvl = high
		if pl.sens != nil && pl.sens.history && e != catalogue.Privilege {
			a.effect(string(catalogue.HistoryErase))
			e = catalogue.HistoryErase
			why = verb + " " + pl.word + ", " + pl.describe() + " (erases a record of what was done)"
		}
	case pl.inside:
		lvl = low
	case e == catalogue.Delete && pl.tmp:
		lvl = medium
	case e == catalogue.Delete && !pl.known:
		lvl = medium
		if recursive {
			lvl = high
		}
	case e == catalogue.Delete:
		lvl = high
	case pl.tmp:
		lvl = low
	default: // write or privilege outside the workspace, or not certain where
		lvl = medium
		if recursive && e == catalogue.Privilege {
			lvl = high
		}
	}
	if why == "" {
		why = verb + " " + pl.word + ", " + pl.describe()
	}
	a.add(Finding{Rule: pl.rule(), Level: lvl, Effect: string(e), Words: []string{pl.word}, Why: why})
}

// ratedPlace is an effect on a place rateTarget has rated.
type ratedPlace struct {
	e         catalogue.Effect
	recursive bool
	pl        place
}

// rule names what made a place matter: the operator's configuration
// ("config") or the built-in targets and the workspace ("target").
func (pl place) rule() string {
	if pl.extra != "" && pl.sens == nil && !pl.device && !pl.net {
		return "config"
	}
	return "target"
}

// unknownProgram: a program the catalogue does not describe is never
// proven read-only, and nothing says what it does to its operands; it is
// LOW unless an operand is a sensitive target, which it may write.
func (a *analysis) unknownProgram(cmd *shell.Command, words []string) {
	a.readOnly = false
	a.add(Finding{Rule: "unknown", Level: low, Words: []string{words[0]},
		Why: words[0] + " is not in the catalogue: what it does is not known"})
	if strings.Contains(words[0], "/") && !systemBin[path.Dir(words[0])] {
		// A program at a path: outside the workspace and the system's
		// directories (/tmp/ls, ~/.cache/x) it may be one the agent wrote.
		if pl := a.locate(words[0], words[0], a.wordKnown(cmd, words[0])); !pl.inside {
			a.opaque = append(a.opaque, words[0])
			a.add(Finding{Rule: "opaque", Level: medium, Effect: string(catalogue.ExecArg), Words: []string{words[0]},
				Why: "runs " + words[0] + ", a program " + pl.describe() + " (not the workspace's, not the system's)"})
		}
	}
	for _, w := range words[1:] {
		if w == "" || strings.HasPrefix(w, "-") && !strings.Contains(w, "=") {
			continue
		}
		v := w
		if i := strings.IndexByte(w, '='); i > 0 && strings.HasPrefix(w, "-") {
			v = w[i+1:]
		}
		if !strings.ContainsAny(v, "/~.") && !strings.HasPrefix(v, "$") {
			continue
		}
		pl := a.locate(w, v, a.wordKnown(cmd, w))
		if pl.sens != nil || pl.extra != "" || pl.device {
			a.add(Finding{Rule: "target", Level: high, Effect: string(catalogue.Write), Words: []string{w},
				Why: words[0] + ", a program not in the catalogue, may change " + w + ", " + pl.describe()})
		}
	}
}

// The analysis' regexps are compiled at their first use (lazyRegexp), not
// when a process starts.
var protectedBranch = lazyRegexp(`^(?:refs/heads/)?(?:main|master|trunk|develop|release[-/].*|release|prod|production|stable|gh-pages)$`)

// pushRefs returns the branch names a git push names (refspec
// destinations), with "+" or ":" kept off.
func pushRefs(words []string) []string {
	var out []string
	pos := 0
	for i := 2; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "-") {
			if w == "-o" || w == "--push-option" || w == "--repo" || w == "--receive-pack" || w == "--exec" {
				i++
			}
			continue
		}
		pos++
		if pos == 1 {
			continue // the remote
		}
		w = strings.TrimPrefix(w, "+")
		if j := strings.LastIndexByte(w, ':'); j >= 0 {
			w = w[j+1:]
		}
		out = append(out, w)
	}
	return out
}

// adjust refines an effect's level for the program where the catalogue's
// effect alone says too much or too little.
func (a *analysis) adjust(prog, sub string, words []string, f catalogue.Finding, lvl model.RiskLevel) (model.RiskLevel, string) {
	if prog == "git" {
		switch {
		case f.Effect == catalogue.Delete && sub == "restore" && slices.Contains(words[2:], "."):
			return medium, "discards every change in the working tree"
		case sub == "push":
			refs := pushRefs(words)
			shared := slices.ContainsFunc(refs, protectedBranch().MatchString)
			if slices.Contains(words, "--all") || slices.Contains(words, "--mirror") || slices.Contains(words, "--branches") {
				refs, shared = append(refs, "every branch"), true
			}
			switch f.Effect {
			case catalogue.Publish:
				if shared {
					return medium, "pushes to " + strings.Join(refs, ", ") + ", a shared branch"
				}
				return low, "pushes commits to a branch of the remote"
			case catalogue.HistoryRewrite:
				if shared {
					return high, "force-pushes to " + strings.Join(refs, ", ") + ", a shared branch: overwrites its history for everyone"
				}
				if len(refs) == 0 {
					return medium, "force-pushes the current branch (which may be shared)"
				}
				return medium, "force-pushes to " + strings.Join(refs, ", ") + ", overwriting the remote branch's history"
			case catalogue.Delete:
				if shared {
					return high, "deletes " + strings.Join(refs, ", ") + ", a shared branch, on the remote"
				}
			}
		case f.Effect == catalogue.HistoryRewrite && (sub == "rebase" || sub == "commit" || sub == "pull"):
			return low, "rewrites local commits (nothing published changes without a force push)"

		case f.Effect == catalogue.Delete && (sub == "checkout" || sub == "switch"):
			if !slices.ContainsFunc(words[2:], func(w string) bool {
				return w == "--" || w == "." || w == "-f" || w == "--force" || w == "--discard-changes"
			}) {
				return low, "switches branches"
			}
			return medium, "discards changes in the working tree"
		}
	}
	if (prog == "docker" || prog == "podman") && (f.Effect == catalogue.Delete || f.Effect == catalogue.InfraDestroy) {
		all := slices.ContainsFunc(words, func(w string) bool {
			return w == "--volumes" || w == "--all" || strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "a")
		})
		volume := len(words) > 2 && words[1] == "volume" && (words[2] == "prune" || words[2] == "rm" || words[2] == "remove")
		switch {
		case volume, sub == "system prune" && all, sub == "volume prune", sub == "volume rm", sub == "system reset", strings.HasPrefix(sub, "volume") && f.Effect == catalogue.Delete:
			return high, prog + " " + sub + ": deletes volumes or every unused image and container (their data is lost)"
		}
	}
	if prog == "docker" && strings.Contains(strings.Join(words, " "), "system reset") {
		return high, words[0] + " system reset: deletes every container, image and volume"
	}
	if f.Effect == catalogue.Write && (prog == "go" && sub == "env" || prog == "npm" && strings.HasPrefix(sub, "config") || prog == "pip" && sub == "config") {
		return medium, prog + " " + sub + ": changes the tool's configuration for every later command (a registry, shell or flags there choose what later builds and installs run)"
	}
	if prog == "npm" && (sub == "audit fix" || sub == "audit" && slices.Contains(words, "--fix")) && f.Effect == catalogue.Download {
		return medium, "installs the versions the registry chooses and rewrites package.json and the lock file (install scripts run)"
	}
	if f.Effect == catalogue.ProcessControl && (prog == "kill") {
		for _, w := range words[1:] {
			if w == "-1" || w == "1" {
				return high, "signals every process (or init)"
			}
		}
		return medium, ""
	}
	return lvl, ""
}

// special reads operands and option values the catalogue does not split:
// dd's if=/of=, chmod modes, chown owners, SQL and database commands, git
// -c keys.
func (a *analysis) special(cmd *shell.Command, words []string, res *catalogue.Result, rated map[catalogue.Effect]bool) {
	prog := res.Program
	switch prog {
	case "dd":
		for _, w := range words[1:] {
			if v, ok := strings.CutPrefix(w, "of="); ok {
				rated[catalogue.Write] = true
				a.rateTarget(catalogue.Write, a.locate(v, v, a.wordKnown(cmd, w)), false, prog)
			}
			if v, ok := strings.CutPrefix(w, "if="); ok {
				a.rateTarget(catalogue.Read, a.locate(v, v, a.wordKnown(cmd, w)), false, prog)
			}
		}
	case "find":
		roots := findRoots(words)
		if cmd != nil {
			a.roots[cmd] = roots
		}
		if res.Has(catalogue.Delete) {
			rated[catalogue.Delete] = true
			for _, r := range roots {
				a.rateTarget(catalogue.Delete, a.locate(r, r, a.wordKnown(cmd, r)), true, prog)
			}
		}
	case "ssh":
		a.sshForward(words[1:])
	case "truncate":
		zero := false
		for k, w := range words[1:] {
			if w == "--size=0" || w == "-s0" || (w == "-s" || w == "--size") && k+2 < len(words) && words[k+2] == "0" {
				zero = true
			}
		}
		if zero {
			for _, t := range res.Targets {
				if t.Kind == catalogue.KindPath && t.Word != "0" {
					a.emptied(a.locate(t.Word, t.Word, a.wordKnown(cmd, t.Word)), t.Word)
				}
			}
		}
	case "cp", "mv":
		var ops []string
		for _, w := range words[1:] {
			if !strings.HasPrefix(w, "-") {
				ops = append(ops, w)
			}
		}
		if len(ops) >= 2 && prog == "cp" && ops[0] == "/dev/null" {
			a.emptied(a.locate(ops[len(ops)-1], ops[len(ops)-1], a.wordKnown(cmd, ops[len(ops)-1])), ops[len(ops)-1])
		}
		if len(ops) >= 2 && prog == "mv" && ops[len(ops)-1] == "/dev/null" {
			for _, o := range ops[:len(ops)-1] {
				a.emptied(a.locate(o, o, a.wordKnown(cmd, o)), o)
			}
		}
	case "chmod":
		for _, w := range words[1:] {
			if setuidMode(w) {
				a.add(Finding{Rule: "effect", Level: high, Effect: string(catalogue.Privilege), Words: []string{w},
					Why: "sets the setuid or setgid bit: the program runs as its owner"})
			}
			if w == "777" || w == "0777" || w == "a+rwx" || w == "ugo+rwx" || w == "o+w" || w == "a+w" {
				for _, t := range res.Targets {
					if t.Kind == catalogue.KindPath {
						pl := a.locate(t.Word, t.Word, a.wordKnown(cmd, t.Word))
						if !pl.inside || pl.sens != nil {
							a.add(Finding{Rule: "target", Level: high, Effect: string(catalogue.Privilege), Words: []string{w, t.Word},
								Why: "lets everyone write " + t.Word + ", " + pl.describe()})
						}
					}
				}
			}
		}
	case "chown", "chgrp":
		for _, w := range words[1:] {
			if strings.HasPrefix(w, "-") {
				continue
			}
			owner, _, _ := strings.Cut(w, ":")
			if owner == "root" || owner == "0" {
				a.add(Finding{Rule: "effect", Level: high, Effect: string(catalogue.Privilege), Words: []string{w},
					Why: "gives files to root"})
			}
			break
		}
	case "git":
		for k := 1; k+1 < len(words); k++ {
			if words[k] != "-c" && words[k] != "--config-env" {
				if !strings.HasPrefix(words[k], "-") {
					break
				}
				continue
			}
			a.gitConfig(words[k+1])
			k++
		}
		if len(res.Path) > 0 && res.Path[0] == "config" {
			for _, w := range words[2:] {
				if gitCommandKey(strings.ToLower(w)) || strings.EqualFold(w, "core.hookspath") {
					a.add(Finding{Rule: "target", Level: high, Effect: string(catalogue.Write), Words: []string{w},
						Why: "sets " + w + " in git's configuration: git will run that command or hooks from there"})
				}
			}
		}
	}
	a.configOptions(cmd, words, res)
	a.optionReads(cmd, words, res)
	if dbClient(prog) {
		a.sql(words)
	}
	if why := secretPrinter(prog, words); why != "" {
		a.secretRead = append(a.secretRead, words[0])
		a.add(Finding{Rule: "effect", Level: medium, Effect: string(catalogue.Read), Words: words[:min(len(words), 6)], Why: why})
	}
}

func setuidMode(w string) bool {
	if strings.Contains(w, "+s") || strings.Contains(w, "u+s") || strings.Contains(w, "g+s") {
		return true
	}
	if len(w) == 4 && strings.Trim(w, "01234567") == "" && (w[0] == '4' || w[0] == '2' || w[0] == '6') {
		return true
	}
	return false
}

func gitCommandKey(k string) bool {
	switch k {
	case "core.pager", "core.sshcommand", "core.editor", "core.fsmonitor", "core.askpass", "diff.external",
		"sequence.editor", "gpg.program", "gpg.ssh.program", "credential.helper", "uploadpack.packobjectshook",
		"core.gitproxy", "web.browser", "merge.tool", "diff.tool", "protocol.ext.allow":
		return true
	}
	for _, suf := range []string{".textconv", ".command", ".driver", ".clean", ".smudge", ".process", ".cmd", ".helper"} {
		if strings.HasSuffix(k, suf) {
			return true
		}
	}
	return strings.HasPrefix(k, "alias.") || strings.HasPrefix(k, "pager.")
}

// gitConfig rates one git -c KEY=VALUE.
func (a *analysis) gitConfig(kv string) {
	k, v, _ := strings.Cut(kv, "=")
	lk := strings.ToLower(k)
	switch {
	case lk == "core.hookspath":
		a.add(Finding{Rule: "flow", Level: medium, Effect: string(catalogue.ExecArg), Words: []string{"-c", kv},
			Why: "git -c core.hooksPath runs hooks from " + v})
	case strings.HasPrefix(lk, "alias.") && !strings.HasPrefix(v, "!"):
		// an alias to another git command: judged as that.
	case gitCommandKey(lk):
		line := strings.TrimPrefix(v, "!")
		lvl := a.innerLine(line)
		a.add(Finding{Rule: "flow", Level: model.MaxRisk(lvl, medium), Effect: string(catalogue.ExecArg), Words: []string{"-c", kv},
			Why: "git -c " + k + " makes git run a command: " + line})
	}
}

func dbClient(p string) bool {
	switch p {
	case "psql", "mysql", "mariadb", "sqlite3", "mongosh", "mongo", "redis-cli", "clickhouse-client", "cqlsh", "sqlcmd", "duckdb", "cockroach":
		return true
	}
	return false
}

var (
	sqlWorst = lazyRegexp(`(?i)\b(drop\s+(database|schema|table|keyspace|user|role)|truncate\b|flushall|flushdb|dropdatabase|\.drop\(\)|delete\s+from\s+[\w."]+\s*(;|$|'|")|deletemany\(\s*\{\s*\})`)
	sqlWrite = lazyRegexp(`(?i)\b(delete|update|insert|alter|drop|create|grant|revoke|del|set|deleteone|deletemany|updatemany|remove)\b`)
)

// sql reads the statements given to a database client on its line.
func (a *analysis) sql(words []string) {
	text := strings.Join(words[1:], " ")
	switch {
	case sqlWorst().MatchString(text):
		m := sqlWorst().FindString(text)
		a.effect(string(catalogue.Delete))
		a.add(Finding{Rule: "effect", Level: high, Effect: string(catalogue.Delete), Words: []string{m},
			Why: "destroys database data (" + strings.TrimSpace(m) + ")"})
	case sqlWrite().MatchString(text):
		m := sqlWrite().FindString(text)
		a.effect(string(catalogue.Write))
		a.add(Finding{Rule: "effect", Level: medium, Effect: string(catalogue.Write), Words: []string{m},
			Why: "changes database data (" + m + ")"})
	}
}

// egress rates what a command sends to another host.
func (a *analysis) egress(cmd *shell.Command, words []string, res *catalogue.Result) {
	a.egressCmd = append(a.egressCmd, words[0])
	var sent []place
	for _, t := range res.Targets {
		if (t.Kind == catalogue.KindPath || t.Kind == catalogue.KindRemote) && slices.Contains(t.Effects, catalogue.Egress) {
			sent = append(sent, a.locate(t.Word, t.Word, a.wordKnown(cmd, t.Word)))
		}
	}
	// scp and rsync: local sources to a remote destination.
	var remoteArgs []string
	var localArgs []catalogue.Target
	for _, t := range res.Targets {
		if t.Kind == catalogue.KindRemote && t.From == "arg" {
			if remoteWord(t.Word) {
				remoteArgs = append(remoteArgs, t.Word)
			} else {
				localArgs = append(localArgs, t)
			}
		}
	}
	if n := len(res.Targets); len(remoteArgs) > 0 && n > 0 && remoteWord(res.Targets[n-1].Word) {
		for _, t := range localArgs {
			sent = append(sent, a.locate(t.Word, t.Word, a.wordKnown(cmd, t.Word)))
		}
	}
	// name=@FILE, @FILE: a file sent as a form field or body.
	for _, w := range words[1:] {
		if i := strings.IndexByte(w, '@'); i >= 0 && i+1 < len(w) && strings.IndexByte("/~.$", w[i+1]) >= 0 && (i == 0 || strings.HasSuffix(w[:i], "=")) {
			f := w[i+1:]
			if !slices.ContainsFunc(sent, func(p place) bool { return p.word == f }) {
				sent = append(sent, a.locate(f, f, a.wordKnown(cmd, w)))
			}
		}
	}
	if cmd != nil {
		for _, r := range cmd.Redirs {
			if r.Reads && !r.Here {
				sent = append(sent, a.locate(r.Target.Raw, r.Target.Value, r.Target.Known))
			}
		}
	}
	for _, pl := range sent {
		lvl, why := medium, "sends "+pl.word+" to another host"
		if pl.sens != nil && pl.sens.secret || pl.extra != "" {
			lvl, why = high, "sends "+pl.word+", "+pl.describe()+", to another host"
			a.secretRead = append(a.secretRead, pl.word)
		}
		a.add(Finding{Rule: "flow", Level: lvl, Effect: string(catalogue.Egress), Words: []string{words[0], pl.word}, Why: why})
	}
	if len(sent) == 0 && cmd != nil && len(cmd.Pipe.From) > 0 && res.Program != "git" {
		a.add(Finding{Rule: "flow", Level: medium, Effect: string(catalogue.Egress), Words: []string{words[0]},
			Why: words[0] + " sends what the command before it outputs to another host"})
	}
}

// networkShell finds a shell joined to a network connection: nc -e,
// ncat --exec, socat EXEC:.
func (a *analysis) networkShell(cmd *shell.Command, words []string, res *catalogue.Result) {
	for _, w := range words[1:] {
		lw := strings.ToLower(w)
		if w == "-e" || w == "-c" || strings.HasPrefix(lw, "--exec") || strings.HasPrefix(lw, "--sh-exec") || strings.HasPrefix(lw, "--lua-exec") ||
			strings.HasPrefix(lw, "exec:") || strings.HasPrefix(lw, "system:") || strings.Contains(lw, ",exec:") || strings.Contains(lw, "pty") && strings.Contains(lw, "exec") {
			a.add(Finding{Rule: "flow", Level: high, Effect: string(catalogue.Shell), Words: []string{words[0], w},
				Why: words[0] + " joins a program or shell to a network connection (a reverse or bind shell)"})
			return
		}
	}
	for _, w := range words[1:] {
		lw := strings.ToLower(w)
		if strings.HasPrefix(lw, "tcp-listen:") || strings.HasPrefix(lw, "udp-listen:") || strings.HasPrefix(lw, "openssl-listen:") {
			a.effect(string(catalogue.NetworkListen))
			a.add(Finding{Rule: "effect", Level: medium, Effect: string(catalogue.NetworkListen), Words: []string{words[0], w},
				Why: words[0] + " listens on a network port"})
		}
	}
}

var reverseShellRe = lazyRegexp(`(?i)(socket|tcpsocket|fsockopen|net\.connect|/dev/tcp|io\.popen|createconnection)`)
var spawnRe = lazyRegexp(`(?i)(subprocess|pty\.spawn|os\.dup2|dup2|/bin/(ba)?sh|exec\s*\(|spawn|popen|system\s*\(|child_process|cmd\.exe|\bsh\b)`)

// reverseShellCode: inline code that opens a socket and runs a shell or a
// program on it.
func reverseShellCode(code string) bool {
	if !opensSocket(code) {
		return false
	}
	return spawnRe().MatchString(code)
}

// socketWords are reverseShellRe's words, in lower case ("tcpsocket"
// holds "socket").
var socketWords = []string{"socket", "fsockopen", "net.connect", "/dev/tcp", "io.popen", "createconnection"}

// opensSocket is reverseShellRe.MatchString(code). The expression is
// words alone, so on ASCII text (where ignoring case is ASCII's) it is
// a search for each word ignoring ASCII case, with no copy of the code;
// other text goes to the expression.
func opensSocket(code string) bool {
	for i := 0; i < len(code); i++ {
		if code[i] >= utf8.RuneSelf {
			return reverseShellRe().MatchString(code)
		}
	}
	for _, w := range socketWords {
		if containsFoldASCII(code, w) {
			return true
		}
	}
	return false
}

// containsFoldASCII reports whether s holds lower (ASCII, lower case)
// ignoring ASCII case.
func containsFoldASCII(s, lower string) bool {
	for i := 0; i+len(lower) <= len(s); i++ {
		k := 0
		for k < len(lower) {
			c := s[i+k]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lower[k] {
				break
			}
			k++
		}
		if k == len(lower) {
			return true
		}
	}
	return false
}

// script1 reads a sed or awk program given on the line.
func (a *analysis) script1(prog, script string, known bool) {
	if !known {
		a.readOnly = false
		a.add(Finding{Rule: "opaque", Level: medium, Effect: string(catalogue.ExecArg), Words: []string{script},
			Why: prog + " runs a program that is not certain"})
		return
	}
	switch prog {
	case "awk":
		if awkRuns().MatchString(script) {
			a.readOnly = false
			a.add(Finding{Rule: "flow", Level: medium, Effect: string(catalogue.ExecArg), Words: []string{script},
				Why: "the awk program runs commands (system, or a pipe to or from a command)"})
		} else if awkWrites().MatchString(script) {
			a.readOnly = false
			a.add(Finding{Rule: "effect", Level: medium, Effect: string(catalogue.Write), Words: []string{script},
				Why: "the awk program writes to files"})
		}
	case "sed":
		if sedRuns(script) {
			a.readOnly = false
			a.add(Finding{Rule: "flow", Level: medium, Effect: string(catalogue.ExecArg), Words: []string{script},
				Why: "the sed script runs commands or writes files (e, w)"})
		}
	}
}

var (
	awkRuns   = lazyRegexp(`system\s*\(|\|\s*&?\s*(getline|")|"[^"]*"\s*\|\s*(getline|&)|\|&|\|\s*[A-Za-z_]\w*\s*(;|\}|$)`)
	awkWrites = lazyRegexp(`print[f]?[^;}]*>\s*>?\s*("|\$|[A-Za-z_])`)
	sedCmd    = lazyRegexp(`(^|[;\n}]|\d|/|\$)\s*[ewW](\s|$)`)
)

// redirects rates a command's redirections.
func (a *analysis) redirects(cmd *shell.Command, words []string) {
	for _, r := range cmd.Redirs {
		if r.Here {
			continue
		}
		pl := a.locate(r.Target.Raw, r.Target.Value, r.Target.Known)
		if pl.net {
			a.readOnly = false
			a.effect(string(catalogue.Egress))
			a.add(Finding{Rule: "flow", Level: high, Effect: string(catalogue.Egress), Words: []string{r.Op + r.Target.Raw},
				Why: "opens a network connection through " + r.Target.Value + " (a reverse shell when a shell's input or output)"})
			a.egressCmd = append(a.egressCmd, r.Target.Raw)
			continue
		}
		writes := r.Writes
		if r.Dup {
			// >&WORD and N>&WORD onto a word that is not certainly a
			// descriptor number or "-" is bash's &>WORD: a file written
			// (>& ~/.bashrc, >& "$F").
			if r.Target.Known && strings.Trim(r.Target.Value, "0123456789-") == "" || !strings.Contains(r.Op, ">") {
				if !r.Target.Known {
					a.readOnly = false
				}
				continue
			}
			writes = true
		}
		if writes {
			if pl.harmless {
				continue
			}
			a.readOnly = false
			a.effect(string(catalogue.Write))
			a.rateTarget(catalogue.Write, pl, false, "")
			if r.Truncates && emptiesFile(words) {
				a.emptied(pl, r.Op+r.Target.Raw)
			}
		}
		if r.Reads {
			if !r.Target.Known {
				a.readOnly = false
			}
			a.rateTarget(catalogue.Read, pl, false, "")
		}
	}
}

// sedRuns: a sed script that may run commands or write files: an e, w or
// W command, or an s command with the e or w flag.
func sedRuns(script string) bool {
	if sedCmd().MatchString(script) {
		return true
	}
	for i := 0; i+1 < len(script); i++ {
		if script[i] != 's' || (i > 0 && script[i-1] != ';' && script[i-1] != ' ' && script[i-1] != '\n' && script[i-1] != '/' && script[i-1] != '}' && (script[i-1] < '0' || script[i-1] > '9')) {
			continue
		}
		d := script[i+1]
		if d == ' ' || d == '\\' || d == '\n' {
			continue
		}
		// s d re d repl d flags
		k, parts := i+2, 0
		for k < len(script) && parts < 2 {
			if script[k] == '\\' {
				k += 2
				continue
			}
			if script[k] == d {
				parts++
			}
			k++
		}
		for k < len(script) && strings.IndexByte("gpiImM0123456789", script[k]) >= 0 {
			k++
		}
		if parts == 2 && k < len(script) && (script[k] == 'e' || script[k] == 'w' || script[k] == 'W') {
			return true
		}
	}
	return false
}

// provenAnyway proves read-only what the catalogue leaves open: the
// version or help of a known program, a sed or awk program read here and
// found to neither write nor run anything.
func (a *analysis) provenAnyway(cmd *shell.Command, words []string, res *catalogue.Result) bool {
	if res.Program == "" || len(res.Unknown) > 0 {
		return false
	}
	if slices.ContainsFunc(res.Findings, optionRuns) {
		return false // sed -f FILE, awk -f FILE: a program not read here
	}
	if len(words) == 2 && len(res.Path) == 0 {
		switch words[1] {
		case "--version", "-version", "-V", "--help", "-h", "version":
			return cmd == nil || cmd.Opaque == nil || cmd.Opaque.Kind != "script"
		}
	}
	if res.Program != "sed" && res.Program != "awk" {
		return false
	}
	for _, e := range res.Effects {
		if e != catalogue.Read && e != catalogue.ExecArg {
			return false
		}
	}
	var script string
	for _, t := range res.Targets {
		if t.Kind == catalogue.KindScript {
			if script != "" || t.From != "arg" {
				return false // -f FILE, -e twice: not read here
			}
			script = t.Word
		}
	}
	if script == "" || !a.wordKnown(cmd, script) {
		return false
	}
	if res.Program == "sed" {
		return !sedRuns(script)
	}
	return !awkRuns().MatchString(script) && !awkWrites().MatchString(script)
}

// emptiesFile: the command writes nothing, so a truncating redirection of
// its output empties the file (": > app.db", "echo > data.csv").
func emptiesFile(words []string) bool {
	if len(words) == 0 {
		return true
	}
	switch words[0] {
	case ":", "true", "false":
		return true
	case "echo":
		return len(words) == 1 || len(words) == 2 && words[1] == "-n"
	case "printf":
		return len(words) == 2 && words[1] == ""
	case "cat":
		return len(words) == 2 && words[1] == "/dev/null"
	}
	return false
}

// emptied rates a file emptied or thrown away (": > f", "truncate -s 0
// f", "cp /dev/null f", "mv f /dev/null"): its content is lost, even
// inside the workspace.
func (a *analysis) emptied(pl place, word string) {
	a.effect(string(catalogue.Delete))
	lvl := medium
	if pl.sens != nil || pl.extra != "" || pl.device || !pl.inside && !pl.tmp {
		lvl = high
	}
	a.add(Finding{Rule: "target", Level: lvl, Effect: string(catalogue.Delete), Words: []string{word},
		Why: "empties " + pl.word + ", " + pl.describe() + " (its content is lost)"})
}

// findRoots are the paths find starts from (the words before its
// expression); "." when none is given.
func findRoots(words []string) []string {
	var roots []string
	for _, w := range words[1:] {
		if w == "-H" || w == "-L" || w == "-P" || strings.HasPrefix(w, "-O") || strings.HasPrefix(w, "-D") {
			continue
		}
		if strings.HasPrefix(w, "-") || w == "(" || w == "!" || w == "\\(" {
			break
		}
		roots = append(roots, w)
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	return roots
}

// places locates a target word; a word holding {} in a command find runs
// is each path find starts from (and what is below it).
func (a *analysis) places(cmd *shell.Command, w string) []place {
	if cmd != nil && cmd.Parent >= 0 && strings.Contains(w, "{}") && a.s != nil && cmd.Parent < len(a.s.Commands) {
		if roots, ok := a.roots[a.s.Commands[cmd.Parent]]; ok {
			out := make([]place, 0, len(roots))
			for _, r := range roots {
				pl := a.locate(r, r, true)
				pl.word = w + " (below " + r + ")"
				out = append(out, pl)
			}
			return out
		}
	}
	// One place, in a buffer of the analysis: the caller ranges over it
	// before asking again.
	raw := w
	sw, ok := a.shellWord(cmd, w)
	known := !ok || sw.Known
	if !known {
		raw = sw.Raw // $(cat list), "$D": what is written, not a guess at it
	}
	a.placeBuf[0] = a.locate(raw, w, known)
	return a.placeBuf[:]
}

// sshForward finds SSH port forwarding (-R, -L, -D) among ssh's words.
func (a *analysis) sshForward(ws []string) bool {
	for k, w := range ws {
		if w == "-R" || w == "-L" || w == "-D" || len(w) > 2 && (strings.HasPrefix(w, "-R") || strings.HasPrefix(w, "-D") || strings.HasPrefix(w, "-L")) {
			v := w
			if len(w) == 2 && k+1 < len(ws) {
				v = w + " " + ws[k+1]
			}
			a.effect(string(catalogue.NetworkListen))
			a.add(Finding{Rule: "effect", Level: medium, Effect: string(catalogue.NetworkListen), Words: []string{v},
				Why: "forwards a port through SSH (opens a listening port here or on the other host)"})
			return true
		}
	}
	return false
}

// shellWord finds the parsed word whose best reading is value.
// secretPrinter says why words print a secret a store keeps (a private
// key, a password, a secret's value), "" when they do not: reading
// credentials is at least MEDIUM wherever they are kept.
func secretPrinter(prog string, words []string) string {
	has := func(ws ...string) bool {
		for _, w := range words[1:] {
			for _, x := range ws {
				if w == x || strings.HasPrefix(w, x+"=") {
					return true
				}
			}
		}
		return false
	}
	seq := func(a, b string) bool {
		for k := 1; k+1 < len(words); k++ {
			if words[k] == a && words[k+1] == b {
				return true
			}
		}
		return false
	}
	switch prog {
	case "gh", "glab":
		if seq("auth", "token") || seq("auth", "status") && has("-t", "--show-token") {
			return "prints the GitHub token"
		}
	case "gcloud":
		if has("print-access-token", "print-identity-token", "print-refresh-token") {
			return "prints a Google Cloud token"
		}
		if seq("versions", "access") && has("secrets") {
			return "prints a secret's value from Google Cloud"
		}
	case "heroku":
		if has("auth:token") {
			return "prints the Heroku token"
		}
	case "git":
		if seq("credential", "fill") {
			return "prints stored git credentials"
		}
	case "pulumi":
		if has("--show-secrets") {
			return "prints the stack's secrets"
		}
	case "terraform", "tofu":
		if seq("state", "pull") {
			return "prints the state, which holds the resources' secrets"
		}
	case "gpg":
		if has("--export-secret-keys", "--export-secret-subkeys", "--export-ssh-key") {
			return "prints private keys from the GnuPG keyring"
		}
	case "security":
		if has("find-generic-password", "find-internet-password") && (has("-w", "-g") || slices.ContainsFunc(words, func(w string) bool {
			return strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.ContainsAny(w, "wg")
		})) {
			return "prints a password from the macOS keychain"
		}
		if has("dump-keychain") {
			return "dumps the macOS keychain"
		}
	case "aws":
		if seq("configure", "get") && slices.ContainsFunc(words, func(w string) bool {
			l := strings.ToLower(w)
			return strings.Contains(l, "secret") || strings.Contains(l, "token") || strings.Contains(l, "key_id")
		}) || seq("configure", "export-credentials") || has("get-session-token", "get-login-password", "get-authorization-token") {
			return "prints AWS credentials"
		}
		if seq("secretsmanager", "get-secret-value") || (seq("ssm", "get-parameter") || seq("ssm", "get-parameters") || seq("ssm", "get-parameters-by-path")) && has("--with-decryption") {
			return "prints a secret's value from AWS"
		}
	case "az":
		if seq("secret", "show") && has("keyvault") {
			return "prints a secret's value from Azure Key Vault"
		}
		if has("get-access-token") {
			return "prints an Azure access token"
		}
	case "vault":
		if has("read") || seq("kv", "get") {
			return "prints a secret from Vault"
		}
	case "op":
		if has("read") || seq("item", "get") {
			return "prints a secret from 1Password"
		}
	case "pass", "gopass":
		if len(words) > 1 && (words[1] == "show" || !strings.HasPrefix(words[1], "-") && !slices.Contains([]string{"ls", "list", "find", "grep", "init", "git", "insert", "generate", "edit", "rm", "mv", "cp", "help", "version"}, words[1])) {
			return "prints a stored password"
		}
	case "kubectl", "oc":
		if seq("config", "view") && has("--raw", "--flatten") {
			return "prints the kubeconfig with its credentials"
		}
		if has("--raw") && slices.ContainsFunc(words, func(w string) bool { return strings.Contains(w, "/secrets") }) {
			return "prints the cluster's secrets"
		}
		if has("create") && has("token") {
			return "prints a service account token"
		}
		if (has("secret", "secrets") || slices.ContainsFunc(words, func(w string) bool { return strings.HasPrefix(w, "secret/") })) && has("get", "describe") &&
			slices.ContainsFunc(words, func(w string) bool {
				return w == "-o" || strings.HasPrefix(w, "-o") || strings.HasPrefix(w, "--output")
			}) {
			return "prints a Kubernetes secret's data"
		}
	}
	return ""
}

// optionRuns: f is an option that makes the program run code or a
// command the option names (awk -f FILE, make -f FILE, git --ext-diff).
func optionRuns(f catalogue.Finding) bool {
	return f.Effect == catalogue.ExecArg && len(f.Words) > 0 && strings.HasPrefix(f.Words[0], "-")
}

// optionRunsLevel rates an option that runs code: code from a file of
// the workspace is the workspace's (LOW), from its input or elsewhere
// MEDIUM (the analysis cannot read it); an option that runs a configured
// command (--ext-diff, help --web) MEDIUM. An option whose value is a
// command, code or configuration is judged where that is read.
func (a *analysis) optionRunsLevel(cmd *shell.Command, f catalogue.Finding, res *catalogue.Result) model.RiskLevel {
	for _, t := range res.Targets {
		if t.From != f.Words[0] {
			continue
		}
		if t.Kind != catalogue.KindPath {
			return low
		}
		a.readOnly = false
		switch {
		case t.Word == "-", t.Word == "/dev/stdin", strings.HasPrefix(t.Word, "/dev/fd/"), strings.HasPrefix(t.Word, "/proc/self/fd/"):
			a.opaque = append(a.opaque, t.Word)
			return medium
		}
		pl := a.locate(t.Word, t.Word, a.wordKnown(cmd, t.Word))
		if pl.inside && pl.sens == nil && pl.extra == "" {
			return low
		}
		a.opaque = append(a.opaque, t.Word)
		return medium
	}
	if len(f.Words) == 1 && f.Words[0] == "--exec-path" {
		return low // prints where git's programs are
	}
	if len(f.Words) == 1 {
		a.readOnly = false
		return medium
	}
	return low
}

// optValue finds option name's value among words ("--name=v", "--name v",
// and for a one-letter name "-Cv"); ok false when it is not given.
func optValue(words []string, name string) (string, bool) {
	for k := 1; k < len(words); k++ {
		w := words[k]
		if w == "--" {
			break
		}
		if w == name && k+1 < len(words) {
			return words[k+1], true
		}
		if v, ok := strings.CutPrefix(w, name+"="); ok {
			return v, true
		}
		if len(name) == 2 && !strings.HasPrefix(w, "--") && strings.HasPrefix(w, name) && len(w) > 2 {
			return w[2:], true
		}
	}
	return "", false
}

// configOptions rates options and operands that choose a configuration or
// place the catalogue cannot weigh: a repository, kubeconfig or profile
// elsewhere (their configuration runs commands), the output file of aws
// s3api get-object, cpio extracting absolute paths, make's SHELL, fc
// re-running history, global installs and installs from outside the
// workspace.
func (a *analysis) configOptions(cmd *shell.Command, words []string, res *catalogue.Result) {
	prog := res.Program
	elsewhere := func(opt, v, what string) {
		a.readOnly = false
		pl := a.locate(v, v, a.wordKnown(cmd, v))
		if pl.inside && pl.sens == nil && pl.extra == "" {
			return
		}
		a.add(Finding{Rule: "flow", Level: medium, Effect: string(catalogue.ExecArg), Words: []string{opt, v},
			Why: prog + " " + what + " at " + v + ", " + pl.describe() + ", whose configuration can run commands"})
	}
	sub := strings.Join(res.Path, " ")
	switch prog {
	case "git":
		for k := 1; k < len(words) && strings.HasPrefix(words[k], "-"); k++ {
			w := words[k]
			for _, o := range []string{"-C", "--git-dir", "--work-tree"} {
				if w == o && k+1 < len(words) {
					elsewhere(o, words[k+1], "uses the repository")
				} else if v, ok := strings.CutPrefix(w, o+"="); ok && o != "-C" {
					elsewhere(o, v, "uses the repository")
				}
			}
			if w == "-C" || w == "-c" || w == "--git-dir" || w == "--work-tree" || w == "--namespace" || w == "--config-env" {
				k++
			}
		}
		if sub == "apply" && slices.Contains(words, "--unsafe-paths") {
			a.add(Finding{Rule: "target", Level: medium, Effect: string(catalogue.Write), Words: []string{"--unsafe-paths"},
				Why: "applies the patch to paths outside the working tree (wherever the patch says)"})
		}
		if sub == "credential" && len(words) > 2 && words[2] == "fill" {
			a.secretRead = append(a.secretRead, words[0])
			a.add(Finding{Rule: "effect", Level: medium, Effect: string(catalogue.Read), Words: []string{"git", "credential", "fill"},
				Why: "prints stored git credentials"})
		}
	case "terraform":
		if v, ok := optValue(words, "-chdir"); ok {
			elsewhere("-chdir", v, "runs the configuration")
		}
	case "kubectl", "helm":
		if v, ok := optValue(words, "--kubeconfig"); ok {
			elsewhere("--kubeconfig", v, "loads the kubeconfig")
		}
	case "aws":
		if v, ok := optValue(words, "--profile"); ok {
			a.readOnly = false
			a.add(Finding{Rule: "flow", Level: medium, Effect: string(catalogue.ExecArg), Words: []string{"--profile", v},
				Why: "aws uses the profile " + v + ", whose credential_process is a command"})
		}
		a.awsOutfile(cmd, words)
	case "cpio":
		extract := slices.Contains(words, "--extract") || slices.ContainsFunc(words[1:], func(w string) bool {
			return strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "i")
		})
		if extract && !slices.Contains(words, "--no-absolute-filenames") {
			a.readOnly = false
			a.add(Finding{Rule: "target", Level: medium, Effect: string(catalogue.Write), Words: words[:min(len(words), 3)],
				Why: "cpio extracts the archive's paths as written, absolute ones too (anywhere on the machine)"})
		}
	case "make":
		for _, o := range []string{"-C", "--directory"} {
			if v, ok := optValue(words, o); ok {
				elsewhere(o, v, "runs the makefile")
			}
		}
		for _, w := range words[1:] {
			if v, ok := strings.CutPrefix(w, "SHELL="); ok && !systemBin[path.Dir(v)] {
				a.readOnly = false
				a.add(Finding{Rule: "flow", Level: medium, Effect: string(catalogue.ExecArg), Words: []string{w},
					Why: "make runs every recipe with " + v + " as its shell"})
			}
		}
	case "fc":
		if !slices.ContainsFunc(words[1:], func(w string) bool { return strings.HasPrefix(w, "-") && strings.Contains(w, "l") }) {
			a.readOnly = false
			a.opaque = append(a.opaque, words[0])
			a.add(Finding{Rule: "opaque", Level: medium, Effect: string(catalogue.ExecArg), Words: words[:min(len(words), 4)],
				Why: "fc re-runs or edits commands from the shell's history, which the analysis cannot see"})
		}
	case "npm":
		if (sub == "install" || sub == "uninstall") && (slices.Contains(words, "-g") || slices.Contains(words, "--global") || slices.Contains(words, "--location=global")) {
			a.add(Finding{Rule: "target", Level: medium, Effect: string(catalogue.Write), Words: words[:min(len(words), 4)],
				Why: "changes the global installation (outside the workspace; install scripts run)"})
		}
		if v, ok := optValue(words, "--prefix"); ok {
			elsewhere("--prefix", v, "uses the package")
		}
		if sub == "install" {
			a.localPackages(cmd, words[2:])
		}
	case "pip", "pip3", "uv", "pipx":
		for k, w := range words {
			v, ok := strings.CutPrefix(w, "--editable=")
			if (w == "-e" || w == "--editable") && k+1 < len(words) {
				v, ok = words[k+1], true
			}
			if ok && !strings.Contains(v, "://") && !strings.HasPrefix(v, "git+") {
				pl := a.locate(v, v, a.wordKnown(cmd, v))
				if !pl.inside {
					a.add(Finding{Rule: "target", Level: medium, Effect: string(catalogue.RunWorkspace), Words: []string{w, v},
						Why: "installs " + v + ", " + pl.describe() + ", running its setup code"})
				}
			}
		}
		if slices.Contains(words, "install") {
			a.localPackages(cmd, words[1:])
		}
	}
}

// awsOutfile: aws s3api get-object and the like write the object to the
// last word (their outfile).
func (a *analysis) awsOutfile(cmd *shell.Command, words []string) {
	at := slices.IndexFunc(words, func(w string) bool {
		return w == "get-object" || w == "get-object-torrent" || w == "select-object-content" || w == "invoke" || w == "get-export"
	})
	if at < 0 {
		return
	}
	var pos []string
	for k := at + 1; k < len(words); k++ {
		w := words[k]
		if strings.HasPrefix(w, "--") {
			if !strings.Contains(w, "=") && k+1 < len(words) && !awsFlag(w) {
				k++
			}
			continue
		}
		pos = append(pos, w)
	}
	if len(pos) == 0 {
		return
	}
	out := pos[len(pos)-1]
	a.readOnly = false
	a.effect(string(catalogue.Write))
	a.rateTarget(catalogue.Write, a.locate(out, out, a.wordKnown(cmd, out)), false, "aws")
}

// awsFlag: an aws option that takes no value.
func awsFlag(w string) bool {
	switch w {
	case "--debug", "--no-verify-ssl", "--no-paginate", "--no-sign-request", "--no-cli-pager", "--cli-auto-prompt", "--no-cli-auto-prompt", "--dry-run", "--no-dry-run":
		return true
	}
	return false
}

// readOptions name a file the program reads.
var readOptions = map[string]bool{"--files0-from": true, "--contents": true, "--from-file": true, "--exclude-from": true,
	"--include-from": true, "--files-from": true, "--file": true, "--input": true}

// optionReads rates files read through option values the catalogue does
// not place (--files0-from=F, --contents=F, jq --rawfile NAME F) and
// files named by path inside a git revision (HEAD:.env).
func (a *analysis) optionReads(cmd *shell.Command, words []string, res *catalogue.Result) {
	read := func(v string) {
		if v == "" || v == "-" {
			return
		}
		a.rateTarget(catalogue.Read, a.locate(v, v, a.wordKnown(cmd, v)), false, res.Program)
	}
	for k := 1; k < len(words); k++ {
		w := words[k]
		if strings.HasPrefix(w, "--") {
			name, v, eq := strings.Cut(w, "=")
			if readOptions[name] {
				if eq {
					read(v)
				} else if k+1 < len(words) {
					read(words[k+1])
				}
			}
			if (w == "--rawfile" || w == "--slurpfile") && k+2 < len(words) {
				read(words[k+2])
			}
			continue
		}
		if res.Program == "git" && !strings.HasPrefix(w, "-") && k >= 2 {
			// A path in a revision (HEAD:.env, :.env) or a path operand
			// (git diff --no-index a ~/.ssh/id_rsa, git log -p -- .env).
			if i := strings.IndexByte(w, ':'); i >= 0 && i+1 < len(w) && !strings.Contains(w, "://") {
				read(w[i+1:])
			} else if strings.ContainsAny(w, "./~") {
				read(w)
			}
		}
	}
}

// localPackages rates install operands that are local paths outside the
// workspace (pip install /tmp/x, npm i ../x.tgz): their setup or install
// scripts run.
func (a *analysis) localPackages(cmd *shell.Command, ops []string) {
	for _, v := range ops {
		if strings.HasPrefix(v, "-") || !(strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || strings.HasPrefix(v, "..") || strings.HasPrefix(v, "$")) {
			continue
		}
		pl := a.locate(v, v, a.wordKnown(cmd, v))
		if !pl.inside {
			a.add(Finding{Rule: "target", Level: medium, Effect: string(catalogue.RunWorkspace), Words: []string{v},
				Why: "installs " + v + ", " + pl.describe() + ", running its setup or install scripts"})
		}
	}
}
