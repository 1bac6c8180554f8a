package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// call reads one simple command and looks through its wrappers.
func (p *parser) call(n *syntax.CallExpr, redirs []*syntax.Redirect, fr frame) {
	c := p.newCommand()
	*c = Command{Ctx: fr.ctx, Depth: fr.depth, Parent: fr.parent}
	if len(n.Args) > 0 || len(n.Assigns) > 0 {
		c.Text = p.text(fr, n)
	} else if len(redirs) > 0 {
		c.Text = p.text(fr, redirs[0])
	}
	words := p.newWords(len(n.Args))
	for _, w := range n.Args {
		words = append(words, p.word(w, fr))
	}
	for _, a := range n.Assigns {
		// NAME=v alone sets a shell variable; before a command, only the
		// command's environment.
		c.Assigns = append(c.Assigns, p.assign(a, fr, len(n.Args) == 0))
	}
	c.Redirs = p.redirs(redirs, fr)
	p.unwrap(c, words, fr)
	p.afterCall(words, fr)
}

// mutators are the builtins that change variables in ways the parser does
// not follow (or run code that may): after one, no variable is known.
var mutators = set("unset", "read", "mapfile", "readarray", "getopts", "printf", "eval", "source", ".", "trap",
	"declare", "typeset", "local", "export", "readonly", "let", "set", "shift", "cd", "pushd", "popd")

// afterCall forgets the variables a command may have changed, and notes
// aliases and hashed names, after which command names are not what they
// say.
func (p *parser) afterCall(words []Word, fr frame) {
	if len(words) == 0 {
		return
	}
	name := words[0]
	if name.Known && (name.Value == "builtin" || name.Value == "command") && len(words) > 1 {
		name = words[1]
	}
	if !name.Known || mutators[name.Value] && name.Value != "cd" && name.Value != "pushd" && name.Value != "popd" {
		p.vars = map[string]varState{}
	}
	for _, f := range p.s.Functions {
		if name.Known && name.Value == f {
			p.vars = map[string]varState{}
		}
	}
	if name.Known && (name.Value == "alias" && len(words) > 1 || name.Value == "hash" && len(words) > 1 ||
		name.Value == "shopt" && len(words) > 1 || name.Value == "enable" && len(words) > 1) {
		p.s.Findings = append(p.s.Findings, Finding{Kind: ErrUncertain, Command: len(p.s.Commands) - 1,
			Why: name.Value + " may change what the command names after it run"})
	}
}

// step is what one wrapper does with the words after it.
type step struct {
	wrap Wrap
	// inner are the words of the command it runs (nil: none).
	inner []Word
	// script is a command line it runs by a shell (sh -c, su -c, ssh).
	script *string
	// opaque: it runs code that cannot be read.
	opaque *Opaque
	// stop: it runs no command of its own words (sudo -l, command -v): the
	// wrapper is the command.
	stop bool
	// moreArgs: the inner command gets words not on the line.
	moreArgs bool
	// children: commands it runs besides being a command itself (find
	// -exec); the wrapper stays the command.
	children [][]Word
}

// unwrap strips wrappers from words and adds the command (or the nested
// script's commands).
func (p *parser) unwrap(c *Command, words []Word, fr frame) {
	for range 64 { // a bound on wrappers of wrappers
		if len(words) == 0 || !words[0].Known {
			break
		}
		name := path.Base(words[0].Value)
		h, ok := handlers[name]
		if !ok {
			if isInterpreter(name) {
				c.Opaque = interpreter(name, words[1:])
			}
			break
		}
		st := h(name, words[1:])
		if st.opaque != nil {
			c.Opaque = st.opaque
			break
		}
		if st.stop {
			break
		}
		if len(st.children) > 0 {
			idx := p.add(p.finish(c, words), fr)
			for _, ch := range st.children {
				g := fr
				g.parent = idx
				g.wraps = append(append(append([]Wrap(nil), fr.wraps...), c.Wrappers...), st.wrap)
				g.pipe = nil
				k := p.newCommand()
				*k = Command{Ctx: fr.ctx, Depth: fr.depth, Parent: idx, Text: joinRaw(ch), MoreArgs: true}
				p.unwrap(k, ch, g)
			}
			return
		}
		if st.script == nil && len(st.inner) == 0 {
			break // a wrapper with no command: it is the command
		}
		st.wrap.Name = strings.TrimSpace(name + " " + st.wrap.Name)
		if st.script != nil {
			c.Wrappers = append(c.Wrappers, st.wrap)
			p.nested(c, *st.script, fr)
			return
		}
		c.Wrappers = append(c.Wrappers, st.wrap)
		c.MoreArgs = c.MoreArgs || st.moreArgs
		words = st.inner
	}
	p.add(p.finish(c, words), fr)
}

func (p *parser) finish(c *Command, words []Word) *Command {
	c.Words = words
	if len(words) > 0 && !words[0].Known && c.Opaque == nil {
		c.Opaque = &Opaque{Kind: "unknown", Code: words[0].Raw, Why: "the command's name is not certain (" + words[0].Why + ")"}
	}
	return c
}

// nested parses script as run by a shell for c (its wrappers recorded).
func (p *parser) nested(c *Command, script string, fr frame) {
	if fr.depth+1 > p.o.MaxDepth {
		c.Opaque = &Opaque{Kind: "unknown", Code: script, Why: "scripts nested too deep"}
		c.Words = []Word{{Raw: script, Value: script, Why: "a script nested too deep"}}
		i := p.add(c, fr)
		p.s.Findings = append(p.s.Findings, Finding{Kind: ErrTooDeep, Why: "scripts nested more than " + itoa(p.o.MaxDepth) + " deep", Command: i})
		return
	}
	f, err := p.parseSource(script)
	if err != nil {
		c.Opaque = &Opaque{Kind: "unknown", Code: script, Why: "a script that does not parse: " + err.Error()}
		c.Words = []Word{{Raw: script, Value: script, Why: "a script that does not parse"}}
		i := p.add(c, fr)
		p.s.Findings = append(p.s.Findings, Finding{Kind: ErrSyntax, Why: "could not parse: " + err.Error(), Command: i})
		return
	}
	if p.s.nested == nil {
		p.s.nested = map[string]*syntax.File{}
	}
	p.s.nested[script] = f
	p.s.trees = append(p.s.trees, f)
	g := fr
	g.depth++
	g.wraps = append(append([]Wrap(nil), fr.wraps...), c.Wrappers...)
	g.ctx = fr.ctx
	g.ctx.Op = ""
	for _, w := range c.Wrappers {
		if w.Remote != "" {
			g.remote = true
		}
	}
	saved := p.vars
	p.vars = map[string]varState{} // a new shell: the variables it gets are not known
	first := len(p.s.Commands)
	p.file(f, script, g)
	p.vars = saved
	if first == len(p.s.Commands) {
		// An empty script: the wrapper itself, running nothing.
		c.Words = nil
		p.add(c, fr)
		return
	}
	for _, k := range p.s.Commands[first:] {
		if k.Depth == g.depth {
			k.Redirs = append(append([]Redirect(nil), c.Redirs...), k.Redirs...)
			k.Assigns = append(append([]Assign(nil), c.Assigns...), k.Assigns...)
		}
	}
}

func joinRaw(ws []Word) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = w.Raw
	}
	return strings.Join(s, " ")
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
