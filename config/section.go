package config

import (
	"fmt"
	"math"
	"net/url"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/trust"
)

// Each part of the file is written once, as its struct: a field's yaml
// tag is its key (a Channel's secret tag names NAME_env and NAME_file),
// and the keys a part allows, in the order messages list them, come from
// the fields' order. In the flat sections (serve:, tier2:) a field's flag
// tag is the command-line flag it stands for. A field's config tag says
// more of its value (see the kinds below). decodeValue decodes each
// value into its field by the field's type, checking it and adding every
// problem where it is in the file, so that one file's problems are all
// said at once.

// The kinds of value a config tag (or a part's kinds) names.
const (
	kindHint       = "hint"       // a command with {id} in it
	kindPath       = "path"       // a string made absolute against the file's directory
	kindFile       = "file"       // a path, absolute and clean
	kindURL        = "url"        // a plain http or https URL
	kindZero       = "zero"       // a duration that may be zero (else above zero)
	kindArgv       = "argv"       // a program and its arguments
	kindNames      = "names"      // channel names
	kindKinds      = "kinds"      // kinds of page (EventKinds)
	kindPaths      = "paths"      // sensitive paths
	kindPrincipals = "principals" // signing principals
	kindPrincipal  = "principal"  // a signing principal
	kindLevel      = "level"      // a least risk level: medium or high
	kindMembers    = "members"    // a group's members
	kindEffects    = "effects"    // an effect, or a list of them
	kindGlob       = "glob"       // a path glob (* stops at /)
	kindCmdGlob    = "cmdglob"    // a command glob (* crosses spaces and /)
	kindStore      = "store"      // a store identity
	kindApprovals  = "approvals"  // a count of at most policy.MaxApprovals
)

// sectionField is one key of a part, from its struct field.
type sectionField struct {
	key, flag string
	kind      string // the config tag
	index     int
}

// sectionFields are the keys of the struct t, in its order (read from
// its tags once).
func sectionFields(t reflect.Type) []sectionField {
	if fs, ok := fieldsByType.Load(t); ok {
		return fs.([]sectionField)
	}
	var out []sectionField
	for i := range t.NumField() {
		sf := t.Field(i)
		key := sf.Tag.Get("yaml")
		if key == "" || key == "-" {
			continue
		}
		out = append(out, sectionField{key: key, flag: sf.Tag.Get("flag"), kind: sf.Tag.Get("config"), index: i})
	}
	fieldsByType.Store(t, out)
	return out
}

var fieldsByType sync.Map // reflect.Type: []sectionField

// fieldNamed is the field of fields whose key is key.
func fieldNamed(fields []sectionField, key string) (sectionField, bool) {
	for _, f := range fields {
		if f.key == key {
			return f, true
		}
	}
	return sectionField{}, false
}

// yamlKeys are the keys of T, a struct the file holds, from its fields'
// yaml tags, in their order.
func yamlKeys[T any]() []string { return sectionKeys(sectionFields(reflect.TypeFor[T]())) }

func sectionKeys(fields []sectionField) []string {
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	return keys
}

// fieldValue is the value being decoded: the loader that collects
// problems, the entry (its key and node), how messages name it and the
// field's kind; ok says the value was taken.
type fieldValue struct {
	l    *loader
	e    entry
	what string
	kind string
	ok   bool
}

// decodeValue decodes e's value into dst, a pointer to one field (or a
// list of strings), by its type and kind, with every problem added to l;
// it reports whether the value was taken, and notes where (l.at) when it
// was. The value is read from its node in goccy/go-yaml's AST, aliases
// followed through the file's anchors (a decoder of one value alone
// knows only the anchors inside it).
func (l *loader) decodeValue(e entry, what, kind string, dst any) bool {
	if e.val == nil {
		return false // refused by deref, and said
	}
	vc := &fieldValue{l: l, e: e, what: what, kind: kind}
	switch p := dst.(type) {
	case *string:
		vc.string(p)
	case *int:
		vc.count(p)
	case *time.Duration:
		vc.duration(p)
	case *bool:
		vc.bool(p)
	case *[]string:
		vc.strings(p)
	case *Secret:
		vc.secret(p)
	case *model.RiskLevel:
		vc.risk(p)
	case *trust.Mode:
		vc.mode(p)
	default:
		panic(fmt.Sprintf("config: a value of type %T", dst))
	}
	if vc.ok {
		l.at[dst] = e
	}
	return vc.ok
}

