package risk

import (
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// dfaMinLen is the text length from which a rule is matched by its lazy
// DFA (matchDFA) rather than by Go's regexp. On short texts regexp uses its
// backtracker, which is fast; on long ones it falls back to its NFA, which
// steps every live thread over every rune (about 25 ns a byte for a typical
// rule, 1.7 ms a rule on 64 KB). The DFA costs a table lookup a byte once its
// states are built, and skips the bytes where no match can start.
const dfaMinLen = 4 << 10

// dfaMaxStates bounds the states one DFA cache may build; past it the cache
// is dropped and the text is matched by regexp instead (exact either way).
const dfaMaxStates = 1000

// Context classes of the rune before a position: all Go's empty-width
// assertions need to know of it (syntax.EmptyOpContext).
const (
	prevText  = iota // no rune before: beginning of text
	prevNL           // '\n'
	prevWord         // an ASCII word character
	prevOther        // anything else, non-ASCII and invalid UTF-8 included
	numPrev
)

// prevRune is a representative rune of each context class.
var prevRune = [numPrev]rune{-1, '\n', 'a', ' '}

func prevClass(r rune) uint8 {
	switch {
	case r == '\n':
		return prevNL
	case syntax.IsWordChar(r):
		return prevWord
	}
	return prevOther
}

// dfaProg is a rule's regexp compiled to a program (as regexp.Compile does
// it) with what the DFA needs about it; immutable once built.
type dfaProg struct {
	prog *syntax.Prog
	// first holds every byte a match can start with (a superset); when
	// skip is set, bytes not in first are jumped over while no match is
	// under way.
	first [256]bool
	skip  bool
	// lead is the lowercase ASCII literal every match begins with (after
	// empty-width assertions), or "". On a folded text (isFolded) a match
	// can only begin where lead occurs, so while no match is under way the
	// DFA jumps to its next occurrence.
	lead string
}

// newDFAProg compiles src exactly as regexp.Compile does.
func newDFAProg(src string) (*dfaProg, error) {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, err
	}
	p := &dfaProg{prog: prog}
	p.skip = p.firstBytes()
	if p.skip {
		p.lead = p.leadLiteral()
	}
	return p, nil
}

// leadLiteral returns the literal that every match begins with, lowercase
// ASCII, as it appears in a folded text: the program's first instructions
// after the empty-width ones, while each is one rune, or one ASCII letter
// with its case folds (its capital and, for k and s, the Kelvin sign and
// the long s, which a folded text never holds). It stops at the first
// branch.
func (p *dfaProg) leadLiteral() string {
	var lead []byte
	pc := uint32(p.prog.Start)
	for steps := 0; steps < len(p.prog.Inst); steps++ {
		in := &p.prog.Inst[pc]
		switch in.Op {
		case syntax.InstNop, syntax.InstCapture, syntax.InstEmptyWidth:
			pc = in.Out
			continue
		case syntax.InstRune1:
			if in.Rune[0] >= utf8.RuneSelf || 'A' <= in.Rune[0] && in.Rune[0] <= 'Z' {
				return string(lead)
			}
			lead = append(lead, byte(in.Rune[0]))
			pc = in.Out
			continue
		case syntax.InstRune:
			b, ok := foldedByte(in)
			if !ok {
				return string(lead)
			}
			lead = append(lead, b)
			pc = in.Out
			continue
		}
		return string(lead)
	}
	return string(lead)
}

// foldedByte returns the one byte of a folded text that the single-rune
// instruction in matches, when it matches an ASCII letter and its case
// folds only (or one rune that is neither a letter nor folded).
func foldedByte(in *syntax.Inst) (byte, bool) {
	if len(in.Rune) != 1 {
		return 0, false
	}
	r0 := in.Rune[0]
	orbit := []rune{r0}
	if syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
		for r := unicode.SimpleFold(r0); r != r0; r = unicode.SimpleFold(r) {
			orbit = append(orbit, r)
		}
	}
	var lower rune = -1
	for _, r := range orbit {
		switch {
		case 'A' <= r && r <= 'Z', r == '\u017f', r == '\u212a':
			// never in a folded text
		case r < utf8.RuneSelf && lower < 0:
			lower = r
		default:
			return 0, false
		}
	}
	if lower < 0 {
		return 0, false
	}
	return byte(lower), true
}

