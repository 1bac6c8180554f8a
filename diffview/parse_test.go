package diffview

import (
	"slices"
	"strings"
	"testing"
)

// kinds lists the kinds of d's lines as a compact string:
// P plain, F file header, H hunk header, C context, A added, R removed,
// N no-newline marker.
func kinds(d *Diff) string {
	var b strings.Builder
	for _, l := range d.Lines {
		b.WriteByte("PFHCARN"[l.Kind])
	}
	return b.String()
}

// rejoin puts the input back together from the parsed lines.
func rejoin(d *Diff) string {
	raws := make([]string, len(d.Lines))
	for i, l := range d.Lines {
		raws[i] = l.Raw
	}
	if d.CRLF {
		return strings.Join(raws, "\r\n")
	}
	return strings.Join(raws, "\n")
}

// checkLossless fails unless d holds every byte of in.
func checkLossless(t testing.TB, in string, d *Diff) {
	t.Helper()
	want := strings.TrimSuffix(in, "\n")
	if d.CRLF {
		want = strings.TrimSuffix(in, "\r\n")
	}
	if got := rejoin(d); got != want {
		t.Fatalf("lines do not give the input back:\n got %q\nwant %q", got, want)
	}
}

func mustParse(t *testing.T, in string, wantProblems int) *Diff {
	t.Helper()
	d, err := Parse(in)
	if d == nil {
		t.Fatal("Parse returned a nil Diff")
	}
	if len(d.Problems) != wantProblems {
		t.Fatalf("problems = %q, want %d", d.Problems, wantProblems)
	}
	if (err != nil) != (wantProblems > 0) {
		t.Fatalf("err = %v with %d problems", err, len(d.Problems))
	}
	checkLossless(t, in, d)
	return d
}

const twoFiles = `diff --git a/cmd/run.go b/cmd/run.go
index 1111111..2222222 100644
--- a/cmd/run.go
+++ b/cmd/run.go
@@ -10,3 +10,4 @@ func run() error {
 	ctx := context.Background()
-	return exec(ctx, "rm -rf /tmp/cache")
+	log.Print("cleaning")
+	return exec(ctx, "rm -rf /tmp/cache/*")
 }
@@ -40,3 +41,2 @@ func other() {
 	a := 1
-	b := 2
 	return a
diff --git a/README.md b/README.md
index 3333333..4444444 100644
--- a/README.md
+++ b/README.md
@@ -1 +1 @@
-# Old title
+# New title
`

func TestParseTwoFiles(t *testing.T) {
	d := mustParse(t, twoFiles, 0)
	if got, want := kinds(d), "FFFFHCRAACHCRCFFFFHRA"; got != want {
		t.Fatalf("kinds = %s, want %s", got, want)
	}
	want := []File{
		{OldName: "cmd/run.go", NewName: "cmd/run.go", Added: 2, Removed: 2},
		{OldName: "README.md", NewName: "README.md", Added: 1, Removed: 1},
	}
	if !slices.Equal(d.Files, want) {
		t.Fatalf("files = %+v, want %+v", d.Files, want)
	}
	if f, a, r := Stats(d); f != 2 || a != 3 || r != 3 {
		t.Fatalf("Stats = %d, +%d, -%d; want 2, +3, -3", f, a, r)
	}
	// line numbers: old and new sides count separately
	type num struct{ old, new int }
	var got []num
	for _, l := range d.Lines[5:10] {
		got = append(got, num{l.Old, l.New})
	}
	if wantNums := []num{{10, 10}, {11, 0}, {0, 11}, {0, 12}, {12, 13}}; !slices.Equal(got, wantNums) {
		t.Fatalf("numbers = %v, want %v", got, wantNums)
	}
	if l := d.Lines[12]; l.Old != 41 || l.New != 0 || l.Text() != "\tb := 2" {
		t.Fatalf("second hunk's removed line = %+v", l)
	}
}

