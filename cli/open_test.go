package cli

import (
	"bytes"
	"strings"
	"testing"
)

// --open ID is checked before the console starts: an id, not a flag it
// swallowed, and not with --follow; "open ID" (the ssh form) typed locally
// says what to type here.
func TestOpenFlagIsChecked(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--open", ""}, "--open needs the approval id of a proposal"},
		{[]string{"--open", "  "}, "--open needs the approval id of a proposal"},
		{[]string{"--open"}, "flag needs an argument"},
		{[]string{"--open", "-dashid01"}, "an id that starts with - is given as --open=-dashid01"},
		{[]string{"--open", "--read-only"}, "an id that starts with - is given as --open=--read-only"},
		{[]string{"--open", "hm-abc123", "--follow", "alice"}, "--open and --follow both choose"},
		{[]string{"open", "hm-abc123"}, "here it is approve-tui --open ID"},
		{[]string{"--open", "hm-abc\x1b[31m"}, "the console needs a terminal"},
		{[]string{"--open=-dashid01"}, "the console needs a terminal"},
		{[]string{"--read-only", "--open", "hm-abc123"}, "the console needs a terminal"},
	} {
		var out, errb bytes.Buffer
		code := Execute(append([]string{"--db", t.TempDir() + "/state.db"}, tc.args...), strings.NewReader(""), &out, &errb)
		if code != ExitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, errb.String(), ExitUsage, tc.want)
		}
		if strings.Contains(errb.String(), "\x1b") {
			t.Errorf("%q: the id reached stderr raw: %q", tc.args, errb.String())
		}
	}
}
