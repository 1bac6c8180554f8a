package shell

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Options tune Parse. The zero value is usable.
type Options struct {
	// MaxBytes bounds the command line (default 1 MiB); a longer one is
	// refused with ErrTooLarge.
	MaxBytes int
	// MaxDepth bounds the scripts within scripts (sh -c, su -c, ssh, watch,
	// eval...) that are parsed in turn (default 8); deeper ones are named in
	// a finding and their commands are not read.
	MaxDepth int
	// MaxNesting bounds how deep the syntax tree of one script may go
	// (subshells, blocks, loops, substitutions; default 200).
	MaxNesting int
	// Posix parses as POSIX sh rather than bash.
	Posix bool
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = 1 << 20
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = 8
	}
	if o.MaxNesting <= 0 {
		o.MaxNesting = 200
	}
	return o
}

// Errors of a command line that cannot be read at all. Parse wraps them
// in an *Error.
var (
	ErrTooLarge   = errors.New("command too large")
	ErrNUL        = errors.New("command holds a NUL byte")
	ErrInvalidUTF = errors.New("command is not valid UTF-8")
	ErrSyntax     = errors.New("could not parse")
	ErrTooDeep    = errors.New("nested too deep")
	// ErrUncertain is a finding's kind: something in the line makes what
	// follows not certain (an alias, a hashed name).
	ErrUncertain = errors.New("not certain")
)

// Error is why a command line could not be read: Kind is one of the Err
// values above (errors.Is works), Detail says where.
type Error struct {
	Kind   error
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return e.Kind.Error()
	}
	return e.Kind.Error() + ": " + e.Detail
}

func (e *Error) Unwrap() error { return e.Kind }

// Word is one word of a command as far as it is certain.
type Word struct {
	// Raw is the word as written.
	Raw string
	// Value is the word after quote removal and the expansions that are
	// certain; when Known is false it is the best reading (Raw with quotes
	// removed where possible) and must not be trusted.
	Value string
	// Known: Value is exactly what the command gets, as one word.
	Known bool
	// Why says what made the word uncertain ("variable $X", "command
	// substitution", "glob", ...), "" when Known.
	Why string
}

// Assign is NAME=VALUE before a command (or on its own, or in export,
// declare, env ...).
type Assign struct {
	Name   string
	Value  Word
	Append bool // NAME+=VALUE
}

// Redirect is one redirection of a command.
type Redirect struct {
	// Fd is the descriptor written before the operator ("" for the
	// operator's default).
	Fd string
	// Op is the operator as written (">", ">>", "<", "<>", ">&", "&>",
	// "&>>", ">|", "<<", "<<<", "<&", "<<-").
	Op string
	// Target is the file (or descriptor, for >& and <&; the text, for
	// here-strings and here-documents).
	Target Word
	// Writes: the target is opened for writing (>, >>, >|, &>, &>>, <>);
	// Truncates for > >| &>.
	Writes, Truncates bool
	// Reads: the target file is opened for reading (<, <>).
	Reads bool
	// Dup: >& or <& onto a descriptor (Target is a number, or "-").
	Dup bool
	// Here: a here-document or here-string (no file).
	Here bool
}

// Wrap is one command a simple command was run through.
type Wrap struct {
	// Name is the wrapper's program ("sudo", "env", "find -exec", "ssh",
	// "bash -c", ...).
	Name string
	// Args are its own words (options and operands before the command).
	Args []Word
	// User is the user it runs the command as, when it changes user
	// ("root" for sudo without -u; "?" and the word as written when the
	// user is given by a word not certain; "" when unchanged or not
	// known). Values of options elsewhere follow the same "?" rule.
	User string
	// Remote is where the command runs when that is not this machine (the
	// host of ssh, "container NAME", "pod NAME", "root DIR" for chroot).
	Remote string
	// Env are assignments it makes to the command's environment (env
	// VAR=..., sudo VAR=...).
	Env []Assign
	// ClearsEnv: env -i and the like.
	ClearsEnv bool
	// Unset are the variables it removes (env -u).
	Unset []string
	// Dir is the directory it runs the command in, when it changes it
	// (env -C DIR, sudo -D DIR), as given ("?" and the word as written
	// when not certain); "" when unchanged.
	Dir string
	// Login: the command runs in User's login environment (sudo -i, su -,
	// su -l): their home, their shell's start-up files.
	Login bool
}

// Pipe is a command's place in a pipeline.
type Pipe struct {
	// ID numbers the pipelines of a Script from 1; 0: not in one.
	ID int
	// Pos is the stage (0 first) and Len the number of stages.
	Pos, Len int
	// From are the indexes (in Script.Commands) of the commands of the
	// stage before, whose output this command reads; nil for the first.
	From []int
	// Stderr: the stage before sends its errors too (|&).
	Stderr bool
}

