// Package catalogue holds what programs do: per program, subcommand and
// option, its effects (reads, writes, deletes, runs a command given in its
// words, egress, ...) and which of its words are targets. The data lives in
// data/*.yaml, reviewed like code; Load validates it strictly, and go
// generate turns it into catalogue_gen.go, the static data Default serves.
// Lookup takes a command's already-split words and says what they do.
// See NOTES.md for the schema, the coverage and what is next.
package catalogue

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Effect is one thing a command can do.
type Effect string

// The effects a catalogue entry may name.
const (
	Read           Effect = "read"            // reads files or state
	Write          Effect = "write"           // creates or changes files or state
	Delete         Effect = "delete"          // removes files or data
	ExecArg        Effect = "exec-arg"        // runs code or a command given in its words
	Shell          Effect = "shell"           // spawns a shell or an interpreter
	RunWorkspace   Effect = "run-workspace"   // runs code from the workspace (Makefile, tests, build and package scripts)
	Egress         Effect = "egress"          // sends data to another host
	Download       Effect = "download"        // fetches data or code from another host
	Privilege      Effect = "privilege"       // changes user, permissions, ownership or capabilities
	ServiceControl Effect = "service-control" // starts, stops or changes services, timers, cron
	ProcessControl Effect = "process-control" // signals or stops processes
	InfraDestroy   Effect = "infra-destroy"   // destroys infrastructure or cloud resources
	InfraApply     Effect = "infra-apply"     // creates or changes infrastructure or cloud resources
	Publish        Effect = "publish"         // publishes a package, release, image or remote branch
	HistoryErase   Effect = "history-erase"   // erases history or logs
	HistoryRewrite Effect = "history-rewrite" // rewrites history (force push, rebase of published work)
	NetworkListen  Effect = "network-listen"  // listens on a network port
	NetworkConfig  Effect = "network-config"  // changes firewall rules, routes or interfaces
)

// Effects lists every valid effect, in the order above.
var Effects = []Effect{Read, Write, Delete, ExecArg, Shell, RunWorkspace, Egress,
	Download, Privilege, ServiceControl, ProcessControl, InfraDestroy, InfraApply,
	Publish, HistoryErase, HistoryRewrite, NetworkListen, NetworkConfig}

// Kind says what a word is: a target (path, host, ...), or something run.
type Kind string

// The kinds of words.
const (
	KindPath     Kind = "path"     // a local file or directory
	KindRemote   Kind = "remote"   // host:path or a local path (scp, rsync)
	KindHost     Kind = "host"     // a host name or user@host
	KindURL      Kind = "url"      // a URL
	KindResource Kind = "resource" // a named resource (kubernetes, cloud, container, database)
	KindPackage  Kind = "package"  // a package, module or image name
	KindRef      Kind = "ref"      // a git ref, remote or revision
	KindService  Kind = "service"  // a systemd unit or service
	KindProcess  Kind = "process"  // a pid or process name
	KindUser     Kind = "user"     // a user or group
	KindPattern  Kind = "pattern"  // a search pattern
	KindScript   Kind = "script"   // a program in a small language (sed, awk, jq) that may write or run commands
	KindCode     Kind = "code"     // code for an interpreter (python -c, node -e)
	KindCommand  Kind = "command"  // words that form a command to run (xargs, find -exec, ssh host CMD)
	KindShell    Kind = "shell"    // a shell command line in one word (sh -c, watch, vim -c '!…')
	KindWord     Kind = "word"     // anything else
)

var kinds = map[Kind]bool{KindPath: true, KindRemote: true, KindHost: true, KindURL: true,
	KindResource: true, KindPackage: true, KindRef: true, KindService: true, KindProcess: true,
	KindUser: true, KindPattern: true, KindScript: true, KindCode: true, KindCommand: true,
	KindShell: true, KindWord: true}

