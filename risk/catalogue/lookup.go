package catalogue

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
)

// Target is a word the command acts on, or runs.
type Target struct {
	Kind    Kind     // path, host, url, resource, command, code, ...
	Word    string   // the word (for KindCommand, the first word of the command)
	Words   []string // for KindCommand: every word of the command to run
	Effects []Effect // what is done to it, when the catalogue says (cp's last path is written)
	From    string   // "arg" or the option that gave it
}

// Finding is one reason the command has an effect.
type Finding struct {
	Effect Effect
	Words  []string // the words that triggered it
	Why    string
}

// Result is what the catalogue says a command does.
type Result struct {
	Program  string   // the program's name in the catalogue, "" when unknown
	Path     []string // subcommands matched, e.g. ["system", "prune"]
	Effects  []Effect // every effect, in the order found, without repeats
	Findings []Finding
	Targets  []Target
	// ReadOnly is true when the catalogue proves the words read only: the
	// program and subcommand are known and read_only, no option with another
	// effect is named, and nothing is unknown.
	ReadOnly bool
	// Unknown names what the catalogue could not place: an unknown program
	// or subcommand, an option it does not list, more words than it expects.
	Unknown []string
	// Unlisted names the options the catalogue does not list for the
	// command. They do not stop a read-only proof (the catalogue asserts a
	// read_only command's options all read only), but one that takes a value
	// may have shifted which words are targets.
	Unlisted []string
	// typed is lookup's buffer of subcommand words.
	typed []string
}

// Has reports whether the result holds effect e.
func (r *Result) Has(e Effect) bool { return slices.Contains(r.Effects, e) }

func (r *Result) add(e Effect, why string, words ...string) {
	if r.Findings == nil {
		// Most commands get a few: one allocation for both, not one per
		// append.
		b := new(resultBuf)
		r.Effects, r.Findings = b.effects[:0], b.findings[:0]
	}
	if !slices.Contains(r.Effects, e) {
		r.Effects = append(r.Effects, e)
	}
	r.Findings = append(r.Findings, Finding{Effect: e, Words: words, Why: why})
}

// resultBuf holds a Result's first effects and findings.
type resultBuf struct {
	effects  [4]Effect
	findings [4]Finding
}

// Lookup says what a simple command does, given its words as the shell
// would pass them (words[0] is the program). It never reads the filesystem
// or runs anything. Wrappers (sudo, env, xargs, find -exec) are described
// as commands of their own: the command they run comes back as a Target of
// KindCommand, for the caller to look up in turn. The words of the
// result's findings may be slices of words itself: words must not be
// changed while the result is used.
func (c *Catalogue) Lookup(words []string) Result {
	var r Result
	c.lookup(words, &r)
	return r
}

// LookupInto is Lookup writing into r, whose slices it reuses: what r
// held before is overwritten, so nothing of it may be kept by then (the
// words of its findings and targets are never in those slices and stay).
func (c *Catalogue) LookupInto(words []string, r *Result) {
	clear(r.Findings)
	clear(r.Targets)
	*r = Result{Path: r.Path[:0], Effects: r.Effects[:0], Findings: r.Findings[:0], Targets: r.Targets[:0],
		Unknown: r.Unknown[:0], Unlisted: r.Unlisted[:0], typed: r.typed[:0]}
	c.lookup(words, r)
}