// Context is where a command is in the script.
type Context struct {
	Background bool // run with & (or as a coprocess)
	Subshell   bool // in ( ... ), a pipeline stage not last, or a substitution
	Function   string
	Loop       bool // in a for, while or until body or condition
	Condition  bool // in an if/while condition, or the right of && or ||
	Substitute bool // inside $(...), `...` or <(...) >(...)
	Negated    bool // ! before it
	// Op is how the command's list joins it to what came before: "", ";",
	// "&&", "||", "&".
	Op string
}

// Opaque is code a command runs that the analysis cannot read.
type Opaque struct {
	// Kind: "eval", "source", "inline" (an interpreter's -c/-e code),
	// "script" (a script file), "input" (code read from its input),
	// "remote" (a command line run elsewhere that could not be read),
	// "unknown" (a command given in words not known).
	Kind string
	// Code is the code or file when known (the -c string, the file name).
	Code string
	Why  string
}

// Command is one simple command, wrappers looked through.
type Command struct {
	// Words are the command's words, wrappers removed: Words[0] is its name.
	Words []Word
	// Assigns are the assignments before it (a bare assignment has no
	// Words), or the names of export, declare, local, readonly.
	Assigns []Assign
	Redirs  []Redirect
	// Wrappers are the commands it runs through, outermost first.
	Wrappers []Wrap
	// MoreArgs: the command gets words the line does not hold (xargs, find
	// -exec with {}, parallel).
	MoreArgs bool
	// Opaque is set when it runs code the analysis cannot read.
	Opaque *Opaque
	Ctx    Context
	Pipe   Pipe
	// Depth is how many scripts deep it is (0: the line itself; 1: in a
	// sh -c script of it ...).
	Depth int
	// Parent is the index of the command that runs this one besides being
	// a command itself (find for its -exec commands), -1 for none. A
	// wrapper that is only a wrapper (sudo, sh -c, ssh) is in Wrappers
	// instead.
	Parent int
	// Text is the simple command as written.
	Text string
	// stmt is the statement it was read from (see Statement).
	stmt *syntax.Stmt
}

// Name is the command's name ("" when it has none).
func (c *Command) Name() Word {
	if len(c.Words) == 0 {
		return Word{}
	}
	return c.Words[0]
}

// NameUnknown: the command has words but its name is not certain, so
// what runs cannot be known.
func (c *Command) NameUnknown() bool { return len(c.Words) > 0 && !c.Words[0].Known }

// Args are the words after the name.
func (c *Command) Args() []Word {
	if len(c.Words) < 2 {
		return nil
	}
	return c.Words[1:]
}

// Remote is where the command runs if not here ("" for here).
func (c *Command) Remote() string {
	for _, w := range c.Wrappers {
		if w.Remote != "" {
			return w.Remote
		}
	}
	return ""
}

// Finding is something Parse could not read in full.
type Finding struct {
	// Kind is the error kind (ErrSyntax, ErrTooDeep ...).
	Kind error
	Why  string
	// Command is the index of the command it is about, -1 for none.
	Command int
}

// Script is a parsed command line.
type Script struct {
	Source string
	// Commands are the simple commands in the order they appear (those of
	// a nested script where the command running it is).
	Commands []*Command
	// Functions are the names of the functions the line defines.
	Functions []string
	// Others are the words the line holds outside any simple command, in
	// the order they appear: for-loop items, case subjects and patterns,
	// the operands of [[ ]] (a case pattern or [[ ]] operand that is a
	// pattern is not Known). The commands of their substitutions are in
	// Commands as usual.
	Others []Word
	// Findings are the parts that could not be read (a nested script that
	// does not parse, nesting past the limit). An empty list and no error
	// from Parse: everything was read.
	Findings []Finding
	// File is the line's syntax tree as Parse read it (mvdan.cc/sh), for an
	// analysis that follows the shell's state through the tree's structure
	// itself. It is shared: not to be changed.
	File *syntax.File
	// nested are the trees of the scripts run by a shell that Parse read,
	// by their text (see Tree).
	nested map[string]*syntax.File
	// trees are those trees in the order read, each reading its own (see
	// Trees).
	trees []*syntax.File
	// slabs hold the Commands and their words (see Release).
	slabs *slabs
}

