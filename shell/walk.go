package shell

import (
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// varState is what the parser knows of a variable set earlier in the line.
type varState struct {
	val   string
	known bool // false: set, but to something not certain (or maybe not set)
}

type parser struct {
	o       Options
	s       *Script
	vars    map[string]varState
	pipes   int
	tooDeep bool
	sp      *syntax.Parser
	// cmds and words are slabs the line's Commands and their words are
	// cut from: one allocation for many commands, not one each.
	cmds     []Command
	words    []Word
	wordSlab int // the size of the last slab of words
	cmdSlab  int // the size of the last slab of commands
}

// newCommand returns a zeroed Command cut from the parser's slab. The
// slab grows with the line (4, 8, ... up to 256 commands a slab), so a
// short line wastes little and a long one allocates rarely; slabs a
// released Script gave back are used first (see Script.Release).
func (p *parser) newCommand() *Command {
	if len(p.cmds) == 0 {
		p.cmdSlab = min(max(2*p.cmdSlab, 4), 256)
		p.cmds = p.slabs().commands(p.cmdSlab)
	}
	c := &p.cmds[0]
	p.cmds = p.cmds[1:]
	return c
}

// newWords returns an empty slice of capacity n cut from the parser's
// slab of words: appending past n copies it elsewhere, never onto the
// next command's words. Slabs grow with the line like newCommand's.
func (p *parser) newWords(n int) []Word {
	if n > len(p.words) {
		if n > 64 {
			return make([]Word, 0, n)
		}
		p.wordSlab = min(max(2*p.wordSlab, 16), 512)
		p.words = p.slabs().words(max(p.wordSlab, n))
	}
	w := p.words[:0:n]
	p.words = p.words[n:]
	return w
}

// slabs returns the slabs the parser's Script holds, taken from the pool
// (or new) the first time.
func (p *parser) slabs() *slabs {
	if p.s.slabs == nil {
		p.s.slabs = slabPool.Get().(*slabs)
	}
	return p.s.slabs
}

// slabs are the slabs a Script's Commands and words were cut from: those
// in use (cmds, words) and those free, given back by a Script released
// before, zeroed.
type slabs struct {
	usedCmds, freeCmds   [][]Command
	usedWords, freeWords [][]Word
}

var slabPool = sync.Pool{New: func() any { return new(slabs) }}

// maxFreeSlabs bounds the slabs of each kind kept for the next Script.
const maxFreeSlabs = 64

// commands returns a slab of at least n commands, zeroed.
func (s *slabs) commands(n int) []Command { return takeSlab(&s.freeCmds, &s.usedCmds, n) }

// words returns a slab of at least n words.
func (s *slabs) words(n int) []Word { return takeSlab(&s.freeWords, &s.usedWords, n) }

// takeSlab returns the last free slab when it holds n, else a new one of
// n, and counts it as used.
func takeSlab[T any](free, used *[][]T, n int) []T {
	var c []T
	if k := len(*free); k > 0 && len((*free)[k-1]) >= n {
		c, *free = (*free)[k-1], (*free)[:k-1]
	} else {
		c = make([]T, n)
	}
	*used = append(*used, c)
	return c
}

// free zeroes the slabs in use and keeps them (up to maxFreeSlabs of each
// kind) for the next Script.
func (s *slabs) free() {
	for _, c := range s.usedCmds {
		clear(c)
		if len(s.freeCmds) < maxFreeSlabs {
			s.freeCmds = append(s.freeCmds, c)
		}
	}
	for _, w := range s.usedWords {
		clear(w)
		if len(s.freeWords) < maxFreeSlabs {
			s.freeWords = append(s.freeWords, w)
		}
	}
	clear(s.usedCmds)
	clear(s.usedWords)
	s.usedCmds, s.usedWords = s.usedCmds[:0], s.usedWords[:0]
	// The largest last: a slab is taken from the end.
	slices.SortFunc(s.freeCmds, func(a, b []Command) int { return len(a) - len(b) })
	slices.SortFunc(s.freeWords, func(a, b []Word) int { return len(a) - len(b) })
}

// frame is the context a statement is read in.
type frame struct {
	ctx    Context
	depth  int // scripts deep
	nest   int // syntax nesting
	parent int
	src    string
	wraps  []Wrap // wrappers of the command that runs this script
	remote bool   // a remote script: variables are the remote shell's
	// uncertain: assignments here may or may not happen (a branch, a loop,
	// a subshell): they make variables unknown rather than set.
	uncertain bool
	pipe      *Pipe
	stmt      *syntax.Stmt // the statement being read
}

func (p *parser) file(f *syntax.File, src string, fr frame) {
	fr.src = src
	p.stmts(f.Stmts, fr)
}

// branch is the frame of a part that may or may not run (a branch of if
// or case): its assignments make variables unknown.
func (fr frame) branch() frame {
	fr.uncertain = true
	return fr
}

// loop is the frame of a loop's body, which may run any number of times.
func (fr frame) loop() frame {
	fr = fr.branch()
	fr.ctx.Loop = true
	return fr
}

// cond is the frame of a condition (of if or while).
func (fr frame) cond() frame {
	fr.ctx.Condition = true
	return fr
}

func (p *parser) stmts(ss []*syntax.Stmt, fr frame) {
	for i, s := range ss {
		f := fr
		if i > 0 {
			f.ctx.Op = ";"
		}
		p.stmt(s, f)
	}
}

func (p *parser) deeper(fr frame) (frame, bool) {
	fr.nest++
	if fr.nest > p.o.MaxNesting {
		p.tooDeep = true
		return fr, false
	}
	return fr, true
}

func (p *parser) stmt(s *syntax.Stmt, fr frame) {
	fr, ok := p.deeper(fr)
	if !ok {
		return
	}
	fr.stmt = s
	if s.Negated {
		fr.ctx.Negated = true
	}
	if s.Background || s.Coprocess {
		fr.ctx.Background = true
		fr.uncertain = true
	}
	first := len(p.s.Commands)
	p.command(s.Cmd, s.Redirs, fr)
	// Redirections of a compound command apply to every command in it.
	if _, simple := s.Cmd.(*syntax.CallExpr); !simple && len(s.Redirs) > 0 {
		rs := p.redirs(s.Redirs, fr)
		if first == len(p.s.Commands) {
			c := p.newCommand()
			*c = Command{Redirs: rs, Ctx: fr.ctx, Depth: fr.depth, Parent: fr.parent, Text: p.text(fr, s)}
			p.add(c, fr)
		}
		for _, c := range p.s.Commands[first:] {
			if c.Depth == fr.depth {
				c.Redirs = append(c.Redirs, rs...)
			}
		}
	}
}

func (p *parser) text(fr frame, n syntax.Node) string {
	a, b := int(n.Pos().Offset()), int(n.End().Offset())
	if a < 0 || b > len(fr.src) || a > b {
		return ""
	}
	return fr.src[a:b]
}

func (p *parser) add(c *Command, fr frame) int {
	c.stmt = fr.stmt
	if fr.pipe != nil {
		c.Pipe = *fr.pipe
	}
	if len(fr.wraps) > 0 {
		c.Wrappers = append(append([]Wrap(nil), fr.wraps...), c.Wrappers...)
	}
	p.s.Commands = append(p.s.Commands, c)
	return len(p.s.Commands) - 1
}

func (p *parser) command(cmd syntax.Command, redirs []*syntax.Redirect, fr frame) {
	switch n := cmd.(type) {
	case nil:
		if len(redirs) > 0 {
			p.call(&syntax.CallExpr{}, redirs, fr)
		}
	case *syntax.CallExpr:
		p.call(n, redirs, fr)
	case *syntax.BinaryCmd:
		switch n.Op {
		case syntax.Pipe, syntax.PipeAll:
			p.pipeline(n, fr)
		default:
			// A chain a && b || c ... (nested to the left) is a list, read
			// in a loop: it does not count towards MaxNesting.
			chain := []*syntax.BinaryCmd{n}
			first := n.X
			for {
				b, ok := first.Cmd.(*syntax.BinaryCmd)
				if !ok || b.Op == syntax.Pipe || b.Op == syntax.PipeAll || first.Negated || first.Background || first.Coprocess || len(first.Redirs) > 0 {
					break
				}
				chain = append(chain, b)
				first = b.X
			}
			fr.nest--
			p.stmt(first, fr)
			for i := len(chain) - 1; i >= 0; i-- {
				g := fr
				g.ctx.Op = chain[i].Op.String()
				g.ctx.Condition = true
				g.uncertain = true
				p.stmt(chain[i].Y, g)
			}
		}
	case *syntax.Subshell:
		g := fr
		g.ctx.Subshell = true
		saved := p.saveVars()
		p.stmts(n.Stmts, g)
		p.vars = saved
	case *syntax.Block:
		p.stmts(n.Stmts, fr)
	case *syntax.IfClause:
		g := fr.branch()
		for c := n; c != nil; c = c.Else {
			p.stmts(c.Cond, g.cond())
			p.stmts(c.Then, g)
		}
	case *syntax.WhileClause:
		g := fr.loop()
		p.stmts(n.Cond, g.cond())
		p.stmts(n.Do, g)
	case *syntax.ForClause:
		g := fr.loop()
		switch l := n.Loop.(type) {
		case *syntax.WordIter:
			for _, w := range l.Items {
				p.s.Others = append(p.s.Others, p.word(w, g))
			}
			p.vars[l.Name.Value] = varState{}
		case *syntax.CStyleLoop:
			p.arith(g, l.Init, l.Cond, l.Post)
		}
		p.stmts(n.Do, g)
	case *syntax.CaseClause:
		p.s.Others = append(p.s.Others, p.word(n.Word, fr))
		g := fr.branch()
		for _, it := range n.Items {
			for _, w := range it.Patterns {
				p.s.Others = append(p.s.Others, p.word(w, g))
			}
			p.stmts(it.Stmts, g)
		}
	case *syntax.FuncDecl:
		name := ""
		if n.Name != nil {
			name = n.Name.Value
		}
		p.s.Functions = append(p.s.Functions, name)
		g := fr
		g.uncertain = true
		g.ctx.Function = name
		p.stmt(n.Body, g)
	case *syntax.DeclClause:
		defer func() { p.declared(n) }()
		c := p.newCommand()
		*c = Command{Ctx: fr.ctx, Depth: fr.depth, Parent: fr.parent, Text: p.text(fr, n)}
		variant := n.Variant.Value
		c.Words = append(c.Words, Word{Raw: variant, Value: variant, Known: true})
		for _, a := range n.Args {
			if a.Naked {
				if a.Name != nil {
					c.Words = append(c.Words, Word{Raw: a.Name.Value, Value: a.Name.Value, Known: true})
				} else if a.Value != nil {
					c.Words = append(c.Words, p.word(a.Value, fr))
				}
				continue
			}
			c.Assigns = append(c.Assigns, p.assign(a, fr, true))
		}
		c.Redirs = p.redirs(redirs, fr)
		p.add(c, fr)
	case *syntax.TimeClause:
		g := fr
		g.wraps = append(append([]Wrap(nil), fr.wraps...), Wrap{Name: "time"})
		if n.Stmt != nil {
			p.stmt(n.Stmt, g)
		}
	case *syntax.CoprocClause:
		g := fr
		g.ctx.Background = true
		g.uncertain = true
		p.stmt(n.Stmt, g)
	case *syntax.LetClause:
		c := p.newCommand()
		*c = Command{Ctx: fr.ctx, Depth: fr.depth, Parent: fr.parent, Text: p.text(fr, n)}
		c.Words = []Word{{Raw: "let", Value: "let", Known: true}}
		for _, e := range n.Exprs {
			t := p.text(fr, e)
			c.Words = append(c.Words, Word{Raw: t, Value: t, Why: "arithmetic"})
			p.arith(fr, e)
		}
		c.Redirs = p.redirs(redirs, fr)
		p.add(c, fr)
		p.forgetArith(n)
	case *syntax.ArithmCmd:
		p.arith(fr, n.X)
		p.forgetArith(n)
	case *syntax.TestClause:
		p.testWords(n, fr)
	case *syntax.TestDecl:
		p.s.Others = append(p.s.Others, p.word(n.Description, fr))
		p.stmt(n.Body, fr)
	default:
		p.s.Findings = append(p.s.Findings, Finding{Kind: ErrSyntax, Why: "a construct not read: " + p.text(fr, cmd), Command: -1})
	}
}

// testWords reads the words of [[ ... ]] (apart from command, whose frame
// would otherwise be captured by the walk's function and so allocated for
// every command).
func (p *parser) testWords(n *syntax.TestClause, fr frame) {
	syntax.Walk(n, func(m syntax.Node) bool {
		if w, ok := m.(*syntax.Word); ok {
			p.s.Others = append(p.s.Others, p.word(w, fr))
			return false
		}
		return true
	})
}

// forgetArith: assignments in arithmetic ((x=1)), let x=1 make x unknown.
func (p *parser) forgetArith(n syntax.Node) {
	syntax.Walk(n, func(m syntax.Node) bool {
		switch e := m.(type) {
		case *syntax.BinaryArithm:
			if x, ok := e.X.(*syntax.Word); ok && e.Op >= syntax.Assgn {
				if l := x.Lit(); l != "" {
					p.vars[l] = varState{}
				}
			}
		case *syntax.UnaryArithm:
			if x, ok := e.X.(*syntax.Word); ok && (e.Op == syntax.Inc || e.Op == syntax.Dec) {
				if l := x.Lit(); l != "" {
					p.vars[l] = varState{}
				}
			}
		}
		return true
	})
}

// arith reads the command substitutions inside arithmetic expressions.
func (p *parser) arith(fr frame, es ...syntax.ArithmExpr) {
	for _, e := range es {
		if e == nil {
			continue
		}
		syntax.Walk(e, func(m syntax.Node) bool {
			if w, ok := m.(*syntax.Word); ok {
				p.substs(w, fr)
				return false
			}
			return true
		})
	}
}

func (p *parser) saveVars() map[string]varState {
	m := make(map[string]varState, len(p.vars))
	for k, v := range p.vars {
		m[k] = v
	}
	return m
}

// pipeline reads a | b | c: every stage but the last runs in a subshell
// (bash without lastpipe: the last too, for what it sets).
func (p *parser) pipeline(n *syntax.BinaryCmd, fr frame) {
	var stages []*syntax.Stmt
	var stderr []bool
	var flatten func(s *syntax.Stmt, all bool)
	flatten = func(s *syntax.Stmt, all bool) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && !s.Negated && !s.Background && len(s.Redirs) == 0 {
			flatten(b.X, false)
			flatten(b.Y, b.Op == syntax.PipeAll)
			return
		}
		stages = append(stages, s)
		stderr = append(stderr, all)
	}
	flatten(n.X, false)
	flatten(n.Y, n.Op == syntax.PipeAll)
	p.pipes++
	id := p.pipes
	var from []int
	saved := p.saveVars()
	for i, s := range stages {
		g := fr
		g.ctx.Subshell = true
		g.uncertain = true
		if i > 0 {
			g.ctx.Op = "|"
		}
		g.pipe = &Pipe{ID: id, Pos: i, Len: len(stages), From: from, Stderr: i > 0 && stderr[i]}
		first := len(p.s.Commands)
		p.stmt(s, g)
		from = nil
		for j := first; j < len(p.s.Commands); j++ {
			if p.s.Commands[j].Pipe.ID == id && p.s.Commands[j].Pipe.Pos == i && !p.s.Commands[j].Ctx.Substitute {
				from = append(from, j)
			}
		}
	}
	// What a pipeline's stages set is not seen after it.
	for k := range p.vars {
		if v, ok := saved[k]; !ok || v != p.vars[k] {
			p.vars[k] = varState{}
		}
	}
}

// declared forgets the variables after declare -n (a nameref: assigning
// one assigns another) or a declare whose options are not certain.
func (p *parser) declared(n *syntax.DeclClause) {
	for _, a := range n.Args {
		if a.Naked && a.Value != nil {
			l := a.Value.Lit()
			if l == "" || strings.HasPrefix(l, "-") && strings.Contains(l, "n") || strings.HasPrefix(l, "+") {
				p.vars = map[string]varState{}
			}
		}
	}
}