func (c *Catalogue) lookup(words []string, r *Result) {
	if len(words) == 0 {
		r.Unknown = append(r.Unknown, "no command")
		return
	}
	node := c.lookupProgram(words[0])
	if node == nil {
		r.Unknown = append(r.Unknown, fmt.Sprintf("program %q is not in the catalogue", words[0]))
		return
	}
	r.Program = node.Name
	readOnly := true
	// The positional words: a slice of words while they follow each other
	// (rm -f a b c), a copy once an option comes between them; capacity
	// its length, so that nothing appends onto words.
	var positionals []string
	posFrom, posNext, copied := 0, 0, false
	// The subcommand words as written (an alias, not its node's name), in
	// a buffer of the result: nothing keeps them.
	typed := r.typed[:0]
	defer func() { r.typed = typed[:0] }()
	optsDone := false
	for i := 1; i < len(words); i++ {
		w := words[i]
		if !optsDone && w == "--" {
			optsDone = true
			continue
		}
		if i == 1 && node.Bundled && w != "" && w[0] != '-' {
			i = c.option(node, append([]string{words[0], "-" + w}, words[2:]...), i, r)
			continue
		}
		if !optsDone && len(w) > 1 && w[0] == '+' && node.opt(w) == nil && node.opt("+") != nil {
			c.apply(node.opt("+"), "+", w[1:], true, words, i, r) // less +CMD, vim +CMD
			continue
		}
		if !optsDone && len(w) > 1 && (w[0] == '-' || w[0] == '+' && node.opt(w) != nil) {
			i = c.option(node, words, i, r)
			continue
		}
		if len(positionals) == 0 && len(node.Subcommands) > 0 {
			if sub := node.names[w]; sub != nil {
				node = sub
				if r.Path == nil {
					r.Path = make([]string, 0, 2)
				}
				r.Path = append(r.Path, sub.Name)
				typed = append(typed, w)
				continue
			}
			if len(node.Verbs) == 0 {
				r.Unknown = append(r.Unknown, fmt.Sprintf("subcommand %q of %s is not in the catalogue", w, strings.Join(append([]string{r.Program}, r.Path...), " ")))
				readOnly = false
			}
		}
		switch {
		case copied:
			positionals = append(positionals, w)
		case len(positionals) == 0:
			posFrom, posNext = i, i+1
			positionals = words[i:posNext:posNext]
		case posNext == i:
			posNext = i + 1
			positionals = words[posFrom:posNext:posNext]
		default:
			positionals = append(make([]string, 0, len(positionals)+len(words)-i), positionals...)
			positionals = append(positionals, w)
			copied = true
		}
		if c.takesRest(node, len(positionals)) {
			if copied {
				positionals = append(positionals, words[i+1:]...)
			} else {
				positionals = words[posFrom:len(words):len(words)]
			}
			break
		}
	}
	var verb *Verb
	if len(node.Verbs) > 0 {
		var w string
		verb, w = node.verb(positionals)
		if verb == nil {
			r.Unknown = append(r.Unknown, fmt.Sprintf("no operation of %s that the catalogue knows", r.Program))
		} else {
			for _, e := range verb.Effects {
				r.add(e, fmt.Sprintf("%s operation %s", r.Program, w), w)
			}
			if !verb.ReadOnly {
				readOnly = false
			}
		}
		positionals = nil // service, resource and operation words
	}
	if verb == nil && len(node.Effects) > 0 {
		// One description and one list of words for all the node's
		// effects (the words are never changed in place): the words as
		// written (kubectl rollout restart, go test), not the name of the
		// node an alias leads to.
		why, ws := node.describeWords(path.Base(words[0]), typed, words[0])
		for _, e := range node.Effects {
			r.add(e, why, ws...)
		}
	}
	if verb == nil {
		if !node.ReadOnly {
			readOnly = false
		}
	}
	if node.ReadOnly && len(node.Effects) == 0 {
		r.add(Read, node.describe(path.Base(words[0]), typed), words[0])
	}
	if !c.assignArgs(node, positionals, r) {
		readOnly = false
	}
	for _, tg := range r.Targets {
		if (tg.Kind == KindCommand || tg.Kind == KindShell || tg.Kind == KindCode) && !r.Has(ExecArg) && !r.Has(Shell) {
			r.add(ExecArg, "runs a command given in its words", tg.Word)
		}
	}
	for _, f := range r.Findings {
		if f.Effect != Read {
			readOnly = false
		}
	}
	r.ReadOnly = readOnly && len(r.Unknown) == 0
}

