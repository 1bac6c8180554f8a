package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex CLI runs a hook from a user's or project's hooks.json only when the
// user trusted it: its /hooks review stores, in the user's config.toml,
//
//	[hooks.state."<hooks.json path>:<event>:<group>:<handler>"]
//	trusted_hash = "sha256:<hex>"
//
// and a hook whose current hash differs (any edit of its command, timeout,
// matcher or status message) is "modified" and skipped. The key names the
// file, the event in snake_case, and the positions of the matcher group and
// of the handler in it.
//
// The hash is SHA-256 over the compact JSON, keys sorted at every level, of
// the handler's normalised identity:
//
//	{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"...",
//	  "statusMessage":"...","timeout":930,"type":"command"}],"matcher":"^Bash$"}
//
// where timeout is the handler's (600 when unset, at least 1), matcher and
// statusMessage are left out when unset, and strings are escaped as
// serde_json writes them (only '"', '\\' and control characters). Checked
// against the hashes codex app-server's hooks/list reports (see the test
// that runs the real Codex).

// CodexHandler is one command handler of a Codex hook, as the hash sees it.
type CodexHandler struct {
	Event         string // snake_case: pre_tool_use, post_tool_use...
	Matcher       string // "" for none
	Command       string
	Timeout       int // seconds; 0: Codex's default, 600
	StatusMessage string
}

// CodexDefaultTimeout is Codex's hook timeout when a handler sets none.
const CodexDefaultTimeout = 600

// CodexHookKey is the key of the handler at group g, position h of event in
// the hooks file at path (absolute, as Codex resolves it).
func CodexHookKey(path, event string, g, h int) string {
	return path + ":" + event + ":" + strconv.Itoa(g) + ":" + strconv.Itoa(h)
}