// ValuePrefix gives a value starting with Prefix its own meaning, e.g.
// curl -d @file sends the file, tar --checkpoint-action=exec=CMD runs CMD.
type ValuePrefix struct {
	Prefix string `yaml:"prefix"` // matched without regard to case
	// Contains, instead of Prefix, matches a value holding it anywhere
	// (tar -f host:archive reaches another host); the whole value is the target.
	Contains string   `yaml:"contains"`
	Effects  []Effect `yaml:"effects"`
	Arg      Kind     `yaml:"arg"` // what the value after the prefix is
	Why      string   `yaml:"why"`
}

// Option is one option of a command, under all its names.
type Option struct {
	Names   []string      `yaml:"names"`
	Value   string        `yaml:"value"` // "" or "none", "required", "optional" (only --name=value)
	Effects []Effect      `yaml:"effects"`
	Arg     Kind          `yaml:"arg"`   // what the value is (a target kind, code, command)
	Until   []string      `yaml:"until"` // the option takes every word up to one of these (find -exec … ;)
	Values  []ValuePrefix `yaml:"values"`
	Why     string        `yaml:"why"`
	Line    int           `yaml:"-"`
}

// Verb is a word that says what a cloud CLI's operation does.
type Verb struct {
	Words    []string `yaml:"words"`
	Effects  []Effect `yaml:"effects"`
	ReadOnly bool     `yaml:"read_only"`
}

// Command is a program or one of its subcommands.
type Command struct {
	Name    string   `yaml:"name"`
	Aliases []string `yaml:"aliases"`
	About   string   `yaml:"about"`
	Effects []Effect `yaml:"effects"`
	// ReadOnly asserts, from the program's documentation, that every form of
	// this command reads only, except the forms that name one of its options
	// listed with another effect (sort -o, find -delete), give a positional
	// item with its own effects (git branch NAME, uniq IN OUT) or a command
	// to run (env CMD).
	ReadOnly bool `yaml:"read_only"`
	// Args says what the positional words are, in order: "path", "path..."
	// (any number), "kind(effect+effect)" labels the targets' own effects.
	// Fixed items after a repeated one are taken from the end (cp src... dst).
	Args []string `yaml:"args"`
	// Bundled says the first word after the program may be a cluster of
	// short options without a dash (tar xzf, ps aux).
	Bundled bool `yaml:"bundled"`
	// ArgPrefixes give a positional word starting with a prefix its own
	// effects (git push origin +main forces, :main deletes).
	ArgPrefixes []ValuePrefix `yaml:"arg_prefixes"`
	Options     []*Option     `yaml:"options"`
	Subcommands []*Command    `yaml:"subcommands"`
	// Verbs describe a command by the first positional word that is one of
	// them or starts with one and a hyphen (aws ec2 terminate-instances,
	// gcloud compute instances delete), when no subcommand matches.
	Verbs []*Verb `yaml:"verbs"`
	// Uncovered says what of the program is not described here.
	Uncovered string `yaml:"uncovered"`
	Line      int    `yaml:"-"`
	File      string `yaml:"-"`

	args   []argItem
	names  map[string]*Command
	opts   map[string]*Option // its own options; opt looks in the parents too
	parent *Command
}

type argItem struct {
	kind    Kind
	effects []Effect
	repeat  bool
}

type catalogueFile struct {
	Programs []*Command `yaml:"programs"`
}

// UnmarshalYAML decodes a command strictly and records its line.
func (c *Command) UnmarshalYAML(n ast.Node) error {
	type plain Command
	return decodeStrict(n, (*plain)(c), &c.Line)
}

// UnmarshalYAML decodes an option strictly and records its line.
func (o *Option) UnmarshalYAML(n ast.Node) error {
	type plain Option
	return decodeStrict(n, (*plain)(o), &o.Line)
}

// decodeStrict decodes n strictly into v (a type without UnmarshalYAML of
// its own), then sets at to n's line; v is unchanged when n does not
// decode.
func decodeStrict[T any](n ast.Node, v *T, at *int) error {
	var w T
	if err := yaml.NodeToValue(n, &w, yaml.Strict()); err != nil {
		return err
	}
	*v = w
	*at = line(n)
	return nil
}

func line(n ast.Node) int {
	if m, ok := n.(*ast.MappingNode); ok && len(m.Values) > 0 {
		return m.Values[0].GetToken().Position.Line
	}
	if t := n.GetToken(); t != nil {
		return t.Position.Line
	}
	return 0
}