// isFolded reports whether text holds no ASCII capital, no long s (U+017F)
// and no Kelvin sign (U+212A): a normalised, IGNORECASE-folded text (see
// foldIgnoreCase) never does. There a case-folded ASCII letter of a pattern
// can only match its lowercase self.
func isFolded(text string) bool {
	for i := 0; i < len(text); i++ {
		if 'A' <= text[i] && text[i] <= 'Z' {
			return false
		}
	}
	return !strings.Contains(text, "\u017f") && !strings.Contains(text, "\u212a")
}

// firstBytes fills first with every byte that can begin a match, following
// the start's empty-width instructions as if every assertion held. It
// returns false (no skipping) when the empty string may match.
func (p *dfaProg) firstBytes() bool {
	seen := make([]bool, len(p.prog.Inst))
	stack := []uint32{uint32(p.prog.Start)}
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		in := &p.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Out, in.Arg)
		case syntax.InstCapture, syntax.InstNop, syntax.InstEmptyWidth:
			stack = append(stack, in.Out)
		case syntax.InstMatch:
			return false
		case syntax.InstFail:
		case syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			return false
		case syntax.InstRune, syntax.InstRune1:
			for b := range utf8.RuneSelf {
				if instMatches(in, rune(b)) {
					p.first[b] = true
				}
			}
			// Any non-ASCII rune: its first byte is at least 0x80.
			// Folding can map an ASCII letter to a non-ASCII one (k to
			// the Kelvin sign), so every class may admit them.
			for b := utf8.RuneSelf; b < 256; b++ {
				p.first[b] = true
			}
		}
	}
	return true
}

// instMatches is regexp's test of a rune instruction against r.
func instMatches(in *syntax.Inst, r rune) bool {
	switch in.Op {
	case syntax.InstRune:
		return in.MatchRune(r)
	case syntax.InstRune1:
		return r == in.Rune[0]
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return r != '\n'
	}
	return false
}

// dfaState is a set of program counters waiting to read the next rune (the
// threads under way), and the class of the rune before; the start of a
// match is added to every state when it is stepped.
type dfaState struct {
	pcs   []uint32
	prev  uint8
	ascii [utf8.RuneSelf]*dfaState // transitions on ASCII runes, built lazily
	match [utf8.RuneSelf]bool      // stepping on that rune finds a match
	done  [utf8.RuneSelf]bool      // ascii[c] and match[c] are computed
}

// dfaCache holds the states built so far for one program; one goroutine
// uses it at a time (they are pooled).
type dfaCache struct {
	p      *dfaProg
	states map[string]*dfaState
	idle   [numPrev]*dfaState // no thread under way
	// scratch for closures
	seen  []uint32 // generation marks per pc
	gen   uint32
	stack []uint32
	set   []uint32
	key   []byte
}

func newDFACache(p *dfaProg) *dfaCache {
	c := &dfaCache{p: p, seen: make([]uint32, len(p.prog.Inst))}
	c.reset()
	return c
}

func (c *dfaCache) reset() {
	c.states = make(map[string]*dfaState)
	for k := range c.idle {
		c.idle[k] = c.intern(nil, uint8(k))
	}
}

// intern returns the state for the sorted pcs and prev, building it once.
func (c *dfaCache) intern(pcs []uint32, prev uint8) *dfaState {
	c.key = c.key[:0]
	c.key = append(c.key, prev)
	for _, pc := range pcs {
		c.key = strconv.AppendUint(c.key, uint64(pc), 36)
		c.key = append(c.key, ',')
	}
	if s, ok := c.states[string(c.key)]; ok {
		return s
	}
	s := &dfaState{pcs: slices.Clone(pcs), prev: prev}
	c.states[string(c.key)] = s
	return s
}

// step returns the state after reading r from s, and whether a match ends
// before r (at the position between s's rune and r); r < 0 is the end of
// the text, after which there is no state.
func (c *dfaCache) step(s *dfaState, r rune) (*dfaState, bool) {
	flag := syntax.EmptyOpContext(prevRune[s.prev], r)
	c.gen++
	if c.gen == 0 {
		clear(c.seen)
		c.gen = 1
	}
	c.set = c.set[:0]
	c.stack = append(c.stack[:0], uint32(c.p.prog.Start))
	c.stack = append(c.stack, s.pcs...)
	inst := c.p.prog.Inst
	matched := false
	for len(c.stack) > 0 {
		pc := c.stack[len(c.stack)-1]
		c.stack = c.stack[:len(c.stack)-1]
		if c.seen[pc] == c.gen {
			continue
		}
		c.seen[pc] = c.gen
		in := &inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			c.stack = append(c.stack, in.Arg, in.Out)
		case syntax.InstCapture, syntax.InstNop:
			c.stack = append(c.stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^flag == 0 {
				c.stack = append(c.stack, in.Out)
			}
		case syntax.InstMatch:
			matched = true
		case syntax.InstFail:
		default:
			if r >= 0 && instMatches(in, r) {
				c.set = append(c.set, in.Out)
			}
		}
	}
	if r < 0 {
		return nil, matched
	}
	slices.Sort(c.set)
	c.set = slices.Compact(c.set)
	return c.intern(c.set, prevClass(r)), matched
}