// CodexHookHash is the trusted_hash Codex's review stores for h.
func CodexHookHash(h CodexHandler) string {
	t := h.Timeout
	if t == 0 {
		t = CodexDefaultTimeout
	}
	if t < 1 {
		t = 1
	}
	var b bytes.Buffer
	// Keys in sorted order, at each level.
	b.WriteString(`{"event_name":`)
	serdeString(&b, h.Event)
	b.WriteString(`,"hooks":[{"async":false,"command":`)
	serdeString(&b, h.Command)
	if h.StatusMessage != "" {
		b.WriteString(`,"statusMessage":`)
		serdeString(&b, h.StatusMessage)
	}
	b.WriteString(`,"timeout":`)
	b.WriteString(strconv.Itoa(t))
	b.WriteString(`,"type":"command"}]`)
	if h.Matcher != "" {
		b.WriteString(`,"matcher":`)
		serdeString(&b, h.Matcher)
	}
	b.WriteString(`}`)
	sum := sha256.Sum256(b.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// serdeString writes s as a JSON string the way serde_json does: '"' and
// '\\' escaped, \b \t \n \f \r short, other control bytes as \u00xx, and
// everything else (non-ASCII, '<', U+2028...) as is.
func serdeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch e := shortEscape(rune(c)); {
		case e != "":
			b.WriteString(e)
		case c < 0x20:
			fmt.Fprintf(b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// CodexHookState is one [hooks.state."KEY"] table of config.toml.
type CodexHookState struct {
	TrustedHash string
	HasEnabled  bool
	Enabled     bool
}

// CodexConfig is a parsed config.toml, kept as its bytes so that an edit
// changes only what it must.
type CodexConfig struct {
	src []byte // without the byte order mark
	bom bool   // the file starts with a UTF-8 byte order mark (Codex accepts one)
	doc map[string]any
}

// utf8BOM is the UTF-8 byte order mark.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ParseCodexConfig parses config.toml (nil or empty: no file). A file that
// is not valid TOML is an error: it is never rewritten.
func ParseCodexConfig(src []byte) (*CodexConfig, error) {
	bom := bytes.HasPrefix(src, utf8BOM)
	src = bytes.TrimPrefix(src, utf8BOM)
	doc := map[string]any{}
	if err := toml.Unmarshal(src, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("not valid TOML at line %d, column %d: %s", row, col, de.Error())
		}
		return nil, fmt.Errorf("not valid TOML: %v", err)
	}
	return &CodexConfig{src: src, bom: bom, doc: doc}, nil
}

// Bytes is the file's content.
func (c *CodexConfig) Bytes() []byte {
	if c.bom {
		return append(append([]byte{}, utf8BOM...), c.src...)
	}
	return c.src
}

func tomlTable(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	return m, ok
}

// HookState is the state stored for key, if any.
func (c *CodexConfig) HookState(key string) (CodexHookState, bool) {
	var st CodexHookState
	hooks, _ := tomlTable(c.doc["hooks"])
	state, _ := tomlTable(hooks["state"])
	for k, v := range state {
		if strings.TrimSpace(k) != key {
			continue
		}
		t, ok := tomlTable(v)
		if !ok {
			return st, false
		}
		st.TrustedHash, _ = t["trusted_hash"].(string)
		st.Enabled, st.HasEnabled = t["enabled"].(bool)
		return st, true
	}
	return st, false
}

// ProjectTrusted reports whether [projects."DIR"] trust_level is "trusted"
// for one of dirs, and the trust level found ("" for none).
func (c *CodexConfig) ProjectTrusted(dirs ...string) (bool, string) {
	projects, _ := tomlTable(c.doc["projects"])
	level := ""
	for _, d := range dirs {
		p, ok := tomlTable(projects[d])
		if !ok {
			continue
		}
		l, _ := p["trust_level"].(string)
		if l == "trusted" {
			return true, l
		}
		if level == "" {
			level = l
		}
	}
	return false, level
}

// SetHookTrust returns the file with trusted_hash = hashes[KEY] in each
// [hooks.state."KEY"] table, creating the tables it lacks at the end of the
// file. Everything else (comments, other tables and keys, the other keys of
// those tables, such as enabled) is kept byte for byte. A key whose state
// is written in another form (dotted keys, an inline table) is refused
// rather than guessed at, and the result is parsed again and checked to
// differ from the input only by those hashes.
func (c *CodexConfig) SetHookTrust(hashes map[string]string) ([]byte, error) {
	return c.EditHookTrust(hashes, nil)
}

// EditHookTrust is SetHookTrust(hashes) that also removes the
// [hooks.state."KEY"] table of each key of drop: the table's header and
// keys, and the blank line before it, with the comment and blank lines that
// end it kept for what follows. A key of drop that hashes sets gets a new
// table holding only its trusted_hash (the old one's other keys, such as
// enabled, were another hook's). The result is parsed again and checked to
// differ from the input only by those hashes and tables.
func (c *CodexConfig) EditHookTrust(hashes map[string]string, drop map[string]bool) ([]byte, error) {
	keys := make([]string, 0, len(hashes))
	for k := range hashes {
		if !utf8.ValidString(k) {
			return nil, fmt.Errorf("hook key %q is not valid UTF-8", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var dropped []string
	for k, d := range drop {
		if d {
			dropped = append(dropped, k)
		}
	}
	sort.Strings(dropped)

	type edit struct {
		at      int // offset
		cut     int // bytes replaced from at
		content string
	}
	var edits []edit
	found := map[string]bool{}   // tables of hashes' keys kept and edited
	removed := map[string]bool{} // tables of drop's keys removed

	lineStart := func(off int) int { return bytes.LastIndexByte(c.src[:off], '\n') + 1 }
	dropFrom, dropHeaderEnd := -1, 0
	// endDrop ends the table being removed before the line at end.
	endDrop := func(end int) {
		if dropFrom < 0 {
			return
		}
		for end > dropHeaderEnd {
			ls := lineStart(end - 1)
			if ls < dropHeaderEnd {
				break
			}
			l := strings.TrimSpace(string(c.src[ls:end]))
			if l != "" && !strings.HasPrefix(l, "#") {
				break
			}
			end = ls
		}
		from := dropFrom
		if from >= 2 && c.src[from-1] == '\n' && c.src[from-2] == '\n' {
			from--
		}
		edits = append(edits, edit{at: from, cut: end - from})
		dropFrom = -1
	}

	p := unstable.Parser{}
	p.Reset(c.src)
	var cur string // the key of the owned table we are in ("" for none)
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			cur = ""
			first := e.Key()
			first.Next()
			hdr := lineStart(int(first.Node().Raw.Offset))
			endDrop(hdr)
			path := keyPath(e.Key())
			if e.Kind != unstable.Table || len(path) != 3 || path[0] != "hooks" || path[1] != "state" {
				continue
			}
			k := path[2]
			_, ours := hashes[k]
			if !ours && !drop[k] {
				continue
			}
			if found[k] || removed[k] {
				return nil, fmt.Errorf("[hooks.state.%q] is defined twice", k)
			}
			eol := bytes.IndexByte(c.src[first.Node().Raw.Offset:], '\n')
			at := len(c.src)
			if eol >= 0 {
				at = int(first.Node().Raw.Offset) + eol + 1
			}
			if drop[k] {
				removed[k] = true
				dropFrom, dropHeaderEnd = hdr, at
				continue
			}
			found[k] = true
			cur = k
			// Insert trusted_hash after the header's line; replaced
			// below if the table has one.
			nl := ""
			if eol < 0 {
				nl = "\n"
			}
			edits = append(edits, edit{at: at, content: nl + "trusted_hash = " + tomlString(hashes[cur]) + "\n"})
		case unstable.KeyValue:
			if cur == "" {
				continue
			}
			path := keyPath(e.Key())
			if len(path) == 1 && path[0] == "trusted_hash" {
				v := e.Value()
				// Drop the pending insertion for this table: replace the
				// value instead.
				edits = edits[:len(edits)-1]
				edits = append(edits, edit{at: int(v.Raw.Offset), cut: int(v.Raw.Length), content: tomlString(hashes[cur])})
			}
		}
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("not valid TOML: %v", err)
	}
	endDrop(len(c.src))

	var add strings.Builder
	for _, k := range keys {
		if found[k] {
			continue
		}
		if _, ok := c.stateValue(k); ok && !removed[k] {
			return nil, fmt.Errorf("hooks.state.%q is written as dotted keys or an inline table; approve-tui edits only a [hooks.state.%q] table: rewrite it so, or remove it", k, k)
		}
		fmt.Fprintf(&add, "\n[hooks.state.%s]\ntrusted_hash = %s\n", tomlString(k), tomlString(hashes[k]))
	}
	for _, k := range dropped {
		if _, ok := c.stateValue(k); ok && !removed[k] {
			return nil, fmt.Errorf("hooks.state.%q is written as dotted keys or an inline table; approve-tui removes only a [hooks.state.%q] table: remove it yourself", k, k)
		}
	}

	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
	var out bytes.Buffer
	last := 0
	for _, e := range edits {
		out.Write(c.src[last:e.at])
		out.WriteString(e.content)
		last = e.at + e.cut
	}
	out.Write(c.src[last:])
	if add.Len() > 0 {
		if out.Len() > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
			out.WriteByte('\n')
		}
		s := add.String()
		if out.Len() == 0 {
			s = strings.TrimPrefix(s, "\n")
		}
		out.WriteString(s)
	}

	// The result must parse, and mean the input plus these hashes, less
	// those tables.
	after, err := ParseCodexConfig(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("the edit would not parse (%v); config.toml left unchanged: change the trust in Codex's /hooks", err)
	}
	want, err := ParseCodexConfig(c.src)
	if err != nil {
		return nil, err
	}
	hooks, ok := tomlTable(want.doc["hooks"])
	if !ok {
		if want.doc["hooks"] != nil {
			return nil, errors.New("hooks in config.toml is not a table")
		}
		hooks = map[string]any{}
		want.doc["hooks"] = hooks
	}
	state, ok := tomlTable(hooks["state"])
	if !ok {
		if hooks["state"] != nil {
			return nil, errors.New("hooks.state in config.toml is not a table")
		}
		state = map[string]any{}
		hooks["state"] = state
	}
	for _, k := range dropped {
		delete(state, k)
	}
	for _, k := range keys {
		t, ok := tomlTable(state[k])
		if !ok {
			t = map[string]any{}
			state[k] = t
		}
		t["trusted_hash"] = hashes[k]
	}
	pruneHookState(after.doc)
	pruneHookState(want.doc)
	if !reflect.DeepEqual(after.doc, want.doc) {
		return nil, errors.New("the edit would change more than the hooks' trust; config.toml left unchanged: change the trust in Codex's /hooks")
	}
	if c.bom {
		return append(append([]byte{}, utf8BOM...), out.Bytes()...), nil
	}
	return out.Bytes(), nil
}

// pruneHookState drops an empty hooks.state table, then an empty hooks one.
func pruneHookState(doc map[string]any) {
	hooks, ok := tomlTable(doc["hooks"])
	if !ok {
		return
	}
	if st, ok := tomlTable(hooks["state"]); ok && len(st) == 0 {
		delete(hooks, "state")
	}
	if len(hooks) == 0 {
		delete(doc, "hooks")
	}
}

func (c *CodexConfig) stateValue(key string) (any, bool) {
	hooks, _ := tomlTable(c.doc["hooks"])
	state, _ := tomlTable(hooks["state"])
	v, ok := state[key]
	return v, ok
}

func keyPath(it unstable.Iterator) []string {
	var path []string
	for it.Next() {
		path = append(path, string(it.Node().Data))
	}
	return path
}

// tomlString writes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch e := shortEscape(r); {
		case e != "":
			b.WriteString(e)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// shortEscape is the two-character escape JSON and TOML basic strings
// both give r ('"', '\\', \b \t \n \f \r), or "" for any other rune.
func shortEscape(r rune) string {
	switch r {
	case '"':
		return `\"`
	case '\\':
		return `\\`
	case '\b':
		return `\b`
	case '\t':
		return `\t`
	case '\n':
		return `\n`
	case '\f':
		return `\f`
	case '\r':
		return `\r`
	}
	return ""
}

// InlineHooks counts the command handlers written in config.toml itself
// (under [hooks], beside hooks.json) whose command ours reports as one.
func (c *CodexConfig) InlineHooks(ours func(command string) bool) int {
	hooks, _ := tomlTable(c.doc["hooks"])
	n := 0
	for ev, v := range hooks {
		if ev == "state" {
			continue
		}
		groups, _ := v.([]any)
		for _, g := range groups {
			gt, _ := tomlTable(g)
			hs, _ := gt["hooks"].([]any)
			for _, h := range hs {
				ht, _ := tomlTable(h)
				if cmd, _ := ht["command"].(string); ours(cmd) {
					n++
				}
			}
		}
	}
	return n
}

// HooksFeatureOff names the [features] switch that turns Codex's hooks off
// ("hooks", or its older name "codex_hooks", set false), if one does.
func (c *CodexConfig) HooksFeatureOff() (string, bool) {
	f, _ := tomlTable(c.doc["features"])
	for _, k := range []string{"hooks", "codex_hooks"} {
		if v, ok := f[k].(bool); ok && !v {
			return "features." + k, true
		}
	}
	return "", false
}