// Catalogue is a loaded, validated set of programs.
type Catalogue struct {
	list  []*Command // sorted by name
	names []nameRef  // every program name and alias, sorted
	// lazy, for the generated catalogue, indexes each program of list (its
	// subcommand and option tables, its parsed args) the first time it is
	// looked up; nil when every program was indexed while loading.
	lazy []sync.Once
}

// nameRef is a program name or alias and the program's place in list.
type nameRef struct {
	name string
	prog int
}

// Programs returns every program, sorted by name.
func (c *Catalogue) Programs() []*Command {
	for i := range c.lazy {
		c.ready(i)
	}
	return c.list
}

// Program returns the program named name (or aliased so).
func (c *Catalogue) Program(name string) *Command {
	i, ok := slices.BinarySearchFunc(c.names, name, func(r nameRef, n string) int { return strings.Compare(r.name, n) })
	if !ok {
		return nil
	}
	return c.ready(c.names[i].prog)
}

// ready returns program i of the list, indexed.
func (c *Catalogue) ready(i int) *Command {
	p := c.list[i]
	if c.lazy != nil {
		c.lazy[i].Do(func() { p.index(nil) })
	}
	return p
}

var (
	defaultOnce sync.Once
	defaultCat  *Catalogue
)

// Default returns the built-in catalogue: the data of data/*.yaml as go
// generate decoded and validated it into catalogue_gen.go (TestCatalogueGen
// fails when that file is not what the YAML gives now). Nothing is parsed,
// hashed or built when a process starts: the programs are static data, and
// each one's lookup tables are made the first time it is looked up. The
// error is always nil; it stays for callers that fail closed on one.
func Default() (*Catalogue, error) {
	defaultOnce.Do(func() {
		defaultCat = &Catalogue{list: generatedList, names: generatedNames, lazy: make([]sync.Once, len(generatedList))}
	})
	return defaultCat, nil
}

// LoadFS loads and validates every *.yaml file at the top of fsys.
func LoadFS(fsys fs.FS) (*Catalogue, error) {
	files, err := readFiles(fsys)
	if err != nil {
		return nil, err
	}
	return Load(files)
}

func readFiles(fsys fs.FS) (map[string][]byte, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, err
	}
	files := make(map[string][]byte, len(names))
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		files[n] = b
	}
	return files, nil
}

// Load validates the files (name → content) and builds a catalogue. Every
// error names the file and line: a YAML error, an unknown key, an unknown
// effect or kind, a duplicate program, alias, subcommand or option name.
func Load(files map[string][]byte) (*Catalogue, error) {
	progs, err := parseFiles(files)
	if err != nil {
		return nil, err
	}
	return build(progs)
}

// parseFiles decodes the files strictly, in name order.
func parseFiles(files map[string][]byte) ([]*Command, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var errs []error
	var progs []*Command
	for _, name := range names {
		var f catalogueFile
		if err := yaml.UnmarshalWithOptions(files[name], &f, yaml.Strict()); err != nil {
			errs = append(errs, yamlError(name, err))
			continue
		}
		if len(f.Programs) == 0 {
			errs = append(errs, fmt.Errorf("%s:1: no programs", name))
		}
		for _, p := range f.Programs {
			if p == nil {
				errs = append(errs, fmt.Errorf("%s: empty program entry", name))
				continue
			}
			p.setFile(name)
			progs = append(progs, p)
		}
	}
	return progs, errors.Join(errs...)
}

func (c *Command) setFile(name string) {
	c.File = name
	for _, s := range c.Subcommands {
		if s != nil {
			s.setFile(name)
		}
	}
}