// describe is the node's description for a finding: the program, the
// subcommands that led to it and what the catalogue says it does. It is
// built once for a node reached by the same path and kept (describeMemo).
func (n *Command) describe(prog string, p []string) string {
	if d := n.described(func(d *described) bool { return d.prog == prog && slices.Equal(d.path, p) }); d != nil {
		return d.text
	}
	text := n.describe1(prog, p)
	n.remember(&described{prog: prog, path: slices.Clone(p), text: text})
	return text
}

// describeWords is describe and the words of its findings: the name as
// written and the subcommands. Both are kept for the next command reached
// the same way (the words are shared: nothing changes them in place).
func (n *Command) describeWords(prog string, p []string, name string) (string, []string) {
	if d := n.described(func(d *described) bool {
		return d.prog == prog && d.words != nil && d.words[0] == name && slices.Equal(d.path, p)
	}); d != nil {
		return d.text, d.words
	}
	text := n.describe1(prog, p)
	ws := slices.Clip(append([]string{name}, p...))
	n.remember(&described{prog: prog, path: slices.Clone(p), text: text, words: ws})
	return text, ws
}

// describeMemo holds, by *Command, the descriptions last built for it
// (a []*described never changed once stored: a new one replaces it), the
// latest first: a node is reached under a few names (rm, /bin/rm) and
// paths (an alias), not one only.
var describeMemo sync.Map

// describedKept bounds the descriptions kept for one node.
const describedKept = 4

// described returns the kept description of n that match accepts, nil
// when none does.
func (n *Command) described(match func(*described) bool) *described {
	m, ok := describeMemo.Load(n)
	if !ok {
		return nil
	}
	for _, d := range m.([]*described) {
		if match(d) {
			return d
		}
	}
	return nil
}

// remember keeps d first among n's descriptions.
func (n *Command) remember(d *described) {
	kept := []*described{d}
	if m, ok := describeMemo.Load(n); ok {
		old := m.([]*described)
		kept = append(kept, old[:min(len(old), describedKept-1)]...)
	}
	describeMemo.Store(n, kept)
}

type described struct {
	prog  string
	path  []string
	text  string
	words []string // describeWords' words, nil when describe made it
}

func (n *Command) describe1(prog string, p []string) string {
	name := prog
	if len(p) > 0 {
		name = strings.Join(append([]string{prog}, p...), " ")
	}
	if n.About != "" {
		return name + ": " + n.About
	}
	return name
}

// takesRest reports whether, with k positionals seen, the rest of the words
// all belong to a repeated command item (xargs CMD ARGS..., ssh host CMD...).
func (c *Catalogue) takesRest(node *Command, k int) bool {
	if k > len(node.args) {
		return false
	}
	it := node.args[k-1]
	return it.kind == KindCommand
}

// option handles the option word at words[i]; it returns the index of the
// last word it consumed. Options the catalogue does not list go to
// r.Unlisted: a read-only command's options all read only, and another
// command's effects come from the command itself.
func (c *Catalogue) option(node *Command, words []string, i int, r *Result) int {
	w := words[i]
	if o := node.opt(w); o != nil {
		return c.apply(o, w, "", false, words, i, r)
	}
	if strings.HasPrefix(w, "--") || strings.Contains(w, "=") {
		name, val, hasVal := strings.Cut(w, "=")
		if o := node.opt(name); o != nil {
			return c.apply(o, name, val, hasVal, words, i, r)
		}
		if strings.HasPrefix(w, "--") {
			// Go's flag package takes --name for -name (go env --w).
			if o := node.opt(name[1:]); o != nil {
				return c.apply(o, name, val, hasVal, words, i, r)
			}
			// getopt_long and git's parse-options take any unique prefix
			// of a long option: --out is --output.
			o, ambiguous := node.abbrev(name)
			if o != nil {
				return c.apply(o, name, val, hasVal, words, i, r)
			}
			if ambiguous {
				r.Unknown = append(r.Unknown, fmt.Sprintf("option %s may be short for more than one option of %s", name, node.Name))
				return i
			}
			r.Unlisted = append(r.Unlisted, name)
			return i
		}
	}
	if w[0] == '+' {
		r.Unlisted = append(r.Unlisted, w)
		return i
	}
	// A cluster of short options: -af, -n5, -ofile.
	for j := 1; j < len(w); j++ {
		short := shortOption(w[j])
		o := node.opt(short)
		if o == nil {
			if r.Unlisted == nil {
				r.Unlisted = make([]string, 0, len(w)-j)
			}
			r.Unlisted = append(r.Unlisted, short)
			continue
		}
		if o.Value == "required" || o.Value == "optional" {
			if j+1 < len(w) {
				return c.apply(o, short, w[j+1:], true, words, i, r)
			}
			return c.apply(o, short, "", false, words, i, r)
		}
		c.apply(o, short, "", false, words, i, r)
	}
	return i
}

