package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/human"
)

// Validate checks what holds across the parts of f, decoded by l: every
// problem is added where it is, found through the places l noted (l.at)
// of the values it took. A value that was not taken was refused where it
// is, and is not checked again. It completes the channels' defaults too.
func (l *loader) Validate(f *File) {
	for _, c := range f.Channels {
		// include_command: the file's, where the channel does not say.
		if _, set := l.at[&c.IncludeCommand]; !set {
			c.IncludeCommand = f.IncludeCommand
		}
	}
	for i, r := range f.Routes {
		l.validateSteps(r, i+1)
	}
}

// validateSteps checks route num's steps: each later than the one before,
// each naming channels defined, each once.
func (l *loader) validateSteps(r *Route, num int) {
	prev := time.Duration(-1)
	for i := range r.Steps {
		st := &r.Steps[i]
		sw := fmt.Sprintf("route %d, step %d", num, i+1)
		if e, ok := l.at[&st.After]; ok {
			if st.After <= prev {
				l.add(e.at(), "%s: after %s is not later than the step before (%s); want the steps in increasing after", sw, human.Written(st.After), human.Written(prev))
			}
			prev = st.After
		}
		if _, ok := l.at[&st.Notify]; !ok {
			continue
		}
		seen := map[string]bool{}
		for j, name := range st.Notify {
			at := l.at[&st.Notify[j]].val
			switch {
			case seen[name]:
				l.add(at, "%s: notify: channel %q is named twice", sw, name)
			case !slices.Contains(l.defined, name):
				l.add(at, "%s: notify: no channel %q; want one of the channels defined: %s", sw, name, orNone(l.defined))
			}
			seen[name] = true
		}
	}
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "(none: define them under channels)"
	}
	names = slices.Clone(names)
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// sortedKeys are m's keys, sorted.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