// build validates and indexes decoded programs.
func build(progs []*Command) (*Catalogue, error) {
	c := &Catalogue{}
	seen := map[string]*Command{}
	var errs []error
	for _, p := range progs {
		if err := p.check(p.File, p.Name, nil); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, n := range append([]string{p.Name}, p.Aliases...) {
			if prev, ok := seen[n]; ok {
				errs = append(errs, fmt.Errorf("%s:%d: program %q is already defined at %s:%d", p.File, p.Line, n, prev.File, prev.Line))
				continue
			}
			seen[n] = p
		}
		c.list = append(c.list, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.SliceStable(c.list, func(i, j int) bool { return c.list[i].Name < c.list[j].Name })
	c.names = nameIndex(c.list)
	return c, nil
}

// nameIndex lists every name and alias of list (sorted by name) with its
// program's place, sorted.
func nameIndex(list []*Command) []nameRef {
	var refs []nameRef
	for i, p := range list {
		refs = append(refs, nameRef{p.Name, i})
		for _, a := range p.Aliases {
			refs = append(refs, nameRef{a, i})
		}
	}
	slices.SortFunc(refs, func(a, b nameRef) int { return strings.Compare(a.name, b.name) })
	return refs
}

func yamlError(file string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		if t := ye.GetToken(); t != nil {
			return fmt.Errorf("%s:%d: %s", file, t.Position.Line, ye.GetMessage())
		}
		return fmt.Errorf("%s: %s", file, ye.GetMessage())
	}
	return fmt.Errorf("%s: %w", file, err)
}

func checkEffects(es []Effect) error {
	for _, e := range es {
		if !slices.Contains(Effects, e) {
			return fmt.Errorf("unknown effect %q", e)
		}
	}
	return nil
}

// check validates c (at where, inside parent's options) and indexes it.
func (c *Command) check(file, where string, parent *Command) error {
	at := func(l int, format string, a ...any) error {
		return fmt.Errorf("%s:%d: %s: %s", file, l, where, fmt.Sprintf(format, a...))
	}
	if c.Name == "" || strings.ContainsAny(c.Name, " \t/") {
		return at(c.Line, "missing or bad name %q", c.Name)
	}
	if strings.TrimSpace(c.About) == "" && parent == nil {
		return at(c.Line, "program has no about")
	}
	if err := checkEffects(c.Effects); err != nil {
		return at(c.Line, "%v", err)
	}
	if c.ReadOnly {
		for _, e := range c.Effects {
			if e != Read {
				return at(c.Line, "read_only with effect %q", e)
			}
		}
	}
	for i, a := range c.Args {
		it, err := parseArg(a)
		if err != nil {
			return at(c.Line, "args: %v", err)
		}
		if it.repeat && slices.ContainsFunc(c.args, func(x argItem) bool { return x.repeat }) {
			return at(c.Line, "args: two repeated items")
		}
		if c.ReadOnly && it.kind == KindScript {
			return at(c.Line, "read_only but argument %d is %s", i+1, it.kind)
		}
		c.args = append(c.args, it)
	}
	for _, v := range c.Verbs {
		if v == nil || len(v.Words) == 0 {
			return at(c.Line, "verb without words")
		}
		if err := checkEffects(v.Effects); err != nil {
			return at(c.Line, "verb %s: %v", v.Words[0], err)
		}
		if v.ReadOnly && slices.ContainsFunc(v.Effects, func(e Effect) bool { return e != Read }) {
			return at(c.Line, "verb %s: read_only with other effects", v.Words[0])
		}
	}
	for _, v := range c.ArgPrefixes {
		if v.Prefix == "" {
			return at(c.Line, "arg prefix is empty")
		}
		if err := checkEffects(v.Effects); err != nil {
			return at(c.Line, "arg prefix %q: %v", v.Prefix, err)
		}
		if v.Arg != "" && !kinds[v.Arg] {
			return at(c.Line, "arg prefix %q: unknown arg kind %q", v.Prefix, v.Arg)
		}
	}
	c.opts = map[string]*Option{}
	for _, o := range c.Options {
		if o == nil {
			return at(c.Line, "empty option")
		}
		if len(o.Names) == 0 {
			return at(o.Line, "option without names")
		}
		switch o.Value {
		case "", "none", "required", "optional":
		default:
			return at(o.Line, "option %s: value must be none, required or optional, not %q", o.Names[0], o.Value)
		}
		if err := checkEffects(o.Effects); err != nil {
			return at(o.Line, "option %s: %v", o.Names[0], err)
		}
		if o.Arg != "" && !kinds[o.Arg] {
			return at(o.Line, "option %s: unknown arg kind %q", o.Names[0], o.Arg)
		}
		if len(o.Until) > 0 && o.Value != "" && o.Value != "none" {
			return at(o.Line, "option %s: until and value together", o.Names[0])
		}
		for _, v := range o.Values {
			if (v.Prefix == "") == (v.Contains == "") {
				return at(o.Line, "option %s: a value needs one of prefix and contains", o.Names[0])
			}
			if err := checkEffects(v.Effects); err != nil {
				return at(o.Line, "option %s: value %q: %v", o.Names[0], v.Prefix, err)
			}
			if v.Arg != "" && !kinds[v.Arg] {
				return at(o.Line, "option %s: value %q: unknown arg kind %q", o.Names[0], v.Prefix, v.Arg)
			}
		}
		for _, n := range o.Names {
			if !strings.HasPrefix(n, "-") && !strings.HasPrefix(n, "+") || n == "-" || n == "--" {
				return at(o.Line, "option name %q must start with - or +", n)
			}
			if c.opts[n] != nil {
				return at(o.Line, "duplicate option %q", n)
			}
			c.opts[n] = o
		}
	}
	c.names = map[string]*Command{}
	for _, s := range c.Subcommands {
		if s == nil {
			return at(c.Line, "empty subcommand")
		}
		s.parent = c
		if err := s.check(file, where+" "+s.Name, c); err != nil {
			return err
		}
		for _, n := range append([]string{s.Name}, s.Aliases...) {
			if prev, ok := c.names[n]; ok {
				return at(s.Line, "duplicate subcommand %q (also at line %d)", n, prev.Line)
			}
			c.names[n] = s
		}
	}
	return nil
}

func parseArg(s string) (argItem, error) {
	var it argItem
	if strings.HasSuffix(s, "...") {
		it.repeat = true
		s = strings.TrimSuffix(s, "...")
	}
	k, effs, hasEff := strings.Cut(s, "(")
	if hasEff {
		var closed bool
		effs, closed = strings.CutSuffix(effs, ")")
		if !closed {
			return it, fmt.Errorf("%q: ( without )", s)
		}
	}
	it.kind = Kind(k)
	if !kinds[it.kind] {
		return it, fmt.Errorf("unknown kind %q", k)
	}
	if hasEff {
		for _, e := range strings.Split(effs, "+") {
			it.effects = append(it.effects, Effect(e))
		}
		if err := checkEffects(it.effects); err != nil {
			return it, err
		}
	}
	return it, nil
}

// index makes c's lookup tables, and its subcommands', as check does, for
// data that check has already validated (the generated catalogue).
func (c *Command) index(parent *Command) {
	c.parent = parent
	c.args = make([]argItem, 0, len(c.Args))
	for _, a := range c.Args {
		it, _ := parseArg(a) // validated when generated
		c.args = append(c.args, it)
	}
	if len(c.Args) == 0 {
		c.args = nil
	}
	c.opts = map[string]*Option{}
	for _, o := range c.Options {
		for _, n := range o.Names {
			c.opts[n] = o
		}
	}
	c.names = map[string]*Command{}
	for _, s := range c.Subcommands {
		s.index(c)
		c.names[s.Name] = s
		for _, a := range s.Aliases {
			c.names[a] = s
		}
	}
}

// systemDirs are directories whose programs are taken to be the programs of
// that name; a program word holding another directory is unknown.
var systemDirs = []string{"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"}

// lookupProgram resolves a program word.
func (c *Catalogue) lookupProgram(w string) *Command {
	if strings.Contains(w, "/") {
		if !slices.Contains(systemDirs, path.Dir(w)) {
			return nil
		}
		w = path.Base(w)
	}
	return c.Program(w)
}

// opt finds an option of c or of the commands above it.
func (c *Command) opt(name string) *Option {
	for n := c; n != nil; n = n.parent {
		if o := n.opts[name]; o != nil {
			return o
		}
	}
	return nil
}
