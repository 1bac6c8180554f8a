package diffview

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/approve-tui/approve-tui/model"
)

func testStyles(p termenv.Profile) Styles {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(p)
	r.SetHasDarkBackground(true)
	return NewStyles(r)
}

// render renders d without colour, or with 256 colours.
func render(d *Diff, width int, colour bool) []string {
	if colour {
		return Render(d, width, testStyles(termenv.ANSI256))
	}
	return Render(d, width, testStyles(termenv.Ascii))
}

const deploy = `diff --git a/deploy.sh b/deploy.sh
index 3b18e51..a9c4ad2 100755
--- a/deploy.sh
+++ b/deploy.sh
@@ -8,5 +8,5 @@ main() {
 set -eu
-rm -rf ./build
+rm -rf ./build ./dist
 make release
-scp release.tar.gz deploy@staging.example.com:/srv/releases/
+scp release.tar.gz deploy@production.example.com:/srv/releases/
 echo done
`

func checkLines(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRenderASCII(t *testing.T) {
	d := mustParse(t, deploy, 0)
	head := []string{
		"diff --git a/deploy.sh b/deploy.sh",
		"index 3b18e51..a9c4ad2 100755",
		"--- a/deploy.sh",
		"+++ b/deploy.sh",
		"@@ -8,5 +8,5 @@ main() {",
		" 8  8   set -eu",
		" 9    - rm -rf ./build",
		"    9 + rm -rf ./build ./dist",
		"10 10   make release",
	}
	t.Run("80", func(t *testing.T) {
		checkLines(t, render(d, 80, false), append(slices.Clone(head),
			"11    - scp release.tar.gz deploy@staging.example.com:/srv/releases/",
			"   11 + scp release.tar.gz deploy@production.example.com:/srv/releases/",
			"12 12   echo done",
		))
	})
	t.Run("40 wraps", func(t *testing.T) {
		checkLines(t, render(d, 40, false), append(slices.Clone(head),
			"11    - scp release.tar.gz deploy@stagin",
			"      -↪g.example.com:/srv/releases/",
			"   11 + scp release.tar.gz deploy@produc",
			"      +↪tion.example.com:/srv/releases/",
			"12 12   echo done",
		))
	})
	t.Run("24 drops the gutter", func(t *testing.T) {
		got := render(d, 24, false)
		i := slices.Index(got, "  set -eu")
		if i < 0 {
			t.Fatalf("no context line without gutter:\n%s", strings.Join(got, "\n"))
		}
		checkLines(t, got[i:i+4], []string{
			"  set -eu",
			"- rm -rf ./build",
			"+ rm -rf ./build ./dist",
			"  make release",
		})
	})
}

func TestRenderSeparatesFilesAndWrapsHeaders(t *testing.T) {
	d := mustParse(t, twoFiles, 0)
	got := render(d, 24, false)
	want := []string{
		"diff --git a/cmd/run.go ",
		"↪b/cmd/run.go",
		"index 1111111..2222222 1",
		"↪00644",
		"--- a/cmd/run.go",
		"+++ b/cmd/run.go",
		"@@ -10,3 +10,4 @@ func r",
		"↪un() error {",
	}
	checkLines(t, got[:len(want)], want)
	i := slices.Index(got, "diff --git a/README.md b")
	if i < 1 || got[i-1] != "" {
		t.Fatalf("no blank line before the second file:\n%s", strings.Join(got, "\n"))
	}
}

var sgrRE = regexp.MustCompile(`\x1b\[([0-9;]*)m`)

// run is a stretch of text under one SGR state.
type run struct{ codes, text string }

// runs splits a rendered line into its styled stretches.
func runs(line string) []run {
	var out []run
	codes := ""
	for line != "" {
		loc := sgrRE.FindStringSubmatchIndex(line)
		if loc == nil {
			out = append(out, run{codes, line})
			break
		}
		if loc[0] > 0 {
			out = append(out, run{codes, line[:loc[0]]})
		}
		codes = line[loc[2]:loc[3]]
		if codes == "0" {
			codes = ""
		}
		line = line[loc[1]:]
	}
	return out
}

// marked returns the texts styled with an SGR parameter, e.g. "48;5;" for a
// background or "7" for reverse video.
func marked(line, param string) []string {
	var out []string
	for _, r := range runs(line) {
		if strings.Contains(";"+r.codes+";", ";"+param+";") {
			out = append(out, r.text)
		}
	}
	return out
}

func highlights(line string) []string { return marked(line, "48;5") }

func TestRenderWordHighlights(t *testing.T) {
	d := mustParse(t, deploy, 0)
	got := render(d, 100, true)
	for _, tc := range []struct {
		line int
		want []string
	}{
		{5, nil},                     // context
		{6, nil},                     // "rm -rf ./build": nothing of it was removed
		{7, []string{" ./dist"}},     // what was added to it
		{9, []string{"staging"}},     // only the changed word...
		{10, []string{"production"}}, // ...on both sides
	} {
		if h := highlights(got[tc.line]); !slices.Equal(h, tc.want) {
			t.Errorf("line %d %q: highlighted %q, want %q", tc.line, ansi.Strip(got[tc.line]), h, tc.want)
		}
	}
	// The rest of a changed line keeps the line's colour, without background.
	for _, r := range runs(got[10]) {
		if r.text != "production" && strings.Contains(r.codes, "48;5") {
			t.Errorf("unchanged %q has a background", r.text)
		}
	}
	if rs := runs(got[10]); rs[len(rs)-1].codes == "" || !strings.Contains(rs[len(rs)-1].codes, "38;5") {
		t.Errorf("the tail of an added line is not coloured: %q", rs)
	}
}

func TestRenderWordHighlightsPairing(t *testing.T) {
	in := "@@ -1,4 +1,3 @@\n-timeout = 30\n-retries = 5\n-echo hello world\n+timeout = 60\n+rm -rf / --no-preserve-root\n x\n"
	d := mustParse(t, in, 0)
	got := render(d, 80, true)
	want := map[int][]string{
		1: {"30"},
		4: {"60"},
		2: nil, // paired with the unrelated "rm -rf …": whole-line change
		5: nil,
		3: nil, // no partner
	}
	for i, w := range want {
		if h := highlights(got[i]); !slices.Equal(h, w) {
			t.Errorf("line %q: highlighted %q, want %q", ansi.Strip(got[i]), h, w)
		}
	}
	// A highlight wraps with its line and never splits a character.
	in = "@@ -1 +1 @@\n-名前を変更する前のファイル\n+名前を変更した後のファイル\n"
	got = render(mustParse(t, in, 0), 10, true)
	var all []string
	for _, l := range got[1:] {
		if w := ansi.StringWidth(l); w > 10 {
			t.Errorf("%q is %d cells wide", ansi.Strip(l), w)
		}
		all = append(all, highlights(l)...)
	}
	if strings.Join(all, "") != "する前した後" {
		t.Errorf("highlights = %q", all)
	}
}

const hostile = "diff --git a/\x1b[31mred b/\x1b[31mred\n" +
	"--- a/\x1b[31mred\n+++ b/\x1b[31mred\n" +
	"@@ -1,3 +1,9 @@ \x1b]0;pwned title\x07\n" +
	" ok\n" +
	"-\x1b[2J\x1b[Hclear\n" +
	"+\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\\n" +
	"+safe command\rrm -rf /\n" +
	"+\u202etxt.exe\n" +
	"+zero\u200bwidth\ufeff joiner\u200d\n" +
	"+bad \xff\xfe utf8\n" +
	"+nul\x00 c1\u009b31m del\x7f bell\a\n" +
	"+line\u2028separator\u2066isolate\u2069\n" +
	" end\n"

// checkInert fails if a rendered line could do anything to a terminal
// beyond our own SGR styling, or holds hidden characters.
func checkInert(t testing.TB, lines []string, width int) {
	t.Helper()
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > width {
			t.Fatalf("%q is %d cells wide, more than %d", l, w, width)
		}
		if rest := sgrRE.ReplaceAllString(l, ""); strings.ContainsAny(rest, "\x1b\r\n\t\x00\u009b") {
			t.Fatalf("%q holds a raw control character besides SGR styling", l)
		}
		if f := model.Findings(ansi.Strip(l)); len(f) > 0 {
			t.Fatalf("%q holds %v", ansi.Strip(l), f)
		}
	}
}

