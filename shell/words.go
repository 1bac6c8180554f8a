package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// word reads w: its certain value, and the commands in its substitutions.
func (p *parser) word(w *syntax.Word, fr frame) Word {
	if w == nil {
		return Word{Known: true}
	}
	raw := p.text(fr, w)
	if len(w.Parts) == 1 {
		switch q := w.Parts[0].(type) {
		case *syntax.Lit:
			if !strings.ContainsAny(q.Value, "*?{~\\") && !bracketGlob(q.Value) {
				// A [ with no ] after it matches only itself: `[ -f x ]`.
				return Word{Raw: raw, Value: q.Value, Known: true}
			}
		case *syntax.SglQuoted:
			if !q.Dollar {
				return Word{Raw: raw, Value: q.Value, Known: true}
			}
		}
	}
	p.substs(w, fr)
	var b strings.Builder
	why := ""
	uncertain := func(s string) {
		if why == "" {
			why = s
		}
	}
	for i, part := range w.Parts {
		p.part(part, &b, false, i == 0, uncertain)
	}
	if why == "" && raw != "" && b.Len() == 0 && !quoted(w) {
		uncertain("empty expansion")
	}
	return Word{Raw: raw, Value: b.String(), Known: why == "", Why: why}
}

func quoted(w *syntax.Word) bool {
	for _, part := range w.Parts {
		switch part.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		}
	}
	return false
}

// part appends the value of one word part; inQuotes: within "...".
func (p *parser) part(part syntax.WordPart, b *strings.Builder, inQuotes, first bool, uncertain func(string)) {
	switch n := part.(type) {
	case *syntax.Lit:
		v := n.Value
		if !inQuotes {
			if first && strings.HasPrefix(v, "~") {
				uncertain("tilde (a home directory)")
			}
			if strings.ContainsAny(v, "*?[") {
				uncertain("glob")
			}
			if strings.Contains(v, "{") && (strings.Contains(v, ",") || strings.Contains(v, "..")) {
				uncertain("brace expansion")
			}
			v = unescape(v)
		} else {
			v = unescapeQuoted(v)
		}
		b.WriteString(v)
	case *syntax.SglQuoted:
		if n.Dollar {
			uncertain("$'...' quoting")
		}
		b.WriteString(n.Value)
	case *syntax.DblQuoted:
		if n.Dollar {
			uncertain(`$"..." (translated) quoting`)
		}
		for _, q := range n.Parts {
			p.part(q, b, true, false, uncertain)
		}
	case *syntax.ParamExp:
		name := ""
		if n.Param != nil {
			name = n.Param.Value
		}
		v, ok := p.vars[name]
		plain := !n.Excl && !n.Length && !n.Width && n.Index == nil && n.Slice == nil && n.Repl == nil && n.Exp == nil && n.Flags == nil && n.NestedParam == nil
		if !plain || !ok || !v.known {
			uncertain("variable $" + name)
			b.WriteString("$" + name)
			return
		}
		if !inQuotes && (strings.ContainsAny(v.val, " \t\n*?[") || v.val == "") {
			uncertain("variable $" + name + " split or globbed")
		}
		b.WriteString(v.val)
	case *syntax.CmdSubst:
		uncertain("command substitution")
	case *syntax.ArithmExp:
		uncertain("arithmetic")
	case *syntax.ProcSubst:
		uncertain("process substitution")
	case *syntax.ExtGlob:
		uncertain("glob")
	default:
		uncertain("expansion")
	}
}