// apply records option o (spelled name) and its value; it returns the
// index of the last word consumed.
func (c *Catalogue) apply(o *Option, name, val string, hasVal bool, words []string, i int, r *Result) int {
	why := o.Why
	if why == "" {
		why = "option " + name
	}
	if len(o.Until) > 0 {
		j := i + 1
		for j < len(words) && !slices.Contains(o.Until, words[j]) {
			j++
		}
		cmd := words[i+1 : j]
		for _, e := range o.Effects {
			r.add(e, why, append([]string{name}, cmd...)...)
		}
		if len(cmd) > 0 {
			r.Targets = append(r.Targets, Target{Kind: KindCommand, Word: cmd[0], Words: slices.Clone(cmd), From: name})
		} else {
			r.Unknown = append(r.Unknown, fmt.Sprintf("option %s names no command", name))
		}
		if j >= len(words) {
			return len(words) - 1
		}
		return j
	}
	if o.Value == "required" && !hasVal {
		if i+1 < len(words) {
			val, hasVal = words[i+1], true
			i++
		} else {
			r.Unknown = append(r.Unknown, fmt.Sprintf("option %s has no value", name))
		}
	}
	words0 := make([]string, 1, 2)
	words0[0] = name
	if hasVal {
		words0 = append(words0, val)
	}
	for _, e := range o.Effects {
		r.add(e, why, words0...)
	}
	if hasVal {
		matched := false
		for _, vp := range o.Values {
			rest, ok := val, false
			if vp.Contains != "" {
				ok = strings.Contains(val, vp.Contains)
			} else if len(val) >= len(vp.Prefix) && strings.EqualFold(val[:len(vp.Prefix)], vp.Prefix) {
				rest, ok = val[len(vp.Prefix):], true
			}
			if ok {
				matched = true
				vwhy := vp.Why
				if vwhy == "" {
					vwhy = why
				}
				for _, e := range vp.Effects {
					r.add(e, vwhy, words0...)
				}
				if vp.Arg != "" {
					r.Targets = append(r.Targets, target(vp.Arg, rest, vp.Effects, name))
				}
				break
			}
		}
		if !matched && o.Arg != "" {
			r.Targets = append(r.Targets, target(o.Arg, val, o.Effects, name))
		}
	}
	return i
}

// shortOptions are "-" and each byte: the spelling of a short option in a
// cluster, without building it for every letter of every cluster.
var shortOptions = func() (out [256]string) {
	for b := range out {
		out[b] = "-" + string([]byte{byte(b)})
	}
	return out
}()

func shortOption(b byte) string { return shortOptions[b] }

func target(k Kind, w string, effs []Effect, from string) Target {
	// The effects are the catalogue's own, shared: nothing changes a
	// Target's effects in place.
	t := Target{Kind: k, Word: w, Effects: slices.Clip(effs), From: from}
	if k == KindCommand {
		t.Words = []string{w}
	}
	return t
}