// matches reports whether the program matches anywhere in text, as
// regexp.MatchString does, and false with ok unset when the cache grew past
// dfaMaxStates (it is then dropped).
func (c *dfaCache) matches(text string, folded bool) (matched, ok bool) {
	return c.ends(text, folded, func(int) bool { return true })
}

// ends calls end with every position of text at which a match of the
// program ends, in increasing order, until end returns true; it returns
// whether one did. ok is false when the cache grew past dfaMaxStates (it
// is then dropped, and end may have been called for a prefix of text).
func (c *dfaCache) ends(text string, folded bool, end func(e int) bool) (matched, ok bool) {
	s := c.idle[prevText]
	p := c.p
	lead := ""
	if folded {
		lead = p.lead
	}
	for i := 0; i < len(text); {
		if p.skip && len(s.pcs) == 0 {
			// Nothing under way: no match can start before a byte of
			// first, nor, in a folded text, before an occurrence of
			// lead.
			j := i
			if lead != "" {
				if k := strings.Index(text[i:], lead); k < 0 {
					j = len(text)
				} else {
					j = i + k
				}
			} else {
				for j < len(text) && !p.first[text[j]] {
					j++
				}
			}
			if j > i {
				s = c.idle[byteClass(text[j-1])]
				i = j
			}
			if j == len(text) {
				break
			}
		}
		b := text[i]
		if b < utf8.RuneSelf {
			if !s.done[b] {
				next, m := c.step(s, rune(b))
				s.ascii[b], s.match[b], s.done[b] = next, m, true
				if len(c.states) > dfaMaxStates {
					c.reset()
					return false, false
				}
			}
			if s.match[b] && end(i) {
				return true, true
			}
			s = s.ascii[b]
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(text[i:])
		next, m := c.step(s, r)
		if len(c.states) > dfaMaxStates {
			c.reset()
			return false, false
		}
		if m && end(i) {
			return true, true
		}
		s = next
		i += w
	}
	if _, m := c.step(s, -1); m && end(len(text)) {
		return true, true
	}
	return false, true
}

// byteClass is prevClass of the rune that ends with byte b: a byte of a
// multi-byte or invalid sequence belongs to a non-ASCII rune or to
// utf8.RuneError, neither a word character nor a newline.
func byteClass(b byte) uint8 {
	if b >= utf8.RuneSelf {
		return prevOther
	}
	return prevClass(rune(b))
}

// lazyDFA is a rule's DFA: its program compiled on first use, a cache of
// states kept for the process (the states a table needs are few, under a
// hundred a rule on the corpora), and a pool of others for classifications
// running at the same time (a pool is emptied by every garbage collection,
// so it would not keep the states of one).
type lazyDFA struct {
	once sync.Once
	p    *dfaProg
	mu   sync.Mutex
	main *dfaCache // guarded by mu
	pool sync.Pool
}

// matchString reports whether src, the rule's regexp, matches text; ok is
// false when the DFA could not decide (the caller then runs the regexp).
func (d *lazyDFA) matchString(src, text string, folded bool) (matched, ok bool) {
	return d.ends(src, text, folded, func(int) bool { return true })
}

// ends is dfaCache.ends with the DFA of src, ok false when the DFA could not
// decide.
func (d *lazyDFA) ends(src, text string, folded bool, end func(e int) bool) (matched, ok bool) {
	d.once.Do(func() {
		p, err := newDFAProg(src)
		if err == nil {
			d.p = p
		}
	})
	if d.p == nil {
		return false, false
	}
	if d.mu.TryLock() {
		defer d.mu.Unlock()
		if d.main == nil {
			d.main = newDFACache(d.p)
		}
		return d.main.ends(text, folded, end)
	}
	c, _ := d.pool.Get().(*dfaCache)
	if c == nil {
		c = newDFACache(d.p)
	}
	matched, ok = c.ends(text, folded, end)
	d.pool.Put(c)
	return matched, ok
}
