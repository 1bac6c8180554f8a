package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	shlex "github.com/anmitsu/go-shlex"
)

// Agent settings files (Claude Code's and Gemini CLI's settings.json,
// Codex's hooks.json) are JSON objects the user edits too: an install
// reads one keeping the order of its keys, changes only the hook entries
// approve-tui owns (and the switches it names), and writes it back indented.

// JSONObject is a JSON object that keeps its keys' order. Values are
// *JSONObject, []any, json.Number, string, bool or nil.
type JSONObject struct {
	keys []string
	vals map[string]any
}

// NewJSONObject is an empty object.
func NewJSONObject() *JSONObject { return &JSONObject{vals: map[string]any{}} }

// Get is the value of key.
func (o *JSONObject) Get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// Set sets key, appending it when new.
func (o *JSONObject) Set(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// Delete removes key.
func (o *JSONObject) Delete(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// Keys are the keys in order.
func (o *JSONObject) Keys() []string { return o.keys }

// Object is the object at key, if it is one.
func (o *JSONObject) Object(key string) (*JSONObject, bool) {
	v, ok := o.vals[key].(*JSONObject)
	return v, ok
}

// MarshalJSON writes the object in its keys' order.
func (o *JSONObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := marshalNoEscape(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshalNoEscape(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ParseJSONObject reads a settings file: one JSON object, nothing after
// it. Duplicate keys are refused (which one the agent keeps is its own
// business). An empty or blank file is an empty object.
func ParseJSONObject(src []byte) (*JSONObject, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		return NewJSONObject(), nil
	}
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	if err != nil {
		return nil, jsonErr(src, dec, err)
	}
	o, ok := v.(*JSONObject)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, jsonErr(src, dec, errors.New("more after the object"))
	}
	return o, nil
}

func jsonErr(src []byte, dec *json.Decoder, err error) error {
	off := dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	if off > int64(len(src)) {
		off = int64(len(src))
	}
	lineNo := 1 + bytes.Count(src[:off], []byte("\n"))
	return fmt.Errorf("not valid JSON near line %d: %v", lineNo, err)
}

func decodeOrdered(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := NewJSONObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				if _, dup := o.vals[k]; dup {
					return nil, fmt.Errorf("duplicate key %q", k)
				}
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				o.Set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

// FormatJSON writes o indented by two spaces, with a final newline.
func FormatJSON(o *JSONObject) ([]byte, error) {
	raw, err := marshalNoEscape(o)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// IsApproveTUIHook reports whether command runs "approve-tui hook AGENT"
// (by any path to a file named approve-tui): the entries an install owns.
func IsApproveTUIHook(command string, who Agent) bool {
	words, err := shlex.Split(command, true)
	if err != nil || len(words) < 3 {
		return false
	}
	return filepath.Base(words[0]) == "approve-tui" && words[1] == "hook" && words[2] == string(who)
}

// HookGroup is one matcher group an install writes under an event.
type HookGroup struct {
	Event    string
	Matcher  string
	Handlers []*JSONObject
}

// HookMove is another handler whose position an install changed: keys
// that name positions (Codex's trust) must follow it.
type HookMove struct {
	Event                string
	OldGroup, OldHandler int
	NewGroup, NewHandler int
	Matcher              string
	Fields               *JSONObject
}

// MergeHookGroups puts groups into settings' "hooks" object. Under each
// event, every handler of who's hook is removed (a group left with no
// handler by that removal dropped), and the new group takes the place of
// the first group that held one (right after it when that group holds
// other handlers too), else goes at the end: re-installing moves nothing
// else. Other events, groups, handlers and keys are kept in order. It
// returns the other handlers whose position changed.
func MergeHookGroups(settings *JSONObject, who Agent, groups []HookGroup) ([]HookMove, error) {
	hv, has := settings.Get("hooks")
	hooks, ok := hv.(*JSONObject)
	if has && !ok {
		return nil, errors.New(`"hooks" is not an object`)
	}
	if !has {
		hooks = NewJSONObject()
		settings.Set("hooks", hooks)
	}
	mine := map[string]*JSONObject{}
	for _, g := range groups {
		ev, has := hooks.Get(g.Event)
		if _, ok := ev.([]any); has && !ok {
			return nil, fmt.Errorf("hooks.%s is not a list", g.Event)
		}
		grp := NewJSONObject()
		grp.Set("matcher", g.Matcher)
		hs := make([]any, len(g.Handlers))
		for i, h := range g.Handlers {
			hs[i] = h
		}
		grp.Set("hooks", hs)
		mine[g.Event] = grp
		if !has {
			hooks.Set(g.Event, []any{})
		}
	}
	var moves []HookMove
	for _, ev := range hooks.Keys() {
		arr, ok := hooks.vals[ev].([]any)
		if !ok {
			continue
		}
		ours := mine[ev]
		out := make([]any, 0, len(arr)+1)
		placed := false
		for gi, g := range arr {
			grp, ok := g.(*JSONObject)
			if !ok {
				out = append(out, g)
				continue
			}
			hs, ok := grp.vals["hooks"].([]any)
			if !ok {
				out = append(out, g)
				continue
			}
			kept := make([]any, 0, len(hs))
			var oldIdx []int
			for hi, h := range hs {
				if ho, ok := h.(*JSONObject); ok {
					if c, _ := ho.vals["command"].(string); IsApproveTUIHook(c, who) {
						continue
					}
				}
				kept = append(kept, h)
				oldIdx = append(oldIdx, hi)
			}
			had := len(kept) < len(hs)
			if len(kept) > 0 {
				if had {
					grp.vals["hooks"] = kept
				}
				ng := len(out)
				m, _ := grp.vals["matcher"].(string)
				for nh, oh := range oldIdx {
					if ng != gi || nh != oh {
						ho, _ := kept[nh].(*JSONObject)
						moves = append(moves, HookMove{Event: ev, OldGroup: gi, OldHandler: oh, NewGroup: ng, NewHandler: nh, Matcher: m, Fields: ho})
					}
				}
				out = append(out, g)
			}
			if had && ours != nil && !placed {
				out = append(out, ours)
				placed = true
			}
		}
		if ours != nil && !placed {
			out = append(out, ours)
		}
		hooks.vals[ev] = out
	}
	return moves, nil
}

// FoundHook is a handler of who's hook found in a settings file.
type FoundHook struct {
	Event   string
	Group   int
	Handler int
	Matcher string
	Matched bool // the group has a "matcher"
	Fields  *JSONObject
	Command string
}

// FindHooks lists who's handlers in settings, event by event.
func FindHooks(settings *JSONObject, who Agent) []FoundHook {
	hooks, ok := settings.Object("hooks")
	if !ok {
		return nil
	}
	var found []FoundHook
	for _, ev := range hooks.Keys() {
		arr, _ := hooks.vals[ev].([]any)
		for gi, g := range arr {
			grp, ok := g.(*JSONObject)
			if !ok {
				continue
			}
			m, matched := grp.vals["matcher"].(string)
			hs, _ := grp.vals["hooks"].([]any)
			for hi, h := range hs {
				ho, ok := h.(*JSONObject)
				if !ok {
					continue
				}
				if c, _ := ho.vals["command"].(string); IsApproveTUIHook(c, who) {
					found = append(found, FoundHook{Event: ev, Group: gi, Handler: hi, Matcher: m, Matched: matched, Fields: ho, Command: c})
				}
			}
		}
	}
	return found
}

// HookWords splits a hook's command line into its words.
func HookWords(command string) ([]string, error) {
	w, err := shlex.Split(command, true)
	if err != nil {
		return nil, err
	}
	if len(w) == 0 {
		return nil, errors.New("empty command")
	}
	return w, nil
}

// FlagValue is the value of --name in words ("--name V" or "--name=V").
func FlagValue(words []string, name string) (string, bool) {
	for i, w := range words {
		if w == "--"+name && i+1 < len(words) {
			return words[i+1], true
		}
		if v, ok := strings.CutPrefix(w, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// StripJSONComments blanks out // and /* */ comments outside strings, as
// Gemini CLI does before parsing its settings (JSON with comments): every
// byte of a comment but its newlines becomes a space, so that positions in
// errors stay true. An unterminated block comment runs to the end.
func StripJSONComments(src []byte) []byte {
	out := make([]byte, len(src))
	copy(out, src)
	inStr := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				if out[i] != '\r' {
					out[i] = ' '
				}
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			out[i], out[i+1] = ' ', ' '
			for i += 2; i < len(out); i++ {
				if out[i] == '*' && i+1 < len(out) && out[i+1] == '/' {
					out[i], out[i+1] = ' ', ' '
					i++
					break
				}
				if out[i] != '\n' && out[i] != '\r' {
					out[i] = ' '
				}
			}
		}
	}
	return out
}

// RemoveHooks takes every handler of who's hook out of settings' "hooks"
// object, as MergeHookGroups does when it has none to put back: a matcher
// group left with no handler by the removal is dropped, and so is an event
// list, and then "hooks" itself, left empty by it; everything else is kept
// in order. It returns the handlers removed (none: settings is untouched)
// and the other handlers whose position changed.
func RemoveHooks(settings *JSONObject, who Agent) ([]FoundHook, []HookMove, error) {
	found := FindHooks(settings, who)
	if len(found) == 0 {
		return nil, nil, nil
	}
	hooks, _ := settings.Object("hooks")
	moves, err := MergeHookGroups(settings, who, nil)
	if err != nil {
		return nil, nil, err
	}
	emptied := map[string]bool{}
	for _, f := range found {
		emptied[f.Event] = true
	}
	for ev := range emptied {
		if arr, ok := hooks.vals[ev].([]any); ok && len(arr) == 0 {
			hooks.Delete(ev)
		}
	}
	if len(hooks.Keys()) == 0 {
		settings.Delete("hooks")
	}
	return found, moves, nil
}