func TestParseStatuses(t *testing.T) {
	for _, tc := range []struct {
		name, in, kinds string
		file            File
	}{
		{"new file", "diff --git a/run.sh b/run.sh\nnew file mode 100755\nindex 0000000..e69de29\n--- /dev/null\n+++ b/run.sh\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+rm -rf \"$1\"\n",
			"FFFFFHAA", File{NewName: "run.sh", Status: Created, Added: 2}},
		{"deleted file", "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\nindex e69de29..0000000\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n",
			"FFFFFHR", File{OldName: "old.txt", Status: Deleted, Removed: 1}},
		{"pure rename", "diff --git a/a.go b/b.go\nsimilarity index 100%\nrename from a.go\nrename to b.go\n",
			"FFFF", File{OldName: "a.go", NewName: "b.go", Status: Renamed}},
		{"rename with changes", "diff --git a/x/a.go b/y/b.go\nsimilarity index 90%\nrename from x/a.go\nrename to y/b.go\nindex 1..2 100644\n--- a/x/a.go\n+++ b/y/b.go\n@@ -1,2 +1,2 @@\n package a\n-var A = 1\n+var A = 2\n",
			"FFFFFFFHCRA", File{OldName: "x/a.go", NewName: "y/b.go", Status: Renamed, Added: 1, Removed: 1}},
		{"copy", "diff --git a/a b/c\nsimilarity index 100%\ncopy from a\ncopy to c\n",
			"FFFF", File{OldName: "a", NewName: "c", Status: Copied}},
		{"mode change", "diff --git a/s.sh b/s.sh\nold mode 100644\nnew mode 100755\n",
			"FFF", File{OldName: "s.sh", NewName: "s.sh"}},
		{"quoted names", "diff --git \"a/sp ace\\303\\251\" \"b/sp ace\\303\\251\"\nnew file mode 100644\n",
			"FF", File{NewName: "sp aceé", Status: Created}},
		{"plain diff -u", "--- dir/a.txt\t2024-01-01 10:00:00.000000000 +0000\n+++ dir/a.txt\t2024-01-02 10:00:00.000000000 +0000\n@@ -1 +1 @@\n-x\n+y\n",
			"FFHRA", File{OldName: "dir/a.txt", NewName: "dir/a.txt", Added: 1, Removed: 1}},
		{"diff -r header", "diff -ru a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+y\n",
			"FFFHRA", File{OldName: "f", NewName: "f", Added: 1, Removed: 1}},
		{"hunk only", "@@ -3,2 +3,2 @@\n-a\n+b\n c\n",
			"HRAC", File{Added: 1, Removed: 1}},
		{"git binary", "diff --git a/logo.png b/logo.png\nindex 1..2 100644\nBinary files a/logo.png and b/logo.png differ\n",
			"FFF", File{OldName: "logo.png", NewName: "logo.png", Binary: true}},
		{"git binary patch", "diff --git a/x.bin b/x.bin\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral 3\nKcmZQzWMT\n\nliteral 0\nHcmV?d00001\n\n",
			"FFFFPPPPPP", File{NewName: "x.bin", Status: Created, Binary: true}},
		{"gnu binary", "Binary files a/x.bin and b/x.bin differ\n",
			"F", File{Binary: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustParse(t, tc.in, 0)
			if got := kinds(d); got != tc.kinds {
				t.Errorf("kinds = %s, want %s", got, tc.kinds)
			}
			if len(d.Files) != 1 || d.Files[0] != tc.file {
				t.Errorf("files = %+v, want %+v", d.Files, tc.file)
			}
		})
	}
}

func TestParseNoNewline(t *testing.T) {
	in := "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n keep\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n"
	d := mustParse(t, in, 0)
	if got, want := kinds(d), "FFHCRNAN"; got != want {
		t.Fatalf("kinds = %s, want %s", got, want)
	}
	if d.Lines[5].Text() != `\ No newline at end of file` {
		t.Fatalf("marker text = %q", d.Lines[5].Text())
	}
}