// unescape removes backslashes of an unquoted literal.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeQuoted removes the backslashes "..." removes (before $ ` " \ and
// newline).
func unescapeQuoted(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// substs reads the commands of the substitutions in w.
func (p *parser) substs(w *syntax.Word, fr frame) {
	if w == nil || plainWord(w) {
		return
	}
	syntax.Walk(w, func(m syntax.Node) bool {
		var ss []*syntax.Stmt
		switch n := m.(type) {
		case *syntax.CmdSubst:
			ss = n.Stmts
		case *syntax.ProcSubst:
			ss = n.Stmts
		default:
			return true
		}
		g, ok := p.deeper(fr)
		if !ok {
			return false
		}
		g.ctx.Substitute = true
		g.ctx.Subshell = true
		g.uncertain = true
		g.pipe = nil
		saved := p.saveVars()
		p.stmts(ss, g)
		p.vars = saved
		return false
	})
}

func (p *parser) assign(a *syntax.Assign, fr frame, sets bool) Assign {
	name := ""
	if a.Name != nil {
		name = a.Name.Value
	}
	out := Assign{Name: name, Append: a.Append}
	switch {
	case a.Array != nil:
		syntax.Walk(a.Array, func(m syntax.Node) bool {
			if w, ok := m.(*syntax.Word); ok {
				p.substs(w, fr)
				return false
			}
			return true
		})
		t := p.text(fr, a.Array)
		out.Value = Word{Raw: t, Value: t, Why: "array"}
	case a.Value != nil:
		out.Value = p.word(a.Value, fr)
		// An assignment's value is not split nor globbed.
		if !out.Value.Known && strings.HasPrefix(out.Value.Why, "glob") || strings.HasSuffix(out.Value.Why, "split or globbed") {
			out.Value.Known, out.Value.Why = true, ""
			p.recheck(&out.Value, a.Value)
		}
	default:
		out.Value = Word{Known: true}
	}
	if a.Index != nil {
		out.Value.Known, out.Value.Why = false, "array element"
	}
	if sets {
		p.set(name, out, fr)
	}
	return out
}

// recheck re-reads an assignment's value where globs and splitting do not
// apply, to see if something else made it uncertain.
func (p *parser) recheck(v *Word, w *syntax.Word) {
	for i, part := range w.Parts {
		var b strings.Builder
		p.part(part, &b, true, i == 0, func(s string) {
			if s != "glob" && s != "brace expansion" && v.Known {
				v.Known, v.Why = false, s
			}
		})
	}
}

func (p *parser) set(name string, a Assign, fr frame) {
	if name == "" {
		return
	}
	if fr.uncertain || a.Append || !a.Value.Known || fr.remote {
		p.vars[name] = varState{}
		return
	}
	p.vars[name] = varState{val: a.Value.Value, known: true}
}

var redirOps = map[syntax.RedirOperator]Redirect{
	syntax.RdrOut:   {Writes: true, Truncates: true},
	syntax.AppOut:   {Writes: true},
	syntax.RdrIn:    {Reads: true},
	syntax.RdrInOut: {Reads: true, Writes: true},
	syntax.DplIn:    {Dup: true},
	syntax.DplOut:   {Dup: true},
	syntax.ClbOut:   {Writes: true, Truncates: true},
	syntax.Hdoc:     {Here: true},
	syntax.DashHdoc: {Here: true},
	syntax.WordHdoc: {Here: true},
	syntax.RdrAll:   {Writes: true, Truncates: true},
	syntax.AppAll:   {Writes: true},
}

func (p *parser) redirs(rs []*syntax.Redirect, fr frame) []Redirect {
	var out []Redirect
	for _, r := range rs {
		k, ok := redirOps[r.Op]
		if !ok {
			k = Redirect{Writes: true, Truncates: true} // an operator not known: assume the worst
		}
		k.Op = r.Op.String()
		if r.N != nil {
			k.Fd = r.N.Value
		}
		k.Target = p.word(r.Word, fr)
		if r.Hdoc != nil {
			k.Target = p.word(r.Hdoc, fr)
			k.Target.Raw = p.text(fr, r.Hdoc)
		}
		if k.Dup && k.Target.Known && strings.Trim(k.Target.Value, "0123456789-") != "" {
			// >&file is &>file in bash.
			k.Dup, k.Writes, k.Truncates = false, r.Op == syntax.DplOut, r.Op == syntax.DplOut
			k.Reads = r.Op == syntax.DplIn
		}
		out = append(out, k)
	}
	return out
}

// plainWord: w has no part that can hold a command.
func plainWord(w *syntax.Word) bool {
	for _, part := range w.Parts {
		switch q := part.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, r := range q.Parts {
				switch r.(type) {
				case *syntax.Lit:
				default:
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// bracketGlob reports whether v holds a bracket expression: a [ with a ]
// after it. A lone [ or ] (the test command and its last word) is literal.
func bracketGlob(v string) bool {
	i := strings.IndexByte(v, '[')
	return i >= 0 && strings.IndexByte(v[i+1:], ']') >= 0
}
