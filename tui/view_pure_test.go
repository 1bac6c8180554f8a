package tui

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"

	"github.com/approve-tui/approve-tui/storage"
)

// dump writes v and everything it reaches, field by field, so that two
// dumps differ exactly when something the console holds changed. Functions
// and channels are compared by identity; the store, the renderer, the
// context and the terminal belong to others and are left out.
func dump(b *strings.Builder, v reflect.Value, seen map[uintptr]bool, depth int) {
	if depth > 40 {
		b.WriteString("…")
		return
	}
	switch v.Type() {
	case reflect.TypeOf((*storage.Store)(nil)), reflect.TypeOf((*lipgloss.Renderer)(nil)), reflect.TypeOf((*screen)(nil)), reflect.TypeOf((*storage.Watcher)(nil)):
		fmt.Fprintf(b, "%s@%x", v.Type(), v.Pointer())
		return
	case reflect.TypeOf((*context.Context)(nil)).Elem():
		b.WriteString("ctx")
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		if seen[v.Pointer()] {
			fmt.Fprintf(b, "&%x", v.Pointer())
			return
		}
		seen[v.Pointer()] = true
		b.WriteString("&")
		dump(b, v.Elem(), seen, depth+1)
	case reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		fmt.Fprintf(b, "(%s)", v.Elem().Type())
		dump(b, v.Elem(), seen, depth+1)
	case reflect.Struct:
		b.WriteString("{")
		for i := range v.NumField() {
			fmt.Fprintf(b, "%s:", v.Type().Field(i).Name)
			dump(b, v.Field(i), seen, depth+1)
			b.WriteString(" ")
		}
		b.WriteString("}")
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice {
			fmt.Fprintf(b, "cap%d", v.Cap())
		}
		b.WriteString("[")
		for i := range v.Len() {
			dump(b, v.Index(i), seen, depth+1)
			b.WriteString(",")
		}
		b.WriteString("]")
	case reflect.Map:
		keys := make([]string, 0, v.Len())
		vals := map[string]reflect.Value{}
		for _, k := range v.MapKeys() {
			var kb strings.Builder
			dump(&kb, k, seen, depth+1)
			keys = append(keys, kb.String())
			vals[kb.String()] = v.MapIndex(k)
		}
		sort.Strings(keys)
		b.WriteString("map[")
		for _, k := range keys {
			b.WriteString(k + ":")
			dump(b, vals[k], seen, depth+1)
			b.WriteString(",")
		}
		b.WriteString("]")
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		fmt.Fprintf(b, "%s@%x", v.Kind(), v.Pointer())
	case reflect.String:
		fmt.Fprintf(b, "%q", v.String())
	case reflect.Bool:
		fmt.Fprint(b, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		fmt.Fprint(b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		fmt.Fprint(b, v.Uint())
	case reflect.Float32, reflect.Float64:
		fmt.Fprint(b, v.Float())
	default:
		fmt.Fprintf(b, "?%s", v.Kind())
	}
}

// state is everything m holds, as text.
func state(m *Model) string {
	var b strings.Builder
	dump(&b, reflect.ValueOf(m).Elem(), map[uintptr]bool{}, 0)
	return b.String()
}

// View changes nothing: no I/O, no sorting, no marking of what was read.
// The frame is laid out by the update before it (render), and what it
// shows counts as read once the next update learns it was drawn.
func TestViewIsPure(t *testing.T) {
	for _, sc := range scenarios() {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			name := fmt.Sprintf("%s-%dx%d", sc.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				m := sc.play(t, size)
				before := state(m)
				first, second := m.View(), m.View()
				if first != second {
					t.Fatal("two calls of View in a row returned two frames")
				}
				if after := state(m); after != before {
					t.Fatalf("View changed the console:\n%s", firstDifference(before, after))
				}
			})
		}
	}
	// Too small, and before any size is known.
	f := newFixture(t)
	for _, m := range []*Model{console(t, f, operator, 40, 10), New(Options{Store: f.s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true})} {
		before := state(m)
		m.View()
		m.View()
		if after := state(m); after != before {
			t.Fatalf("View changed the console:\n%s", firstDifference(before, after))
		}
	}
}

// firstDifference is where two dumps part, with some context.
func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(i-200, 0)
	return fmt.Sprintf("before: …%s\nafter:  …%s", a[from:min(i+200, len(a))], b[from:min(i+200, len(b))])
}

// The read gate counts a frame as drawn once the update after it learns
// so, not when View is called: a frame laid out and never handed on (the
// next update came first, with nothing in between to draw it) is the one
// exception, and every driver draws after every update.
func TestWhatIsDrawnCountsAtTheNextUpdate(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 80, 24)
	selectThenPress(t, m, f.ids["long"], "enter")
	m.Update(tickMsg{at: t0}) // the first page was drawn
	unread := m.detail.unread
	if unread == 0 {
		t.Fatal("the long proposal fits on one page")
	}
	m.Update(keyMsg("pgdown"))
	if m.detail.unread != unread {
		t.Fatalf("%d lines were counted read before the frame that shows them was drawn", unread-m.detail.unread)
	}
	m.Update(tickMsg{at: t0})
	if m.detail.unread >= unread {
		t.Fatal("the frame drawn was not counted at the next update")
	}
}
