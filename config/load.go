package config

import (
	"errors"
	"fmt"
	"github.com/approve-tui/approve-tui/policy"
	"io"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// EnvPath is the environment variable that names the file (--config wins
// over it).
const EnvPath = "APPROVE_TUI_CONFIG"

// maxFileSize bounds what Load reads: a configuration file is small.
const maxFileSize = 1 << 20

// Problem is one thing wrong in a configuration file, where it is (Line
// and Column from 1; 0 when the problem has no place).
type Problem struct {
	Line, Column int
	Message      string
}

// Error is every problem found in one file. Its messages quote the file's
// keys and values (never a secret's), unsanitised: whoever prints them
// sanitises them.
type Error struct {
	Path     string
	Problems []Problem
}

// Error lists the problems one per line, as PATH:LINE:COLUMN: message.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = e.Format(p)
	}
	return strings.Join(lines, "\n")
}

// Format is one problem as PATH:LINE:COLUMN: message (PATH: message when
// it has no place).
func (e *Error) Format(p Problem) string {
	if p.Line == 0 {
		return fmt.Sprintf("%s: %s", e.Path, p.Message)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.Path, p.Line, p.Column, p.Message)
}

// DefaultPath is where the file is looked for: $APPROVE_TUI_CONFIG, else
// $XDG_CONFIG_HOME/approve-tui/config.yaml, else
// ~/.config/approve-tui/config.yaml ("" when there is no home directory).
func DefaultPath() string {
	p, _ := DefaultPathFrom(os.Getenv)
	if p == "" {
		if h, err := os.UserHomeDir(); err == nil && h != "" {
			p = filepath.Join(h, ".config", "approve-tui", "config.yaml")
		}
	}
	return p
}

// DefaultPathFrom is DefaultPath with the environment read through
// getenv, and the home directory from $HOME only. named reports that the
// path came from $APPROVE_TUI_CONFIG: a file someone named, which must
// exist (at the default path, no file means the defaults).
func DefaultPathFrom(getenv func(string) string) (path string, named bool) {
	if p := getenv(EnvPath); p != "" {
		return p, true
	}
	// The XDG spec: a relative XDG_CONFIG_HOME is invalid and ignored.
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "approve-tui", "config.yaml"), false
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "approve-tui", "config.yaml"), false
	}
	return "", false
}

// LoadDefault loads the file at DefaultPath: the defaults when there is
// no file there, unless $APPROVE_TUI_CONFIG named it.
func LoadDefault() (*File, error) {
	if p, named := DefaultPathFrom(os.Getenv); named {
		return Load(p)
	}
	return LoadOptional(DefaultPath())
}

// LoadOptional is Load, except that no file at path (or path "") is the
// defaults, not an error.
func LoadOptional(path string) (*File, error) {
	if path == "" {
		return Defaults(), nil
	}
	f, err := Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Defaults(), nil
	}
	return f, err
}

// Load reads and validates the file at path. A missing file is an error
// that errors.Is(err, fs.ErrNotExist); a file with problems is an *Error
// that lists them all. A file that holds channels is refused when its
// group or others may write it, when it is owned by neither the user
// running nor root (checkTrust), when a directory on its way may be
// written by another user (checkPathDirs), or when an exec channel's
// program may be changed by another user (ResolveProgram): it says which
// programs run.
func Load(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &notExistError{path}
		}
		return nil, fmt.Errorf("config file %s cannot be read: %w", path, bare(err))
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config file %s cannot be read: %w", path, bare(err))
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("config file %s is larger than %d KiB: not a configuration file", path, maxFileSize>>10)
	}
	f, err := Parse(path, data)
	if err != nil || len(f.Channels) == 0 {
		return f, err
	}
	// The file read, not the path (which may have changed since).
	fi, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("config file %s cannot be read: %w", path, bare(err))
	}
	if err := checkTrust(path, fi, os.Geteuid()); err != nil {
		return nil, err
	}
	if err := checkPathDirs(fmt.Sprintf("config file %s (it holds channels: the programs the notifier runs, where pages and their secrets go)", path), path, os.Geteuid()); err != nil {
		return nil, err
	}
	// The programs exec channels run: a program missing here is the
	// sender's to report (it cannot start); one another user may change
	// is refused.
	for _, name := range f.ChannelNames() {
		ch := f.Channels[name]
		if ch.Type != TypeExec || len(ch.Command) == 0 {
			continue
		}
		if _, err := ResolveProgram("config file "+path+": channel "+name+" (exec)", ch.Command[0]); err != nil && !errors.Is(err, ErrProgramNotFound) {
			return nil, err
		}
	}
	return f, nil
}