// Release gives the memory of the script's Commands and their words back
// for the next Parse to reuse: the script, its Commands and their Words
// must not be used after (its Commands are emptied). Strings taken from
// them stay valid. Calling it is optional; a script not released is
// collected as usual.
func (s *Script) Release() {
	if s == nil || s.slabs == nil {
		return
	}
	sl := s.slabs
	s.slabs = nil
	clear(s.Commands)
	s.Commands = nil
	sl.free()
	slabPool.Put(sl)
}

// Tree is the syntax tree Parse read for src: the line's own (src is
// Source) or that of a script the line runs by a shell (sh -c SRC, su -c,
// ssh, watch, eval ...) that Parse read in turn; nil when Parse read no
// script of that text (one past MaxDepth, one that does not parse, one
// given by a word not certain). The tree is shared: not to be changed.
func (s *Script) Tree(src string) *syntax.File {
	if s == nil {
		return nil
	}
	if src == s.Source && s.File != nil {
		return s.File
	}
	return s.nested[src]
}

// Unknown says whether anything in the script is not certain: a word,
// a redirection target, an opaque command, a finding.
func (s *Script) Unknown() bool {
	if len(s.Findings) > 0 {
		return true
	}
	for _, c := range s.Commands {
		if c.Opaque != nil || c.MoreArgs {
			return true
		}
		for _, w := range c.Words {
			if !w.Known {
				return true
			}
		}
		for _, r := range c.Redirs {
			if !r.Target.Known && !r.Here {
				return true
			}
		}
		for _, a := range c.Assigns {
			if !a.Value.Known {
				return true
			}
		}
	}
	return false
}

// Parse reads line as a shell command line without running anything or
// touching the filesystem. It returns an *Error when the line cannot be
// read at all (too large, NUL, invalid UTF-8, syntax, too deep); parts it
// could not read are in the script's Findings.
func Parse(line string, opts Options) (*Script, error) {
	o := opts.withDefaults()
	if len(line) > o.MaxBytes {
		return nil, &Error{Kind: ErrTooLarge, Detail: fmt.Sprintf("%d bytes, at most %d", len(line), o.MaxBytes)}
	}
	if i := strings.IndexByte(line, 0); i >= 0 {
		return nil, &Error{Kind: ErrNUL, Detail: fmt.Sprintf("at byte %d", i)}
	}
	if !utf8.ValidString(line) {
		return nil, &Error{Kind: ErrInvalidUTF, Detail: fmt.Sprintf("at byte %d", firstInvalid(line))}
	}
	if d := bracketDepth(line); d > o.MaxNesting {
		return nil, &Error{Kind: ErrTooDeep, Detail: fmt.Sprintf("brackets nested %d deep, at most %d", d, o.MaxNesting)}
	}
	p := &parser{o: o, s: &Script{Source: line}, vars: map[string]varState{}}
	defer p.release()
	f, err := p.parseSource(line)
	if err != nil {
		return nil, &Error{Kind: ErrSyntax, Detail: err.Error()}
	}
	p.s.File = f
	p.file(f, line, frame{parent: -1})
	if p.tooDeep {
		return p.s, &Error{Kind: ErrTooDeep, Detail: fmt.Sprintf("syntax nested more than %d deep", o.MaxNesting)}
	}
	return p.s, nil
}

// parseSource parses src with the parser's one syntax.Parser (made once
// per line: nested scripts reuse it).
func (p *parser) parseSource(src string) (*syntax.File, error) {
	if p.sp == nil {
		lang := syntax.LangBash
		if p.o.Posix {
			lang = syntax.LangPOSIX
		}
		p.sp = syntaxParsers[lang].Get().(*syntax.Parser)
	}
	return p.sp.Parse(strings.NewReader(src), "")
}

// syntaxParsers keep syntax.Parsers between lines: Parse resets one
// before reading, and making one costs more than reading a short line.
var syntaxParsers = map[syntax.LangVariant]*sync.Pool{
	syntax.LangBash:  {New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }},
	syntax.LangPOSIX: {New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangPOSIX)) }},
}

// release gives the line's syntax.Parser back for another line.
func (p *parser) release() {
	if p.sp == nil {
		return
	}
	lang := syntax.LangBash
	if p.o.Posix {
		lang = syntax.LangPOSIX
	}
	syntaxParsers[lang].Put(p.sp)
	p.sp = nil
}

func firstInvalid(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// bracketDepth is an upper bound of how deep ( { [ nest in s, quotes
// ignored: a cheap guard before the parser, whose recursion follows it.
func bracketDepth(s string) int {
	d, most := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{', '[':
			d++
			most = max(most, d)
		case ')', '}', ']':
			if d > 0 {
				d--
			}
		}
	}
	return most
}
