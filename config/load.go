package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
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
// in it are taken from path's directory): it decodes the file in one pass
// into File, then Validate checks what holds across its parts; every
// problem of both is said, in the file's order.
func Parse(path string, data []byte) (*File, error) {
	l := newLoader(path)
	f := Defaults()
	if body := l.body(data); body != nil {
		l.file(f, body)
		l.Validate(f)
	}
	if err := l.problems(path); err != nil {
		return nil, err
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
	// topOrder is the order the file's parts are decoded in: the file's
	// default include_command first.
	topOrder = []string{"include_command", "channels", "routes", "open_hint", "serve", "tier2", "risk", "park", "trust"}

	channelTypes = []string{TypeNtfy, TypeSlack, TypePagerDuty, TypeWebhook, TypeExec}
)

// matchKinds are the kinds of a match's values (policy.Match's fields).
var matchKinds = map[string]string{"session": kindGlob, "requester": kindGlob, "command": kindCmdGlob, "pattern": kindCmdGlob, "effect": kindEffects}

// file decodes the file's body into f.
func (l *loader) file(f *File, body ast.Node) {
	l.object(body, part{what: "the file", want: "a mapping of keys (" + strings.Join(topKeys, ", ") + ")", order: topOrder, read: map[string]func(entry) bool{
		"channels": func(e entry) bool { return l.channels(f, e) },
		"routes":   func(e entry) bool { return l.routes(f, e) },
		"serve":    func(e entry) bool { return l.section(f, e, "serve", &f.Serve) },
		"tier2":    func(e entry) bool { return l.section(f, e, "tier2", &f.Tier2) },
		"risk":     func(e entry) bool { return l.risk(f, e) },
		"park":     func(e entry) bool { return l.park(f, e) },
		"trust":    func(e entry) bool { return l.trust(&f.Trust, e) },
	}}, f)
}

// section decodes the flat section e (serve: or tier2:) into dst, a
// pointer to its struct, and notes each value taken as a Setting, in the
// file's order.
func (l *loader) section(f *File, e entry, section string, dst any) bool {
	sv := reflect.ValueOf(dst).Elem()
	fields := sectionFields(sv.Type())
	es, ok, good := l.object(e.val, part{what: section, prefix: section + ": ", inFile: true, want: "a mapping (" + strings.Join(sectionKeys(fields), ", ") + ")"}, dst)
	if !ok {
		return false
	}
	for _, se := range es {
		fd, _ := fieldNamed(fields, se.name)
		field := sv.Field(fd.index)
		if _, ok := l.at[field.Addr().Interface()]; ok {
			line, col := pos(se.key)
			f.settings = append(f.settings, Setting{Section: section, Key: fd.key, Flag: fd.flag, Value: flagText(field), Line: line, Column: col})
		}
	}
	return good
}

// channels decodes channels: a mapping of names to channels.
func (l *loader) channels(f *File, e entry) bool {
	es, ok := l.mapping(e.val, "channels", "a mapping of channel names to channels", nil)
	if !ok {
		return false
	}
	good := true
	for _, ce := range es {
		if !channelName().MatchString(ce.name) {
			l.add(ce.key, "channel name %q: want letters, digits, '_', '.' and '-', starting with a letter or digit", ce.name)
			good = false
			continue
		}
		l.defined = append(l.defined, ce.name)
		if c := l.channel(ce); c != nil {
			f.Channels[c.Name] = c
		} else {
			good = false
		}
	}
	return good
}

// channel decodes one channel (nil when it has problems). Its keys are
// its type's: a key of another type, or a secret written in the file, is
// refused with what to write instead.
func (l *loader) channel(ce entry) *Channel {
	what := "channel " + ce.name
	c := &Channel{Name: ce.name, Timeout: DefaultTimeout, Line: line(ce.key)}
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
	if !slices.Contains(channelTypes, typ) {
		l.add(te.at(), "%s: unknown type %q; want one of %s", what, typ, strings.Join(channelTypes, ", "))
		return nil
	}
	c.Type = typ
	what = fmt.Sprintf("channel %s (%s)", ce.name, typ)
	allowed := channelKeysFor(typ)
	good := true
	cv := reflect.ValueOf(c).Elem()
	var urlKey string
	for _, e := range es {
		switch {
		case e.name == "type":
			continue
		case !slices.Contains(allowed, e.name) && e.name == "url" && typ == TypeSlack:
			l.add(e.key, "%s: url: a Slack webhook URL is a secret, never written in the file; want url_env (an environment variable) or url_file (a file) that holds it", what)
		case !slices.Contains(allowed, e.name) && (e.name == "token" || e.name == "routing_key" || e.name == "secret"):
			l.add(e.key, "%s: %s: a secret is never written in the file; want %s_env (an environment variable) or %s_file (a file) that holds it", what, e.name, e.name, e.name)
		case !slices.Contains(allowed, e.name):
			l.add(e.key, "%s: unknown key %q; allowed for %s: %s", what, e.name, typ, strings.Join(allowed, ", "))
		case (e.name == "url" || e.name == "url_env" || e.name == "url_file") && urlKey != "":
			l.add(e.key, "%s: %s and %s: give the URL once (one of %s)", what, urlKey, e.name, strings.Join(urlChoices(typ), ", "))
		default:
			if strings.HasPrefix(e.name, "url") {
				urlKey = e.name
			}
			k := channelKeyNamed(e.name)
			good = l.decodeValue(e, what+": "+e.name, k.kind, cv.Field(k.index).Addr().Interface()) && good
			continue
		}
		good = false
	}
	// What each type needs.
	need := func(ok bool, format string, args ...any) {
		if !ok {
			l.add(ce.key, what+" needs "+format, args...)
			good = false
		}
	}
	has := func(names ...string) bool {
		return slices.ContainsFunc(es, func(e entry) bool { return slices.Contains(names, e.name) })
	}
	switch typ {
	case TypeNtfy:
		need(has("url", "url_env", "url_file"), "its topic's URL: url (or url_env, url_file when it is a secret)")
	case TypeSlack:
		need(has("url_env", "url_file"), "its incoming-webhook URL, a secret: url_env or url_file")
	case TypePagerDuty:
		need(has("routing_key_env", "routing_key_file"), "its integration's routing key, a secret: routing_key_env or routing_key_file")
		if c.EventsURL == "" {
			c.EventsURL = DefaultPagerDutyEventsURL
		}
	case TypeWebhook:
		need(has("url", "url_env", "url_file"), "the URL to post to: url (or url_env, url_file when it is a secret)")
		need(has("secret_env", "secret_file"), "the key its requests are signed with (HMAC-SHA256), a secret: secret_env or secret_file")
	case TypeExec:
		need(has("command"), "command: the program to run and its arguments, as a list, such as [notify-send, approve-tui]")
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

// routes decodes routes: a list of routes.
func (l *loader) routes(f *File, e entry) bool {
	items, ok := l.list(e, "routes", "a list of routes (each with match and steps)")
	if !ok {
		return false
	}
	good := true
	for i, it := range items {
		what := fmt.Sprintf("route %d", i+1)
		r := &Route{Line: line(it)}
		_, ok, rgood := l.object(it, part{what: what, prefix: what + ": ", want: "a mapping (" + strings.Join(routeKeys, ", ") + ")",
			required: map[string]string{"steps": "steps: a list of {after: DURATION, notify: [CHANNEL, ...]}"},
			read: map[string]func(entry) bool{
				"match": func(me entry) bool { return l.match(&r.Match, me, what+": match", matchKeys) },
				"steps": func(se entry) bool { return l.steps(r, se, what) },
			}}, r)
		// Every route is kept, so that the n-th is route n to Validate.
		f.Routes = append(f.Routes, r)
		good = good && ok && rgood
	}
	return good
}

// match decodes a match: of the keys allowed (a route's, or a policy
// rule's, which adds command, pattern and effect).
func (l *loader) match(m *Match, e entry, what string, allowed []string) bool {
	_, ok, good := l.object(e.val, part{what: what, prefix: what + ": ", want: "a mapping (" + strings.Join(allowed, ", ") + ")", allowed: allowed, kinds: matchKinds, inFile: true}, m)
	return ok && good
}

// steps decodes a route's steps.
func (l *loader) steps(r *Route, e entry, what string) bool {
	want := "a list of {after: DURATION, notify: [CHANNEL, ...]}"
	items, ok := l.list(e, what+": steps", want)
	if !ok {
		return false
	}
	if len(items) == 0 {
		l.add(e.at(), "%s: steps: the list is empty; want %s", what, want)
		return false
	}
	// Each step is decoded in place: where its values are (l.at) is by
	// their addresses.
	r.Steps = make([]Step, len(items))
	good := true
	for i, it := range items {
		sw := fmt.Sprintf("%s, step %d", what, i+1)
		st := &r.Steps[i]
		st.Line = line(it)
		_, ok, sgood := l.object(it, part{what: sw, prefix: sw + ": ", want: "a mapping (after, notify)", required: map[string]string{
			"after":  "after: how long after the proposal opened, such as 0s or 5m",
			"notify": "notify: a list of channel names, such as [push]",
		}}, st)
		good = good && ok && sgood
	}
	return good
}