// notExistError is Load's missing file: errors.Is(err, fs.ErrNotExist).
type notExistError struct{ path string }

func (e *notExistError) Error() string { return "no config file at " + e.path }
func (e *notExistError) Unwrap() error { return fs.ErrNotExist }

// bare is an os error without the path it names (the message has it).
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse validates data, the contents of the file at path (relative paths
// in it are taken from path's directory).
func Parse(path string, data []byte) (*File, error) {
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	l := &loader{dir: dir, anchors: map[string]ast.Node{}, badChannels: map[string]bool{}}
	f := l.parse(data)
	if len(l.probs) > 0 {
		l.sortProblems()
		return nil, &Error{Path: path, Problems: l.probs}
	}
	f.Path = path
	return f, nil
}

// The keys of each part of the file.
var (
	topKeys   = yamlKeys[File]()
	routeKeys = yamlKeys[Route]()
	matchKeys = []string{"risk", "session", "requester"}
	stepKeys  = yamlKeys[Step]()

	channelTypes = []string{TypeNtfy, TypeSlack, TypePagerDuty, TypeWebhook, TypeExec}
)

var (
	envName     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	channelName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`) })
)

// loader collects the problems of one file as it reads it.
type loader struct {
	dir     string
	probs   []Problem
	anchors map[string]ast.Node
	// defined: the channels' names; badChannels: those defined with
	// problems (said there, so not again where a route names them).
	defined     []string
	badChannels map[string]bool
}

// entry is one key: value of a mapping.
type entry struct {
	name string
	key  ast.Node
	val  ast.Node // dereferenced (anchors, aliases)
}

func (l *loader) addAt(line, col int, format string, args ...any) {
	l.probs = append(l.probs, Problem{Line: line, Column: col, Message: fmt.Sprintf(format, args...)})
}

func (l *loader) add(n ast.Node, format string, args ...any) {
	line, col := pos(n)
	l.addAt(line, col, format, args...)
}

// pos is where n starts.
func pos(n ast.Node) (int, int) {
	switch v := n.(type) {
	case nil:
		return 0, 0
	case *ast.MappingValueNode:
		return pos(v.Key)
	case *ast.MappingNode:
		if !v.IsFlowStyle && len(v.Values) > 0 {
			return pos(v.Values[0])
		}
	case *ast.DocumentNode:
		if v.Body == nil {
			return 0, 0
		}
		return pos(v.Body)
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return 0, 0
	}
	return tk.Position.Line, tk.Position.Column
}

// at is where a value's problem is shown: the value, or its key when the
// value is empty (an empty value has no place of its own).
func (e entry) at() ast.Node {
	if _, null := e.val.(*ast.NullNode); null || e.val == nil {
		return e.key
	}
	return e.val
}

// kind says what n is, for "want X, got Y".
func kind(n ast.Node) string {
	switch n.(type) {
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "true or false"
	case *ast.NullNode, nil:
		return "nothing"
	case *ast.SequenceNode:
		return "a list"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	}
	return "something else"
}

// body parses data as one YAML document and returns its body (nil: empty,
// only comments, or not YAML, which is then a problem), with its anchors
// noted.
func (l *loader) body(data []byte) ast.Node {
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		l.yamlError(err)
		return nil
	}
	var body ast.Node
	for _, doc := range file.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			l.add(doc, "a second YAML document (after ---): the file is one document")
			break
		}
		body = doc.Body
	}
	if body == nil {
		return nil
	}
	for _, n := range ast.Filter(ast.AnchorType, body) {
		if a, ok := n.(*ast.AnchorNode); ok && a.Name != nil {
			l.anchors[a.Name.GetToken().Value] = a.Value
		}
	}
	return body
}

// sortProblems orders l's problems by place in the file.
func (l *loader) sortProblems() {
	sort.SliceStable(l.probs, func(i, j int) bool {
		a, b := l.probs[i], l.probs[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}

func (l *loader) parse(data []byte) *File {
	f := Defaults()
	body := l.body(data)
	if body == nil {
		return f // empty, or only comments: the defaults
	}
	top, ok := l.mapping(body, "the file", "a mapping of keys ("+strings.Join(topKeys, ", ")+")", topKeys)
	if !ok {
		return f
	}
	get := func(name string) (entry, bool) {
		for _, e := range top {
			if e.name == name {
				return e, true
			}
		}
		return entry{}, false
	}
	if e, ok := get("include_command"); ok {
		l.decodeValue(e, "include_command", "", &f.IncludeCommand)
	}
	if e, ok := get("channels"); ok {
		l.channels(f, e)
	}
	if e, ok := get("routes"); ok {
		l.routes(f, e)
	}
	if e, ok := get("open_hint"); ok {
		if s, ok := l.str(e, "open_hint"); ok {
			if !strings.Contains(s, "{id}") {
				l.add(e.at(), "open_hint: %q has no {id}; want the command that opens a proposal, with {id} where its id goes (such as \"ssh -t approvals.example open {id}\")", s)
			} else {
				f.OpenHint = s
			}
		}
	}
	if e, ok := get("serve"); ok {
		l.section(f, e, "serve", &f.Serve)
	}
	if e, ok := get("tier2"); ok {
		l.section(f, e, "tier2", &f.Tier2)
	}
	if e, ok := get("risk"); ok {
		l.risk(f, e)
	}
	if e, ok := get("trust"); ok {
		l.trustSection(f, e)
	}
	return f
}

// yamlError is a parse error as a problem.
func (l *loader) yamlError(err error) {
	var ye yaml.Error
	if errors.As(err, &ye) {
		msg := ye.GetMessage()
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			l.addAt(tk.Position.Line, tk.Position.Column, "not valid YAML: %s", msg)
			return
		}
		l.addAt(0, 0, "not valid YAML: %s", msg)
		return
	}
	l.addAt(0, 0, "not valid YAML: %v", err)
}

// deref follows anchors and aliases to the value; tags are refused (nil).
func (l *loader) deref(n ast.Node) ast.Node {
	for i := 0; i < 16; i++ {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			name := ""
			if v.Value != nil {
				name = v.Value.GetToken().Value
			}
			target, ok := l.anchors[name]
			if !ok {
				l.add(v, "alias *%s names no anchor (&%s) in the file", name, name)
				return nil
			}
			n = target
		case *ast.TagNode:
			l.add(v, "tags (%s) are not taken here: write the value plainly", v.Start.Value)
			return nil
		default:
			return n
		}
	}
	return n
}

// mapping reads n as a mapping: its entries in order, every key a string.
// allowed (nil: any key) refuses the others with the list of those
// allowed; what names n in messages, want says what it should be.
func (l *loader) mapping(n ast.Node, what, want string, allowed []string) ([]entry, bool) {
	var values []*ast.MappingValueNode
	switch v := l.deref(n).(type) {
	case *ast.MappingNode:
		values = v.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{v}
	case nil:
		return nil, false // refused by deref
	case *ast.NullNode:
		return nil, true // an empty mapping
	default:
		l.add(v, "%s: want %s, got %s", what, want, kind(v))
		return nil, false
	}
	var out []entry
	for _, mv := range values {
		if mv.Key == nil {
			continue
		}
		if mv.Key.IsMergeKey() {
			l.add(mv.Key, "%s: merge keys (<<) are not taken here: write each key", what)
			continue
		}
		k, ok := mv.Key.(*ast.StringNode)
		if !ok {
			l.add(mv.Key, "%s: key %s is not a name; want %s", what, kind(mv.Key), want)
			continue
		}
		if allowed != nil && !contains(allowed, k.Value) {
			l.add(mv.Key, "%s: unknown key %q; allowed: %s", what, k.Value, strings.Join(allowed, ", "))
			continue
		}
		out = append(out, entry{name: k.Value, key: mv.Key, val: l.deref(mv.Value)})
	}
	return out, true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func find(es []entry, name string) (entry, bool) {
	for _, e := range es {
		if e.name == name {
			return e, true
		}
	}
	return entry{}, false
}

// str reads a string value (what: how messages name it).
func (l *loader) str(e entry, what string) (string, bool) {
	switch v := e.val.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		return v.Value.Value, true
	case nil:
		return "", false // refused by deref, and said
	}
	l.add(e.at(), "%s: want a string, got %s", what, kind(e.val))
	return "", false
}

// nonEmpty reads a string that must not be empty.
func (l *loader) nonEmpty(e entry, what string) (string, bool) {
	s, ok := l.str(e, what)
	if ok && strings.TrimSpace(s) == "" {
		l.add(e.at(), "%s is empty; want a value", what)
		return "", false
	}
	return s, ok
}

func (l *loader) boolean(e entry, what string) (bool, bool) {
	if b, ok := e.val.(*ast.BoolNode); ok {
		return b.Value, true
	}
	if e.val != nil {
		l.add(e.at(), "%s: want true or false, got %s", what, kind(e.val))
	}
	return false, false
}

// duration reads a duration such as 30s or 5m: at least zero, above zero
// when positive.
func (l *loader) duration(e entry, what string, positive bool) (time.Duration, bool) {
	want := "a duration such as 30s, 5m or 1h"
	if positive {
		want = "a duration above zero, such as 30s, 5m or 1h"
	}
	var d time.Duration
	switch v := e.val.(type) {
	case *ast.StringNode:
		var err error
		d, err = time.ParseDuration(strings.TrimSpace(v.Value))
		if err != nil {
			l.add(e.at(), "%s: %q is not a duration; want %s (units ns, us, ms, s, m, h)", what, v.Value, want)
			return 0, false
		}
	case *ast.IntegerNode:
		if v.GetToken().Value != "0" {
			l.add(e.at(), "%s: %s has no unit; want %s", what, v.GetToken().Value, want)
			return 0, false
		}
	default:
		if e.val != nil {
			l.add(e.at(), "%s: want %s, got %s", what, want, kind(e.val))
		}
		return 0, false
	}
	switch {
	case d < 0:
		l.add(e.at(), "%s: %s is negative; want %s", what, human.Written(d), want)
		return 0, false
	case positive && d == 0:
		l.add(e.at(), "%s: %s is not above zero; want %s", what, human.Written(d), want)
		return 0, false
	}
	return d, true
}

// count reads an integer of at least 1.
func (l *loader) count(e entry, what string) (int, bool) {
	v, ok := e.val.(*ast.IntegerNode)
	if !ok {
		if e.val != nil {
			l.add(e.at(), "%s: want a whole number of at least 1, got %s", what, kind(e.val))
		}
		return 0, false
	}
	var n int64
	switch x := v.Value.(type) {
	case int64:
		n = x
	case uint64:
		n = math.MaxInt32 + 1
		if x <= math.MaxInt32 {
			n = int64(x)
		}
	}
	switch {
	case n < 1:
		l.add(e.at(), "%s: %s is less than 1; want a whole number of at least 1", what, v.GetToken().Value)
		return 0, false
	case n > math.MaxInt32:
		l.add(e.at(), "%s: %s is too large; want a whole number of at least 1", what, v.GetToken().Value)
		return 0, false
	}
	return int(n), true
}

// list reads a list; each element is dereferenced.
func (l *loader) list(e entry, what, want string) ([]ast.Node, bool) {
	seq, ok := e.val.(*ast.SequenceNode)
	if !ok {
		if e.val != nil {
			l.add(e.at(), "%s: want %s, got %s", what, want, kind(e.val))
		}
		return nil, false
	}
	out := make([]ast.Node, len(seq.Values))
	for i, v := range seq.Values {
		out[i] = l.deref(v)
	}
	return out, true
}

// strList reads a non-empty list of non-empty strings.
func (l *loader) strList(e entry, what, want string) ([]string, []ast.Node, bool) {
	items, ok := l.list(e, what, want)
	if !ok {
		return nil, nil, false
	}
	if len(items) == 0 {
		l.add(e.at(), "%s: the list is empty; want %s", what, want)
		return nil, nil, false
	}
	out := make([]string, 0, len(items))
	good := true
	for i, it := range items {
		s, ok := l.str(entry{key: e.key, val: it}, fmt.Sprintf("%s, item %d", what, i+1))
		if ok && s == "" {
			l.add(it, "%s, item %d is empty; want %s", what, i+1, want)
			ok = false
		}
		good = good && ok
		out = append(out, s)
	}
	return out, items, good
}

// channels reads channels: a mapping of names to channels.
func (l *loader) channels(f *File, e entry) {
	es, ok := l.mapping(e.val, "channels", "a mapping of channel names to channels", nil)
	if !ok {
		return
	}
	for _, ce := range es {
		if !channelName().MatchString(ce.name) {
			l.add(ce.key, "channel name %q: want letters, digits, '_', '.' and '-', starting with a letter or digit", ce.name)
			continue
		}
		l.defined = append(l.defined, ce.name)
		if c := l.channel(f, ce); c != nil {
			f.Channels[c.Name] = c
		} else {
			l.badChannels[ce.name] = true
		}
	}
}

// channel reads one channel (nil when it has problems).
func (l *loader) channel(f *File, ce entry) *Channel {
	what := "channel " + ce.name
	line, _ := pos(ce.key)
	c := &Channel{Name: ce.name, IncludeCommand: f.IncludeCommand, Timeout: DefaultTimeout, Line: line}
	es, ok := l.mapping(ce.val, what, "a mapping with a type (one of "+strings.Join(channelTypes, ", ")+")", nil)
	if !ok {
		return nil
	}
	te, ok := find(es, "type")
	if !ok {
		l.add(ce.key, "%s has no type; want type: one of %s", what, strings.Join(channelTypes, ", "))
		return nil
	}
	typ, ok := l.str(te, what+": type")
	if !ok {
		return nil
	}
	if !contains(channelTypes, typ) {
		l.add(te.at(), "%s: unknown type %q; want one of %s", what, typ, strings.Join(channelTypes, ", "))
		return nil
	}
	c.Type = typ
	what = fmt.Sprintf("channel %s (%s)", ce.name, typ)
	allowed := channelKeysFor(typ)
	good := true
	var known []entry
	for _, e := range es {
		if contains(allowed, e.name) {
			known = append(known, e)
			continue
		}
		good = false
		switch {
		case e.name == "url" && typ == TypeSlack:
			l.add(e.key, "%s: url: a Slack webhook URL is a secret, never written in the file; want url_env (an environment variable) or url_file (a file) that holds it", what)
		case e.name == "token" || e.name == "routing_key" || e.name == "secret":
			l.add(e.key, "%s: %s: a secret is never written in the file; want %s_env (an environment variable) or %s_file (a file) that holds it", what, e.name, e.name, e.name)
		default:
			l.add(e.key, "%s: unknown key %q; allowed for %s: %s", what, e.name, typ, strings.Join(allowed, ", "))
		}
	}
	cv := reflect.ValueOf(c).Elem()
	var urlKeys []entry
	for _, e := range known {
		if e.name == "type" {
			continue
		}
		if e.name == "url" || e.name == "url_env" || e.name == "url_file" {
			if len(urlKeys) > 0 {
				l.add(e.key, "%s: %s and %s: give the URL once (one of %s)", what, urlKeys[0].name, e.name, strings.Join(urlChoices(typ), ", "))
				good = false
				continue
			}
			urlKeys = append(urlKeys, e)
		}
		k := channelKeyNamed(e.name)
		good = l.decodeValue(e, what+": "+e.name, k.kind, cv.Field(k.index).Addr().Interface()) && good
	}
	// What each type needs.
	need := func(ok bool, format string, args ...any) {
		if !ok {
			l.add(ce.key, what+" needs "+format, args...)
			good = false
		}
	}
	hasKey := func(names ...string) bool {
		for _, n := range names {
			if _, ok := find(es, n); ok {
				return true
			}
		}
		return false
	}
	switch typ {
	case TypeNtfy:
		need(hasKey("url", "url_env", "url_file"), "its topic's URL: url (or url_env, url_file when it is a secret)")
	case TypeSlack:
		need(hasKey("url_env", "url_file"), "its incoming-webhook URL, a secret: url_env or url_file")
	case TypePagerDuty:
		need(hasKey("routing_key_env", "routing_key_file"), "its integration's routing key, a secret: routing_key_env or routing_key_file")
		if c.EventsURL == "" {
			c.EventsURL = DefaultPagerDutyEventsURL
		}
	case TypeWebhook:
		need(hasKey("url", "url_env", "url_file"), "the URL to post to: url (or url_env, url_file when it is a secret)")
		need(hasKey("secret_env", "secret_file"), "the key its requests are signed with (HMAC-SHA256), a secret: secret_env or secret_file")
	case TypeExec:
		need(hasKey("command"), "command: the program to run and its arguments, as a list, such as [notify-send, approve-tui]")
	}
	if !good {
		return nil
	}
	return c
}

func urlChoices(typ string) []string {
	if typ == TypeSlack {
		return []string{"url_env", "url_file"}
	}
	return []string{"url", "url_env", "url_file"}
}

// url reads a plain http(s) URL. Its text is never quoted in messages: a
// URL may carry what should have been a secret.
func (l *loader) url(e entry, what string) (string, bool) {
	s, ok := l.nonEmpty(e, what)
	if !ok {
		return "", false
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		l.add(e.at(), "%s: not an http or https URL; want one such as https://host/path", what)
		return "", false
	case u.User != nil:
		l.add(e.at(), "%s: the URL carries a user or password, a secret: want it without, or the whole URL in url_env or url_file", what)
		return "", false
	}
	return s, true
}

// secretKey reads NAME_env or NAME_file into s; both is a problem.
func (l *loader) secretKey(s *Secret, e entry, what string) bool {
	if s.Key != "" {
		l.add(e.key, "%s: %s is given already; want one of the two", what, s.Key)
		return false
	}
	v, ok := l.nonEmpty(e, what)
	if !ok {
		return false
	}
	line, col := pos(e.key)
	s.Key, s.Line, s.Column = e.name, line, col
	if strings.HasSuffix(e.name, "_env") {
		if !envName().MatchString(v) {
			l.add(e.at(), "%s: %q is not an environment variable's name; want letters, digits and '_', such as NTFY_TOKEN", what, v)
			return false
		}
		s.Env = v
		return true
	}
	if !filepath.IsAbs(v) {
		v = filepath.Join(l.dir, v)
	}
	s.File = filepath.Clean(v)
	return true
}

// routes reads routes: a list of routes.
func (l *loader) routes(f *File, e entry) {
	items, ok := l.list(e, "routes", "a list of routes (each with match and steps)")
	if !ok {
		return
	}
	for i, it := range items {
		if r := l.route(f, it, i+1); r != nil {
			f.Routes = append(f.Routes, r)
		}
	}
}

func (l *loader) route(f *File, n ast.Node, num int) *Route {
	what := fmt.Sprintf("route %d", num)
	es, ok := l.mapping(n, what, "a mapping ("+strings.Join(routeKeys, ", ")+")", routeKeys)
	if !ok {
		return nil
	}
	line, _ := pos(n)
	r := &Route{Line: line}
	good := true
	if me, ok := find(es, "match"); ok {
		good = l.match(&r.Match, me, what+": match") && good
	}
	if se, ok := find(es, "steps"); ok {
		steps, ok := l.steps(f, se, what)
		r.Steps = steps
		good = ok && good
	} else {
		l.add(n, "%s has no steps; want steps: a list of {after: DURATION, notify: [CHANNEL, ...]}", what)
		good = false
	}
	if re, ok := find(es, "remind_before_expiry"); ok {
		good = l.decodeValue(re, what+": remind_before_expiry", "zero", &r.RemindBeforeExpiry) && good
	}
	if !good {
		return nil
	}
	return r
}

func (l *loader) match(m *Match, e entry, what string) bool {
	return l.matchKeys(m, e, what, matchKeys)
}

// matchKeys reads a match: of the keys allowed (a route's, or a policy
// rule's, which adds command and pattern).
func (l *loader) matchKeys(m *Match, e entry, what string, allowed []string) bool {
	es, ok := l.mapping(e.val, what, "a mapping ("+strings.Join(allowed, ", ")+")", allowed)
	if !ok {
		return false
	}
	good := true
	for _, me := range es {
		k := what + ": " + me.name
		if me.name == "effect" {
			good = l.effects(m, me, k) && good
			continue
		}
		s, ok := l.str(me, k)
		if !ok {
			good = false
			continue
		}
		switch me.name {
		case "risk":
			switch r := model.RiskLevel(s); r {
			case model.RiskLow, model.RiskMedium, model.RiskHigh:
				m.Risk = r
			default:
				l.add(me.at(), "%s: %q is not a risk; want low, medium or high (it takes that risk and above)", k, s)
				good = false
			}
		case "session", "requester", "command", "pattern":
			// session and requester are path globs (* stops at /);
			// command and pattern globs whose * crosses spaces and /.
			_, err := path.Match(s, "")
			want := "agent:prod:* (* any run of characters but /"
			if me.name == "command" || me.name == "pattern" {
				err, want = policy.ValidGlob(s), "\"terraform apply*\" (* any run of characters, spaces and / too"
			}
			if err != nil || s == "" {
				l.add(me.at(), "%s: %q is not a glob; want a pattern such as %s, ? one, [a-z] a class, \\ quotes)", k, s, want)
				good = false
				continue
			}
			*map[string]*string{"session": &m.Session, "requester": &m.Requester, "command": &m.Command, "pattern": &m.Pattern}[me.name] = s
		}
	}
	return good
}

// effects reads a policy rule's effect: one effect's name or a list of
// them (the rule takes a command with any of them).
func (l *loader) effects(m *Match, e entry, what string) bool {
	want := "an effect, such as delete, or a list of them, such as [delete, infra-destroy]; effects: " + strings.Join(policy.EffectNames(), ", ")
	var names []string
	var nodes []ast.Node
	if _, ok := e.val.(*ast.SequenceNode); ok {
		ns, items, ok := l.strList(e, what, want)
		if !ok {
			return false
		}
		names, nodes = ns, items
	} else {
		s, ok := l.str(e, what)
		if !ok {
			return false
		}
		names, nodes = []string{s}, []ast.Node{e.at()}
	}
	good := true
	for i, n := range names {
		if !policy.ValidEffect(n) {
			l.add(nodes[i], "%s: %q is not an effect; want one of %s", what, n, strings.Join(policy.EffectNames(), ", "))
			good = false
		} else if slices.Contains(m.Effect, n) {
			l.add(nodes[i], "%s: %s is named twice", what, n)
			good = false
		} else {
			m.Effect = append(m.Effect, n)
		}
	}
	return good
}

func (l *loader) steps(f *File, e entry, what string) ([]Step, bool) {
	want := "a list of {after: DURATION, notify: [CHANNEL, ...]}"
	items, ok := l.list(e, what+": steps", want)
	if !ok {
		return nil, false
	}
	if len(items) == 0 {
		l.add(e.at(), "%s: steps: the list is empty; want %s", what, want)
		return nil, false
	}
	var steps []Step
	good := true
	prev := time.Duration(-1)
	for i, it := range items {
		sw := fmt.Sprintf("%s, step %d", what, i+1)
		es, ok := l.mapping(it, sw, "a mapping (after, notify)", stepKeys)
		if !ok || it == nil {
			good = false
			continue
		}
		line, _ := pos(it)
		st := Step{Line: line}
		sgood := true
		ae, ok := find(es, "after")
		if !ok {
			l.add(it, "%s has no after; want after: how long after the proposal opened, such as 0s or 5m", sw)
			sgood = false
		} else if l.decodeValue(ae, sw+": after", "zero", &st.After) {
			d := st.After
			if d <= prev {
				l.add(ae.at(), "%s: after %s is not later than the step before (%s); want the steps in increasing after", sw, human.Written(d), human.Written(prev))
				sgood = false
			}
			prev = d
		} else {
			sgood = false
		}
		ne, ok := find(es, "notify")
		if !ok {
			l.add(it, "%s has no notify; want notify: a list of channel names, such as [push]", sw)
			sgood = false
		} else if names, nodes, ok := l.strList(ne, sw+": notify", "a list of channel names, such as [push]"); ok {
			seen := map[string]bool{}
			for j, name := range names {
				switch {
				case seen[name]:
					l.add(nodes[j], "%s: notify: channel %q is named twice", sw, name)
					sgood = false
				case f.Channels[name] == nil && !l.badChannels[name]:
					l.add(nodes[j], "%s: notify: no channel %q; want one of the channels defined: %s", sw, name, orNone(l.defined))
					sgood = false
				}
				seen[name] = true
			}
			st.Notify = names
		} else {
			sgood = false
		}
		if sgood {
			steps = append(steps, st)
		} else {
			good = false
		}
	}
	return steps, good
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "(none: define them under channels)"
	}
	names = append([]string(nil), names...)
	sort.Strings(names)
	return strings.Join(names, ", ")
}
