package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// How a file is read. goccy/go-yaml parses it into an AST whose tokens
// carry the places messages give. One pass (object) decodes each mapping
// into its struct, the struct's tags being the schema: a key no field
// names is refused, with the keys allowed; a value is decoded into its
// field by the field's type and kind (decodeValue), checked there and
// noted where it is (loader.at). Validate then checks what holds across
// parts (steps in order, naming channels defined), from those places.
// Every problem of both is collected, so one file's problems are said at
// once, in the file's order. goccy/go-yaml's own Decoder is not used for
// the values: it stops at the first problem, words problems its own way,
// and decoding one value alone it knows no anchor outside that value, so
// an alias to one (command: [*prog]) would be refused.

// loader decodes one file: it walks the YAML AST, decodes each value into
// its field, and collects every problem as it goes.
type loader struct {
	dir     string
	probs   []Problem
	anchors map[string]ast.Node
	// at is where each value taken is in the file, by the address of the
	// field (or list item) it was decoded into: what Validate and the
	// settings need to say where.
	at map[any]entry
	// defined: the channels' names (those with a name that can be one).
	defined []string
	// badGroups: the policy's groups defined with problems (said there,
	// so not again where a rule names them).
	badGroups map[string]bool
}

// newLoader is a loader for the file at path (relative paths in it are
// taken from path's directory).
func newLoader(path string) *loader {
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return &loader{dir: dir, anchors: map[string]ast.Node{}, at: map[any]entry{}, badGroups: map[string]bool{}}
}

// problems is l's problems as an *Error for path, in the file's order
// (nil: none).
func (l *loader) problems(path string) error {
	if len(l.probs) == 0 {
		return nil
	}
	sort.SliceStable(l.probs, func(i, j int) bool {
		a, b := l.probs[i], l.probs[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return &Error{Path: path, Problems: l.probs}
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

// line is the line n starts on.
func line(n ast.Node) int {
	l, _ := pos(n)
	return l
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
		if allowed != nil && !slices.Contains(allowed, k.Value) {
			l.add(mv.Key, "%s: unknown key %q; allowed: %s", what, k.Value, strings.Join(allowed, ", "))
			continue
		}
		out = append(out, entry{name: k.Value, key: mv.Key, val: l.deref(mv.Value)})
	}
	return out, true
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

// part is how one mapping of the file is decoded into its struct.
type part struct {
	// what names the mapping in messages ("route 1"); its values are
	// named prefix+key ("route 1: steps").
	what, prefix string
	// want says what the mapping should be, for "want X, got Y".
	want string
	// allowed are the keys taken (nil: the struct's yaml tags).
	allowed []string
	// kinds are the kinds of the values by key, where the config tag
	// does not say (a struct of another package).
	kinds map[string]string
	// read reads the values of these keys (a part of its own, a mapping
	// of names): each reports whether its value was taken.
	read map[string]func(entry) bool
	// order is the order values are decoded in: the keys' (nil: the
	// fields'), or the file's (inFile).
	order  []string
	inFile bool
	// required are the keys the part must have, each with what to write
	// ("WHAT has no KEY; want WANT").
	required map[string]string
}

// object decodes mapping n into the struct dst points to, in one pass:
// each key into the field its yaml tag names (keys no field names are
// refused, with the keys allowed), each value with decodeValue
// by the field's type and kind, or by p.read, in p's order; a required
// key that is missing is said at n. It returns the entries
// read, in the file's order (ok false: n is no mapping, and that is
// said); good says every value was taken and none is missing.
func (l *loader) object(n ast.Node, p part, dst any) (es []entry, ok, good bool) {
	sv := reflect.ValueOf(dst).Elem()
	fields := sectionFields(sv.Type())
	allowed := p.allowed
	if allowed == nil {
		allowed = sectionKeys(fields)
	}
	es, ok = l.mapping(n, p.what, p.want, allowed)
	if !ok {
		return nil, false, false
	}
	good = true
	order := p.order
	switch {
	case p.inFile:
		order = nil
		for _, e := range es {
			order = append(order, e.name)
		}
	case order == nil:
		order = allowed
	}
	for _, key := range order {
		e, ok := find(es, key)
		if !ok {
			if want, ok := p.required[key]; ok {
				l.add(n, "%s has no %s; want %s", p.what, key, want)
				good = false
			}
			continue
		}
		if read := p.read[e.name]; read != nil {
			good = read(e) && good
			continue
		}
		fd, ok := fieldNamed(fields, e.name)
		if !ok {
			panic("config: no field and no reader for key " + e.name)
		}
		k := fd.kind
		if pk, ok := p.kinds[e.name]; ok {
			k = pk
		}
		good = l.decodeValue(e, p.prefix+e.name, k, sv.Field(fd.index).Addr().Interface()) && good
	}
	return es, true, good
}

// decodeNamed decodes e, a mapping of names to values of one kind: a
// name that badName says is not one ("is not a ...; want ...") is refused
// at its key, each value is decoded as kind. It reports whether every one
// was taken.
func decodeNamed[V any](l *loader, e entry, what, want, kind string, badName func(string) string) (map[string]V, bool) {
	es, ok := l.mapping(e.val, what, want, nil)
	if !ok {
		return nil, false
	}
	out := map[string]V{}
	good := true
	for _, ne := range es {
		var v V
		if why := badName(ne.name); why != "" {
			l.add(ne.key, "%s: %q %s", what, ne.name, why)
			good = false
		} else if l.decodeValue(ne, what+": "+ne.name, kind, &v) {
			out[ne.name] = v
		} else {
			good = false
		}
	}
	return out, good
}

func find(es []entry, name string) (entry, bool) {
	for _, e := range es {
		if e.name == name {
			return e, true
		}
	}
	return entry{}, false
}