func TestRenderHostile(t *testing.T) {
	d := mustParse(t, hostile, 0)
	want := []string{
		`diff --git a/\x1b[31mred b/\x1b[31mred`,
		`@@ -1,3 +1,9 @@ \x1b]0;pwned title\x07`,
		`- \x1b[2J\x1b[Hclear`,
		`+ \x1b]8;;https://evil.example/\x1b\click me\x1b]8;;\x1b\`,
		`+ safe command\x0drm -rf /`,
		`+ <U+202E>txt.exe`,
		`+ zero<U+200B>width<U+FEFF> joiner<U+200D>`,
		`+ bad \xff\xfe utf8`,
		`+ nul\x00 c1<U+009B>31m del\x7f bell\x07`,
		`+ line<U+2028>separator<U+2066>isolate<U+2069>`,
	}
	for _, colour := range []bool{false, true} {
		got := render(d, 200, colour)
		checkInert(t, got, 200)
		text := ansi.Strip(strings.Join(got, "\n"))
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("colour=%v: output lacks %q:\n%s", colour, w, text)
			}
		}
		if colour {
			// escapes stand out without colour too: reverse video
			i := slices.IndexFunc(got, func(l string) bool { return strings.Contains(l, "txt.exe") })
			if m := marked(got[i], "7"); !slices.Equal(m, []string{`<U+202E>`}) {
				t.Errorf("reverse-video runs = %q", m)
			}
		}
	}
	for w := 0; w <= 60; w++ {
		checkInert(t, render(d, w, true), max(w, MinWidth))
	}
	// what the names say is kept raw for the caller, who must sanitise it
	if d.Files[0].NewName != "\x1b[31mred" {
		t.Errorf("name = %q", d.Files[0].NewName)
	}
}

func TestRenderRawAndProblems(t *testing.T) {
	d := mustParse(t, "just some text\n+ that is not a diff\n", 1)
	checkLines(t, render(d, 40, false), []string{
		"! not a unified diff: shown as raw text",
		"just some text",
		"+ that is not a diff",
	})

	var b strings.Builder
	b.WriteString("--- a/f\n+++ b/f\n")
	for i := range 12 {
		fmt.Fprintf(&b, "@@ bad %d @@\n", i)
	}
	d, _ = Parse(b.String())
	got := render(d, 40, false)
	checkLines(t, got[7:10], []string{
		"! line 10: malformed hunk header",
		"! … and 4 more problems",
		"--- a/f",
	})

	checkLines(t, render(&Diff{}, 40, false), []string{"! empty diff"})
	if Render(nil, 40, testStyles(termenv.Ascii)) != nil {
		t.Error("Render(nil) is not nil")
	}
}

func TestRenderSummaryAndMissing(t *testing.T) {
	st := testStyles(termenv.Ascii)
	checkLines(t, RenderSummary("removes build cache\x1b[2J\nand \u202elogs", 40, st), []string{
		"diff summary only (no full diff): the",
		"agent's description, not the change",
		"itself",
		`  removes build cache\x1b[2J`,
		`  and <U+202E>logs`,
	})
	checkLines(t, RenderMissing(40, st), []string{
		"! No diff available: approving means you",
		"  have reviewed the change some other",
		"  way.",
	})
	long := strings.Repeat("日本語のテキスト", 10) + " " + strings.Repeat("x", 90)
	for w := 0; w <= 50; w++ {
		checkInert(t, RenderSummary(long, w, testStyles(termenv.ANSI256)), max(w, MinWidth))
		checkInert(t, RenderMissing(w, st), max(w, MinWidth))
	}
	got := ansi.Strip(strings.Join(RenderSummary(long, 13, st), ""))
	if strings.ReplaceAll(got, " ", "") != strings.ReplaceAll("diffsummaryonly(nofulldiff):theagent'sdescription,notthechangeitself"+long, " ", "") {
		t.Errorf("the summary lost text: %q", got)
	}
}

// bigDiff is a diff of n body lines over several files, with paired
// changes and some long lines.
func bigDiff(n int) string {
	var b strings.Builder
	for f := 0; n > 0; f++ {
		fmt.Fprintf(&b, "diff --git a/pkg/file%d.go b/pkg/file%d.go\nindex 1..2 100644\n--- a/pkg/file%d.go\n+++ b/pkg/file%d.go\n", f, f, f, f)
		for h := 0; h < 5 && n > 0; h++ {
			fmt.Fprintf(&b, "@@ -%d,60 +%d,60 @@ func f%d() {\n", h*100+1, h*100+1, h)
			for i := 0; i < 20; i++ {
				fmt.Fprintf(&b, " \tctx := context.WithTimeout(parent, %d*time.Second) // line %d\n", i, i)
				fmt.Fprintf(&b, "-\tif err := client.Do(ctx, req%d); err != nil { return fmt.Errorf(\"request %d failed: %%w\", err) }\n", i, i)
				fmt.Fprintf(&b, "+\tif err := client.Send(ctx, req%d, opts); err != nil { return fmt.Errorf(\"send %d failed after retries: %%w\", err) }\n", i, i)
			}
			n -= 60
		}
	}
	return b.String()
}

// BenchmarkRender2000 renders a diff of 2,000 body lines (1,000 paired
// changes) at width 100; Parse is measured on its own.
func BenchmarkRender2000(b *testing.B) {
	text := bigDiff(2000)
	d, _ := Parse(text)
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Parse(text)
		}
	})
	for _, p := range []struct {
		name    string
		profile termenv.Profile
	}{{"render-ascii", termenv.Ascii}, {"render-256", termenv.ANSI256}} {
		st := testStyles(p.profile)
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			var rows int
			for b.Loop() {
				rows = len(Render(d, 100, st))
			}
			b.ReportMetric(float64(rows), "rows")
		})
	}
}
