package docstest

import (
	"testing"
)

// The documentation's marked blocks are found whatever file holds them,
// each name once, with the fence's language and info string apart.
func TestMarked(t *testing.T) {
	blocks, err := Marked("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"two-commands", "install", "first-session", "agent-hooks", "policy", "serve"} {
		if blocks[name].Body == "" {
			t.Errorf("no block marked readme-test: %s", name)
		}
	}
	files := []File{{Path: "x.md", Text: "a\n<!-- readme-test: one -->\n```sh\necho 1\n```\n\n```sh {no-test: a daemon}\nserve\n```\n"}}
	all := AllBlocks(files)
	if len(all) != 2 || all[0].Marker != "one" || all[0].Line != 3 || all[0].Body != "echo 1\n" ||
		all[1].Marker != "" || NoTest.FindStringSubmatch(all[1].Info)[1] != "a daemon" {
		t.Fatalf("%+v", all)
	}
}