func TestParseCRLF(t *testing.T) {
	lf := "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n same\n-old\n+new\n"
	t.Run("every line", func(t *testing.T) {
		in := strings.ReplaceAll(lf, "\n", "\r\n")
		d := mustParse(t, in, 1) // the CRLF note
		if !d.CRLF || kinds(d) != "FFHCRA" || d.Lines[5].Text() != "new" {
			t.Fatalf("crlf=%v kinds=%s lines=%+v", d.CRLF, kinds(d), d.Lines)
		}
		if f, a, r := Stats(d); f != 1 || a != 1 || r != 1 {
			t.Fatalf("Stats = %d %d %d", f, a, r)
		}
	})
	t.Run("content only", func(t *testing.T) {
		// as git prints a CRLF file: headers end in LF, content in CRLF
		in := "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n same\r\n-old\r\n+new\r\n"
		d := mustParse(t, in, 0)
		if d.CRLF || kinds(d) != "FFHCRA" || d.Lines[5].Text() != "new\r" {
			t.Fatalf("crlf=%v kinds=%s lines=%+v", d.CRLF, kinds(d), d.Lines)
		}
		out := strings.Join(render(d, 80, false), "\n")
		if !strings.Contains(out, `+ new\x0d`) || strings.Contains(out, "\r") {
			t.Fatalf("the kept \\r is not shown escaped:\n%s", out)
		}
	})
}

func TestParseMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, in, kinds string
		problems        []string
	}{
		{"preamble and fences", "Here is the change:\n```diff\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n```\n",
			"PPFFHRAP", []string{"lines 1-2: text outside the diff", "line 8: text outside the diff"}},
		{"short hunk", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n",
			"FFHCRA", []string{"line 3: hunk header says -3 +3 lines, body has -2 +2"}},
		{"long hunk", "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n+rm -rf /\n",
			"FFHRAP", []string{"line 6: text outside the diff"}},
		{"bad hunk header", "--- a/f\n+++ b/f\n@@ -x +1 @@\n-a\n+b\n",
			"FFPPP", []string{"line 3: malformed hunk header", "lines 4-5: text outside the diff"}},
		{"huge numbers", "--- a/f\n+++ b/f\n@@ -99999999999999999999 +1 @@\n-a\n",
			"FFPP", []string{"line 3: malformed hunk header", "line 4: text outside the diff"}},
		{"unknown git header", "diff --git a/f b/f\nfrobnicate 3\n--- a/f\n+++ b/f\n",
			"FPFF", []string{"line 2: unrecognised file header line"}},
		{"interrupted hunk", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\nsomething else\n+b\n x\n",
			"FFHRPPP", []string{"line 3: hunk header says -2 +2 lines, body has -1 +0", "lines 5-7: text outside the diff"}},
		{"no newline outside a hunk", "\\ No newline at end of file\n--- a/f\n+++ b/f\n",
			"PFF", []string{"line 1: text outside the diff"}},
		{"combined diff", "diff --cc f\n@@@ -1,1 -1,1 +1,1 @@@\n- a\n +b\n",
			"PPPP", []string{"not a unified diff: shown as raw text"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustParse(t, tc.in, len(tc.problems))
			if got := kinds(d); got != tc.kinds {
				t.Errorf("kinds = %s, want %s", got, tc.kinds)
			}
			if !slices.Equal(d.Problems, tc.problems) {
				t.Errorf("problems = %q, want %q", d.Problems, tc.problems)
			}
		})
	}
}

func TestParseNotADiff(t *testing.T) {
	in := "I changed the config so that the cache is cleared.\n\n+ it is safe\n"
	d := mustParse(t, in, 1)
	if !d.Raw || kinds(d) != "PPP" || len(d.Files) != 0 {
		t.Fatalf("raw=%v kinds=%s files=%v", d.Raw, kinds(d), d.Files)
	}
	for _, in := range []string{"", "\n", "no newline at the end"} {
		d, _ := Parse(in)
		checkLossless(t, in, d)
	}
}