var (
	envName     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	channelName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`) })
)

// string takes a string: not empty, unless text; a plain
// http(s) URL for a url; a path made absolute against the file's
// directory; a glob; a store's name.
func (vc *fieldValue) string(s *string) {
	l, e, what := vc.l, vc.e, vc.what
	var v string
	var ok bool
	switch vc.kind {
	case kindHint, kindGlob, kindCmdGlob:
		v, ok = l.str(e, what)
	default:
		v, ok = l.nonEmpty(e, what)
	}
	if !ok {
		return
	}
	switch vc.kind {
	case kindPath, kindFile:
		if !filepath.IsAbs(v) {
			v = filepath.Join(l.dir, v)
		}
		if vc.kind == kindFile {
			v = filepath.Clean(v)
		}
	case kindGlob, kindCmdGlob:
		// session and requester are path globs (* stops at /); command
		// and pattern globs whose * crosses spaces and /.
		_, err := path.Match(v, "")
		want := "agent:prod:* (* any run of characters but /"
		if vc.kind == kindCmdGlob {
			err, want = policy.ValidGlob(v), "\"terraform apply*\" (* any run of characters, spaces and / too"
		}
		if err != nil || v == "" {
			l.add(e.at(), "%s: %q is not a glob; want a pattern such as %s, ? one, [a-z] a class, \\ quotes)", what, v, want)
			return
		}
	case kindHint:
		if !strings.Contains(v, "{id}") {
			l.add(e.at(), "%s: %q has no {id}; want the command that opens a proposal, with {id} where its id goes (such as \"ssh -t approvals.example open {id}\")", what, v)
			return
		}
	case kindURL:
		// The URL is never quoted: it may carry what should have been a
		// secret.
		u, err := url.Parse(v)
		switch {
		case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
			l.add(e.at(), "%s: not an http or https URL; want one such as https://host/path", what)
			return
		case u.User != nil:
			l.add(e.at(), "%s: the URL carries a user or password, a secret: want it without, or the whole URL in url_env or url_file", what)
			return
		}
	case kindPrincipal:
		if why := plainPrincipal(v); why != "" {
			l.add(e.at(), "%s: %q %s; want a principal as the trust file names it, such as alice", what, v, why)
			return
		}
	case kindStore:
		if why := storeName(v); why != "" {
			l.add(e.at(), "%s: %q %s; want a name such as prod-approvals", what, v, why)
			return
		}
	}
	*s, vc.ok = v, true
}

// count takes a whole number of at least 1 (at most
// policy.MaxApprovals for approvals).
func (vc *fieldValue) count(n *int) {
	l, e, what := vc.l, vc.e, vc.what
	v, ok := e.val.(*ast.IntegerNode)
	if !ok {
		l.add(e.at(), "%s: want a whole number of at least 1, got %s", what, kind(e.val))
		return
	}
	var x int64
	switch i := v.Value.(type) {
	case int64:
		x = i
	case uint64:
		x = math.MaxInt32 + 1
		if i <= math.MaxInt32 {
			x = int64(i)
		}
	}
	switch {
	case x < 1:
		l.add(e.at(), "%s: %s is less than 1; want a whole number of at least 1", what, v.GetToken().Value)
	case x > math.MaxInt32:
		l.add(e.at(), "%s: %s is too large; want a whole number of at least 1", what, v.GetToken().Value)
	case vc.kind == kindApprovals && x > policy.MaxApprovals:
		l.add(e.at(), "%s %d is more than %d; want the number of distinct people who must approve", what, x, policy.MaxApprovals)
	default:
		*n, vc.ok = int(x), true
	}
}

// duration takes a duration above zero, such as 30s or 5m; one
// of at least zero for a zero field.
func (vc *fieldValue) duration(d *time.Duration) {
	l, e, what := vc.l, vc.e, vc.what
	want := "a duration above zero, such as 30s, 5m or 1h"
	if vc.kind == kindZero {
		want = "a duration such as 30s, 5m or 1h"
	}
	var v time.Duration
	switch n := e.val.(type) {
	case *ast.StringNode:
		var err error
		if v, err = time.ParseDuration(strings.TrimSpace(n.Value)); err != nil {
			l.add(e.at(), "%s: %q is not a duration; want %s (units ns, us, ms, s, m, h)", what, n.Value, want)
			return
		}
	case *ast.IntegerNode:
		if n.GetToken().Value != "0" {
			l.add(e.at(), "%s: %s has no unit; want %s", what, n.GetToken().Value, want)
			return
		}
	default:
		l.add(e.at(), "%s: want %s, got %s", what, want, kind(e.val))
		return
	}
	switch {
	case v < 0:
		l.add(e.at(), "%s: %s is negative; want %s", what, human.Written(v), want)
	case v == 0 && vc.kind != kindZero:
		l.add(e.at(), "%s: %s is not above zero; want %s", what, human.Written(v), want)
	default:
		*d, vc.ok = v, true
	}
}

// bool takes true or false.
func (vc *fieldValue) bool(b *bool) {
	if v, ok := vc.e.val.(*ast.BoolNode); ok {
		*b, vc.ok = v.Value, true
	} else {
		vc.l.add(vc.e.at(), "%s: want true or false, got %s", vc.what, kind(vc.e.val))
	}
}

// risk takes a risk: low, medium or high (a least level: medium or
// high).
func (vc *fieldValue) risk(r *model.RiskLevel) {
	s, ok := vc.l.str(vc.e, vc.what)
	if !ok {
		return
	}
	switch lv := model.RiskLevel(s); {
	case lv == model.RiskMedium || lv == model.RiskHigh || lv == model.RiskLow && vc.kind != kindLevel:
		*r, vc.ok = lv, true
	case vc.kind == kindLevel:
		vc.l.add(vc.e.at(), "%s: %q is not a level; want medium or high (the least level any use of it gets)", vc.what, s)
	default:
		vc.l.add(vc.e.at(), "%s: %q is not a risk; want low, medium or high (it takes that risk and above)", vc.what, s)
	}
}

// mode takes trust's mode: required or off.
func (vc *fieldValue) mode(m *trust.Mode) {
	s, ok := vc.l.str(vc.e, vc.what)
	if !ok {
		return
	}
	switch trust.Mode(s) {
	case trust.ModeRequired, trust.ModeOff:
		*m, vc.ok = trust.Mode(s), true
	default:
		vc.l.add(vc.e.at(), "%s: %q is not a mode; want required (nothing runs without enough valid signatures) or off (no signatures asked for or checked)", vc.what, s)
	}
}

// listWant says what a list of each kind should be.
var listWant = map[string]string{
	kindArgv:       "the program and its arguments, such as [notify-send, approve-tui]",
	kindNames:      "a list of channel names, such as [push]",
	kindKinds:      "a list of kinds of page, such as [ran_without_approval]; kinds: " + strings.Join(EventKinds, ", "),
	kindPaths:      "a list of absolute paths or paths starting with ~/ (a directory ends in /)",
	kindPrincipals: "a list of principals as the trust file names them, such as [alice, bob]",
	kindMembers:    "a list of members (OS user names or SSH key comments)",
}

// strings takes a list of strings that are not empty, each
// checked as its kind says; the items' places are noted (l.at) when the
// list is taken. An effects value may be one effect's name.
func (vc *fieldValue) strings(dst *[]string) {
	l, e, what := vc.l, vc.e, vc.what
	var items []string
	var nodes []ast.Node
	if _, list := e.val.(*ast.SequenceNode); vc.kind != kindEffects || list {
		want, ok := listWant[vc.kind]
		if vc.kind == kindEffects {
			want, ok = "an effect, such as delete, or a list of them, such as [delete, infra-destroy]; effects: "+strings.Join(policy.EffectNames(), ", "), true
		}
		if !ok {
			panic("config: a list of kind " + vc.kind)
		}
		if items, nodes, ok = l.strList(e, what, want); !ok {
			return
		}
	} else {
		s, ok := l.str(e, what)
		if !ok {
			return
		}
		items, nodes = []string{s}, []ast.Node{e.at()}
	}
	good := true
	bad := func(i int, format string, args ...any) {
		l.add(nodes[i], format, args...)
		good = false
	}
	seen := map[string]bool{}
	for i, s := range items {
		switch vc.kind {
		case kindPaths:
			if !filepath.IsAbs(s) && !strings.HasPrefix(s, "~/") {
				bad(i, "%s, item %d: %q is neither absolute nor under ~/; want a path such as /srv/prod/ or ~/.kube/config", what, i+1, s)
			}
		case kindPrincipals:
			if why := plainPrincipal(s); why != "" {
				bad(i, "%s, item %d: %q %s; want a principal as the trust file names it, such as alice", what, i+1, s, why)
			}
		case kindMembers:
			k := strings.ToLower(policy.Person(s))
			if k == "" {
				bad(i, "%s, item %d names nobody", what, i+1)
			} else if seen[k] {
				bad(i, "%s, item %d: %s is in the group already", what, i+1, s)
			}
			seen[k] = true
		case kindKinds:
			if !slices.Contains(EventKinds, s) {
				bad(i, "%s, item %d: %q is not a kind of page; want one of %s", what, i+1, s, strings.Join(EventKinds, ", "))
			} else if seen[s] {
				bad(i, "%s: %s is named twice", what, s)
			}
			seen[s] = true
		case kindEffects:
			if !policy.ValidEffect(s) {
				bad(i, "%s: %q is not an effect; want one of %s", what, s, strings.Join(policy.EffectNames(), ", "))
			} else if seen[s] {
				bad(i, "%s: %s is named twice", what, s)
			}
			seen[s] = true
		}
	}
	if !good {
		return
	}
	*dst, vc.ok = items, true
	for i := range items {
		l.at[&(*dst)[i]] = entry{key: e.key, val: nodes[i]}
	}
}

// secret takes a secret's name: NAME_env an environment
// variable's, NAME_file a file's (absolute against the file's directory).
func (vc *fieldValue) secret(s *Secret) {
	l, e, what := vc.l, vc.e, vc.what
	if s.Key != "" {
		l.add(e.key, "%s: %s is given already; want one of the two", what, s.Key)
		return
	}
	v, ok := l.nonEmpty(e, what)
	if !ok {
		return
	}
	line, col := pos(e.key)
	s.Key, s.Line, s.Column = e.name, line, col
	if strings.HasSuffix(e.name, "_env") {
		if !envName().MatchString(v) {
			l.add(e.at(), "%s: %q is not an environment variable's name; want letters, digits and '_', such as NTFY_TOKEN", what, v)
			return
		}
		s.Env = v
	} else {
		if !filepath.IsAbs(v) {
			v = filepath.Join(l.dir, v)
		}
		s.File = filepath.Clean(v)
	}
	vc.ok = true
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

// flagText is a decoded value as its flag would take it.
func flagText(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case time.Duration:
		return x.String()
	case int:
		return strconv.Itoa(x)
	case string:
		return x
	}
	panic("config: a section field of type " + v.Type().String())
}

// channelKey is one key of a channel, from its field in Channel.
type channelKey struct {
	key   string
	types []string // the channel types that take it (nil: every one)
	kind  string   // the config tag
	index int
}

// channelSchema is every key a channel takes, in Channel's order (a
// secret's two keys, NAME_env then NAME_file, where its field is).
var channelSchema = sync.OnceValue(func() []channelKey {
	t := reflect.TypeFor[Channel]()
	var out []channelKey
	for i := range t.NumField() {
		sf := t.Field(i)
		var types []string
		if ts := sf.Tag.Get("types"); ts != "" {
			types = strings.Split(ts, ",")
		}
		if name := sf.Tag.Get("secret"); name != "" {
			out = append(out, channelKey{name + "_env", types, "secret", i}, channelKey{name + "_file", types, "secret", i})
		} else if key := sf.Tag.Get("yaml"); key != "" {
			out = append(out, channelKey{key, types, sf.Tag.Get("config"), i})
		}
	}
	return out
})

// channelKeysFor are the keys a channel of type typ takes, in order.
func channelKeysFor(typ string) []string {
	var out []string
	for _, k := range channelSchema() {
		if k.types == nil || slices.Contains(k.types, typ) {
			out = append(out, k.key)
		}
	}
	return out
}

// channelKeyNamed is the key name of a channel.
func channelKeyNamed(name string) channelKey {
	for _, k := range channelSchema() {
		if k.key == name {
			return k
		}
	}
	return channelKey{index: -1}
}
