package risk

import (
	"slices"
	"testing"
)

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "ls -la", "ls -la"},
		{"case", "RM -RF /", "rm -rf /"},
		{"csi", "r\x1b[0mm -rf /", "rm -rf /"},
		{"csi params", "\x1b[1;31;2 qrm", "rm"},
		{"csi unterminated", "\x1b[12\x00rm", "12rm"}, // falls back to the single-byte form
		{"osc bel", "\x1b]0;title\x07rm", "rm"},
		{"osc st", "\x1b]8;;http://x\x1b\\rm", "rm"},
		{"osc earliest terminator", "\x1b]a\x07rm\x07x", "rm\x07x"},
		{"osc unterminated", "\x1b]rm -rf /", "rm -rf /"},
		{"dcs", "\x1bPq#0;2\x1b\\rm", "rm"},
		{"apc unterminated", "\x1b_rm", "rm"},
		{"nF", "\x1b(Brm", "rm"},
		{"nF unterminated", "\x1b  ", "\x1b  "},
		{"fp", "\x1b7rm\x1b8", "rm"},
		{"lone esc", "rm\x1b", "rm\x1b"},
		{"esc before non-ascii", "\x1bé", "\x1bé"},
		{"8-bit csi", "\u009b31mrm", "rm"},
		{"8-bit csi unterminated", "\u009b31", "31"},
		{"8-bit osc", "\u009d0;t\u009crm", "rm"},
		{"c1", "r\u0085m", "rm"},
		{"nul", "r\x00m -rf /", "rm -rf /"},
		{"nul after esc survives strip", "\x1b\x00[0mx", "\x1b[0mx"},
		{"nfkc fullwidth", "ｒｍ　－ｒｆ　／", "rm -rf /"},
		{"nfkc ligature", "ﬁnd", "find"},
		{"backslash", `r\m -rf /`, "rm -rf /"},
		{"double backslash", `a\\b`, `a\b`},
		{"backslash newline kept", "a\\\nb", "a\\\nb"},
		{"escaped multibyte", `\ｒm`, "rm"},
		{"empty single quotes", "r''m", "rm"},
		{"empty double quotes", `r""m`, "rm"},
		{"quotes one pass", `'""'`, "''"},
		{"three quotes", `'''`, "'"},
		{"dotted capital i", "\u0130", "i\u0307"},
		{"invalid utf8", "r\xffm", "r\ufffdm"},
	} {
		if got := Normalize(tc.in); got != tc.want {
			t.Errorf("%s: Normalize(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// Obfuscated commands are classified like the plain ones.
func TestClassifyObfuscated(t *testing.T) {
	for _, cmd := range []string{
		"ｒｍ -rf /",
		`r\m -rf /`,
		"r''m -rf /",
		`r""m -rf /`,
		"r\x1b[0mm -rf /",
		"r\x00m -rf /",
		"RM -RF /",
		"rm\u00a0-rf /",      // NBSP: NFKC makes it a space
		"rm\u000b-rf\u000b/", // \v is whitespace for Python's \s
	} {
		if got := descs(Classify(cmd)); !slices.Contains(got, "recursive delete of root filesystem") {
			t.Errorf("Classify(%q) = %q", cmd, got)
		}
	}
	// Python's IGNORECASE matches i with the dotless ı.
	if got := descs(Classify("kıll -9 -1")); !slices.Contains(got, "kill all processes") {
		t.Errorf("dotless i: %q", got)
	}
}
