package model

import (
	"strings"
	"testing"
)

func TestSanitize(t *testing.T) {
	for _, tc := range []struct {
		in, line, block string
		findings        []string
	}{
		{"ls -la", "ls -la", "ls -la", nil},
		{"echo \x1b[31mred", `echo \x1b[31mred`, `echo \x1b[31mred`, []string{"escape sequence"}},
		{"a\nb\tc", `a\nb\tc`, "a\nb   c", nil},
		{"osc \x1b]8;;http://x\x07link", `osc \x1b]8;;http://x\x07link`, `osc \x1b]8;;http://x\x07link`, []string{"escape sequence", "control character"}},
		{"rm \u202eevil", `rm <U+202E>evil`, `rm <U+202E>evil`, []string{"bidirectional override"}},
		{"a\u200bb\ufeff", `a<U+200B>b<U+FEFF>`, `a<U+200B>b<U+FEFF>`, []string{"zero-width character"}},
		{"bad \xff\xfe", `bad \xff\xfe`, `bad \xff\xfe`, []string{"invalid UTF-8"}},
		{"c1 \u009b2J", `c1 <U+009B>2J`, `c1 <U+009B>2J`, []string{"C1 control character"}},
		{"cr\rhide", `cr\x0dhide`, `cr\x0dhide`, []string{"carriage return"}},
		{"tag \U000E0041", `tag <U+E0041>`, `tag <U+E0041>`, []string{"invisible format character"}},
		{"café ✓ 日本", "café ✓ 日本", "café ✓ 日本", nil},
	} {
		if got := Sanitize(tc.in, Line); got != tc.line {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
		}
		if got := Sanitize(tc.in, Block); got != tc.block {
			t.Errorf("Block(%q) = %q, want %q", tc.in, got, tc.block)
		}
		if got := Findings(tc.in); strings.Join(got, ",") != strings.Join(tc.findings, ",") {
			t.Errorf("Findings(%q) = %v, want %v", tc.in, got, tc.findings)
		}
	}
}

func TestSanitizeSegmentsMarkEscapes(t *testing.T) {
	segs := SanitizeSegments("a\x1bb", Line)
	if len(segs) != 3 || segs[1] != (Segment{Text: `\x1b`, Escaped: true}) || segs[0].Escaped || segs[2].Escaped {
		t.Fatalf("%+v", segs)
	}
}

// Nothing the sanitiser emits may reach a terminal as a control: no byte
// below 0x20 except \n (Block), no DEL, no C1, no invisible or bidi rune,
// and valid UTF-8 throughout.
func FuzzSanitizeIsInert(f *testing.F) {
	f.Add("\x1b[2J\x1b]0;t\x07\u202e\u200b\xff\r\n\t")
	f.Fuzz(func(t *testing.T, s string) {
		for _, mode := range []SanitizeMode{Line, Block} {
			out := Sanitize(s, mode)
			if len(Findings(out)) > 0 {
				t.Fatalf("output still has %v: %q", Findings(out), out)
			}
			if mode == Line && strings.ContainsAny(out, "\n\t") {
				t.Fatalf("line mode kept a newline or tab: %q", out)
			}
			if mode == Block && strings.Contains(out, "\t") {
				t.Fatalf("block mode kept a tab: %q", out)
			}
		}
	})
}

func BenchmarkSanitizeSegmentsManyEscapes(b *testing.B) {
	s := strings.Repeat("\x1b", 100_000)
	for i := 0; i < b.N; i++ {
		if segs := SanitizeSegments(s, Line); len(segs) != 1 {
			b.Fatal(len(segs))
		}
	}
}

func TestTerminalSafeKeepsStylesAndStopsEverythingElse(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain\ttext\n", "plain\ttext\n"},
		{"\x1b[1;38;2;255;0;8mred\x1b[0m", "\x1b[1;38;2;255;0;8mred\x1b[0m"}, // 8 is a colour value here
		{"\x1b[38;5;8mgrey\x1b[m", "\x1b[38;5;8mgrey\x1b[m"},
		{"a\x1b[8mhidden", `a\x1b[8mhidden`},                     // conceal
		{"\x1b]52;c;aGk=\x07", `\x1b]52;c;aGk=\x07`},             // clipboard
		{"\x1b]0;title\x1b\\", `\x1b]0;title\x1b\`},              // title
		{"\x1b[2J", `\x1b[2J`},                                   // not SGR
		{"\u009b31m\u202egpj.exe", `<U+009B>31m<U+202E>gpj.exe`}, // C1 CSI, bidi
		{"zero\u200bwidth│box", `zero<U+200B>width│box`},
		{"\r\x00", `\x0d\x00`},
	} {
		if got := TerminalSafe(c.in); got != c.want {
			t.Errorf("TerminalSafe(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Text already sanitised passes unchanged.
	s := Sanitize("evil\x1b]0;x\x07\u202e", Line)
	if TerminalSafe(s) != s {
		t.Fatal("sanitised text changed")
	}
}

// Width the terminal agrees with, and look-alikes shown for what they are.
func TestSanitizeWidthAndLookalikes(t *testing.T) {
	for _, c := range []struct{ in, want, finding string }{
		{"ok 👍🏽", "ok 👍<U+1F3FD>", "emoji modifier"},
		{"love ❤️", "love ❤<U+FE0F>", "variation selector"},
		{"☺︎", "☺<U+FE0E>", "variation selector"},
		{"flag 🇫🇷", "flag <U+1F1EB><U+1F1F7>", "regional indicator"},
		{"a\u00a0b\u3000c", "a<U+00A0>b<U+3000>c", "non-ASCII space"},
		{"1\ufe0f\u20e3", "1<U+FE0F><U+20E3>", "variation selector"},
		{"e\u0301\u0301\u0301\u0301", "e\u0301\u0301<U+0301><U+0301>", "run of combining marks"},
		{"café naïve", "café naïve", ""},
		{"pаypal.com", "p<U+0430>ypal.com", "mixed-script word"}, // Cyrillic а
		{"ρaypal", "<U+03C1>aypal", "mixed-script word"},         // Greek ρ
		{"Москва Athens Αθήνα", "Москва Athens Αθήνα", ""},       // whole words in one script
		{"rm -rf /ѕrv", "rm -rf /<U+0455>rv", "mixed-script word"},
		{"日本語テキスト", "日本語テキスト", ""},
		{"ｒｍ -rf", "<U+FF52><U+FF4D> -rf", "fullwidth look-alike"},
		{"😀 ok", "😀 ok", ""},
	} {
		if got := Sanitize(c.in, Line); got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
		f := Findings(c.in)
		if (c.finding == "") != (len(f) == 0) || (c.finding != "" && f[0] != c.finding) {
			t.Errorf("Findings(%q) = %v, want %q", c.in, f, c.finding)
		}
	}
}
