package config

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"
)

// Each part of the file is written once, as its struct: a field's yaml
// tag is its key (a Channel's secret tag names NAME_env and NAME_file),
// and the keys a part allows, in the order messages list them, come from
// the fields' order. In the flat sections (serve:, tier2:) a field's flag
// tag is the command-line flag it stands for. A field's config tag says
// more of its value: "path" (made absolute against the file's
// directory), "url" (a plain http or https URL), "argv" (a program and
// its arguments), "zero" (a duration that may be zero; else above zero).
// goccy/go-yaml decodes each value into its field through the
// unmarshalers below, which check it and add every problem where it is in
// the file, so that one file's problems are all said at once.

// sectionField is one key of a flat section, from its struct field.
type sectionField struct {
	key, flag string
	kind      string // the config tag
	index     int
}

// sectionFields are the keys of the flat section struct t, in its order.
func sectionFields(t reflect.Type) []sectionField {
	var out []sectionField
	for i := range t.NumField() {
		sf := t.Field(i)
		key := sf.Tag.Get("yaml")
		if key == "" || key == "-" {
			continue
		}
		out = append(out, sectionField{key: key, flag: sf.Tag.Get("flag"), kind: sf.Tag.Get("config"), index: i})
	}
	return out
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

// valueCtx is what the unmarshalers need of the value being decoded: the
// loader that collects problems, the entry (its key and how messages name
// it) and the field's kind (its config tag); ok says the value was taken.
type valueCtx struct {
	l    *loader
	e    entry
	what string
	kind string
	ok   bool
}

type valueCtxKey struct{}

// decodeValue decodes e's value into dst (a pointer to a field of one of
// the types below), with every problem added to l; it reports whether
// the value was taken. The unmarshalers check e's value itself: dst is
// that one field, never a struct or a list holding such fields.
func (l *loader) decodeValue(e entry, what, kind string, dst any) bool {
	vc := &valueCtx{l: l, e: e, what: what, kind: kind}
	ctx := context.WithValue(context.Background(), valueCtxKey{}, vc)
	dec := yaml.NewDecoder(&bytes.Buffer{}, yaml.Strict(),
		yaml.CustomUnmarshalerContext(unmarshalString),
		yaml.CustomUnmarshalerContext(unmarshalCount),
		yaml.CustomUnmarshalerContext(unmarshalDuration),
		yaml.CustomUnmarshalerContext(unmarshalBool),
		yaml.CustomUnmarshalerContext(unmarshalArgv),
		yaml.CustomUnmarshalerContext(unmarshalSecret))
	node := e.val
	if node == nil {
		return false // refused by deref, and said
	}
	if err := dec.DecodeFromNodeContext(ctx, node, dst); err != nil {
		// Every value goes through the unmarshalers, which say what is
		// wrong and return nil; anything else is still a problem.
		var ye yaml.Error
		if errors.As(err, &ye) {
			l.add(e.at(), "%s: %s", what, ye.GetMessage())
		} else {
			l.add(e.at(), "%s: %v", what, err)
		}
		return false
	}
	return vc.ok
}

func valueOf(ctx context.Context) *valueCtx {
	vc, _ := ctx.Value(valueCtxKey{}).(*valueCtx)
	if vc == nil {
		// Only decodeValue decodes with these unmarshalers.
		panic("config: value decoded without its context")
	}
	return vc
}

// unmarshalString takes a string that is not empty: a plain http(s) URL
// for a url field; a path is made absolute against the file's directory.
func unmarshalString(ctx context.Context, s *string, _ []byte) error {
	vc := valueOf(ctx)
	read := vc.l.nonEmpty
	if vc.kind == "url" {
		read = vc.l.url
	}
	v, ok := read(vc.e, vc.what)
	if !ok {
		return nil
	}
	if vc.kind == "path" && !filepath.IsAbs(v) {
		v = filepath.Join(vc.l.dir, v)
	}
	*s, vc.ok = v, true
	return nil
}

// unmarshalCount takes a whole number of at least 1.
func unmarshalCount(ctx context.Context, n *int, _ []byte) error {
	vc := valueOf(ctx)
	if v, ok := vc.l.count(vc.e, vc.what); ok {
		*n, vc.ok = v, true
	}
	return nil
}

// unmarshalDuration takes a duration above zero, such as 30s or 5m; one
// of at least zero for a zero field.
func unmarshalDuration(ctx context.Context, d *time.Duration, _ []byte) error {
	vc := valueOf(ctx)
	if v, ok := vc.l.duration(vc.e, vc.what, vc.kind != "zero"); ok {
		*d, vc.ok = v, true
	}
	return nil
}

// unmarshalBool takes true or false.
func unmarshalBool(ctx context.Context, b *bool, _ []byte) error {
	vc := valueOf(ctx)
	if v, ok := vc.l.boolean(vc.e, vc.what); ok {
		*b, vc.ok = v, true
	}
	return nil
}

// unmarshalArgv takes a program and its arguments: a list of strings.
func unmarshalArgv(ctx context.Context, argv *[]string, _ []byte) error {
	vc := valueOf(ctx)
	if v, _, ok := vc.l.strList(vc.e, vc.what, "the program and its arguments, such as [notify-send, approve-tui]"); ok {
		*argv, vc.ok = v, true
	}
	return nil
}

// unmarshalSecret takes a secret's name: NAME_env an environment
// variable's, NAME_file a file's (absolute against the file's directory).
func unmarshalSecret(ctx context.Context, s *Secret, _ []byte) error {
	vc := valueOf(ctx)
	vc.ok = vc.l.secretKey(s, vc.e, vc.what)
	return nil
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

// section reads the flat section e (serve: or tier2:) into dst, a pointer
// to its struct, and notes each value taken as a Setting.
func (l *loader) section(f *File, e entry, section string, dst any) {
	sv := reflect.ValueOf(dst).Elem()
	fields := sectionFields(sv.Type())
	keys := sectionKeys(fields)
	es, ok := l.mapping(e.val, section, "a mapping ("+strings.Join(keys, ", ")+")", keys)
	if !ok {
		return
	}
	for _, se := range es {
		var fd sectionField
		for _, c := range fields {
			if c.key == se.name {
				fd = c
			}
		}
		field := sv.Field(fd.index)
		if !l.decodeValue(se, section+": "+se.name, fd.kind, field.Addr().Interface()) {
			continue
		}
		line, col := pos(se.key)
		f.settings = append(f.settings, Setting{Section: section, Key: fd.key, Flag: fd.flag, Value: flagText(field), Line: line, Column: col})
	}
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