// assignArgs labels the positional words by the command's args; it
// reports false when there are words the catalogue does not expect.
func (c *Catalogue) assignArgs(node *Command, ws []string, r *Result) bool {
	items := node.args
	rep := slices.IndexFunc(items, func(a argItem) bool { return a.repeat })
	ok := true
	r.Targets = slices.Grow(r.Targets, len(ws))
	// The why of an item's effect, built once for all the words of a
	// repeated item (rm's thousands of operands).
	var whyItem *argItem
	var whyEff Effect
	var whyText string
	put := func(it *argItem, k int) {
		w := ws[k]
		// A finding's words: the word itself, shared with ws (capacity
		// one: an append copies it).
		fw := ws[k : k+1 : k+1]
		for _, vp := range node.ArgPrefixes {
			if strings.HasPrefix(w, vp.Prefix) {
				why := vp.Why
				if why == "" {
					why = fmt.Sprintf("%s argument starting with %q", node.Name, vp.Prefix)
				}
				for _, e := range vp.Effects {
					r.add(e, why, fw...)
				}
				break
			}
		}
		for _, e := range it.effects {
			if e != Read {
				if whyItem != it || whyEff != e {
					whyItem, whyEff, whyText = it, e, fmt.Sprintf("%s %s %s", node.Name, it.kind, e)
				}
				r.add(e, whyText, fw...)
			}
		}
		t := Target{Kind: it.kind, Word: w, Effects: it.effects, From: "arg"}
		if len(t.Effects) == 0 {
			t.Effects = slices.Clip(node.Effects)
		}
		r.Targets = append(r.Targets, t)
	}
	if rep < 0 {
		for k, w := range ws {
			if k >= len(items) {
				r.Unknown = append(r.Unknown, fmt.Sprintf("word %q is more than %s expects", w, node.Name))
				ok = false
				break
			}
			if items[k].kind == KindCommand {
				t := Target{Kind: KindCommand, Word: w, Words: slices.Clone(ws[k:]), From: "arg"}
				r.Targets = append(r.Targets, t)
				break
			}
			put(&items[k], k)
		}
		return ok
	}
	head, tail := items[:rep], items[rep+1:]
	k := 0
	for ; k < len(head) && k < len(ws); k++ {
		if head[k].kind == KindCommand {
			r.Targets = append(r.Targets, Target{Kind: KindCommand, Word: ws[k], Words: slices.Clone(ws[k:]), From: "arg"})
			return ok
		}
		put(&head[k], k)
	}
	rest := ws[k:]
	if items[rep].kind == KindCommand {
		if len(rest) > 0 {
			r.Targets = append(r.Targets, Target{Kind: KindCommand, Word: rest[0], Words: slices.Clone(rest), From: "arg"})
		}
		return ok
	}
	nTail := min(len(tail), len(rest))
	for j := range len(rest) - nTail {
		put(&items[rep], k+j)
	}
	for j := range nTail {
		put(&tail[len(tail)-nTail+j], k+len(rest)-nTail+j)
	}
	return ok
}

// verb finds the first positional word naming one of node's verbs.
func (n *Command) verb(ws []string) (*Verb, string) {
	for _, w := range ws {
		for _, v := range n.Verbs {
			for _, vw := range v.Words {
				if w == vw || strings.HasPrefix(w, vw+"-") {
					return v, w
				}
			}
		}
	}
	return nil, ""
}

// abbrev finds the listed long option that name ("--out") is a unique
// prefix of, as getopt_long would take it. ambiguous is true when name is
// the prefix of more than one listed option and one of them does more
// than read: the program may take it for that one.
func (n *Command) abbrev(name string) (o *Option, ambiguous bool) {
	if len(name) < 3 {
		return nil, false
	}
	var found []*Option
	for c := n; c != nil; c = c.parent {
		for full, opt := range c.opts {
			if strings.HasPrefix(full, "--") && strings.HasPrefix(full, name) && !slices.Contains(found, opt) {
				found = append(found, opt)
			}
		}
	}
	switch {
	case len(found) == 1:
		return found[0], false
	case len(found) > 1:
		for _, opt := range found {
			if len(opt.Until) > 0 || slices.ContainsFunc(opt.Effects, func(e Effect) bool { return e != Read }) || len(opt.Values) > 0 {
				return nil, true
			}
		}
	}
	return nil, false
}
