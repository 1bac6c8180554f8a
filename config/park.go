package config

import (
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/human"
)

// DefaultParkWindow is the park window when neither --park-window nor the
// file's park: section says: how long a proposal whose waiter stopped (a
// hook its agent stopped waiting for, run --timeout) stays open, so that a
// late approval lets the same call through when the agent asks again.
const DefaultParkWindow = time.Hour

// MaxParkWindow bounds park: window: an approval given days after the
// agent stopped waiting is one nobody should act on; the agent asks anew.
const MaxParkWindow = 7 * 24 * time.Hour

// ParkOff is what ParkWindow gives when the file turns parking off
// (window: 0s): a negative window, which the hooks' and run's options
// read as "no parking" (the proposal is withdrawn, or abandoned, when its
// waiter stops).
const ParkOff time.Duration = -1

// ParkSettings is the file's park: section:
//
//	park:
//	  window: 1h     # 0s: parking off
type ParkSettings struct {
	// Window is how long a proposal stays open once its waiter stopped
	// (never past its expiry); 0 with Set: parking off.
	Window time.Duration `yaml:"window" flag:"park-window" config:"zero"`
	// Set says the file gave window; Line and Column are where.
	Set          bool
	Line, Column int
}

// parkKeys are the keys of the park: section.
var parkKeys = yamlKeys[ParkSettings]()

// ParkWindow is the park window run and the hooks use when --park-window
// is not given, in their options' terms: the file's park: window, or
// DefaultParkWindow when the file sets none, or ParkOff (negative) when
// it says 0s. Note that 0s in the file is "off", where a zero
// window in the hooks' and run's options is "the default".
func (f *File) ParkWindow() time.Duration {
	switch {
	case f == nil || !f.Park.Set:
		return DefaultParkWindow
	case f.Park.Window == 0:
		return ParkOff
	}
	return f.Park.Window
}

// park decodes park:.
func (l *loader) park(f *File, e entry) bool {
	_, ok, good := l.object(e.val, part{what: "park", prefix: "park: ", inFile: true, want: "a mapping (" + strings.Join(parkKeys, ", ") + ")", read: map[string]func(entry) bool{
		"window": func(we entry) bool {
			var d time.Duration
			if !l.decodeValue(we, "park: window", kindZero, &d) {
				return false
			}
			if d > MaxParkWindow {
				l.add(we.at(), "park: window: %s is more than %s; want how long a parked proposal stays approvable, such as 1h (0s: parking off)", human.Written(d), human.Written(MaxParkWindow))
				return false
			}
			f.Park.Window, f.Park.Set = d, true
			f.Park.Line, f.Park.Column = pos(we.key)
			return true
		},
	}}, &f.Park)
	return ok && good
}
