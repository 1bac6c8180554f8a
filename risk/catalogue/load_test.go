package catalogue

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadRejects(t *testing.T) {
	const ok = "programs:\n  - name: ok\n    about: fine\n    effects: [read]\n"
	tests := []struct {
		name  string
		files map[string]string
		want  string // substring of the error, with file:line
	}{
		{"syntax", map[string]string{"a.yaml": "programs:\n  - name: [x\n"}, "a.yaml:"},
		{"unknown key at top", map[string]string{"a.yaml": "programz: []\n"}, "a.yaml:1:"},
		{"unknown key in program", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n    effect: [read]\n"}, "a.yaml:4:"},
		{"unknown key in option", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n    options:\n      - names: [-a]\n        efects: [write]\n"}, "a.yaml:6:"},
		{"unknown key in subcommand", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n    subcommands:\n      - name: s\n        readonly: true\n"}, "a.yaml:6:"},
		{"unknown effect", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n    effects: [read, explode]\n"}, `a.yaml:2: x: unknown effect "explode"`},
		{"unknown option effect", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n    options:\n      - {names: [-a], effects: [boom]}\n"}, `a.yaml:5: x: option -a: unknown effect "boom"`},
		{"unknown subcommand effect", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n    subcommands:\n      - name: s\n        effects: [boom]\n"}, `a.yaml:5: x s: unknown effect "boom"`},
		{"unknown arg kind", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n    args: [file...]\n"}, `a.yaml:2: x: args: unknown kind "file"`},
		{"duplicate program", map[string]string{"a.yaml": ok, "b.yaml": "programs:\n  - name: other\n    about: y\n  - name: ok\n    about: again\n"}, `b.yaml:4: program "ok" is already defined at a.yaml:2`},
		{"duplicate alias", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n  - name: z\n    aliases: [x]\n    about: y\n"}, `a.yaml:4: program "x" is already defined at a.yaml:2`},
		{"duplicate subcommand", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n    subcommands:\n      - {name: s, about: a}\n      - {name: t, aliases: [s], about: b}\n"}, `a.yaml:6: x: duplicate subcommand "s"`},
		{"duplicate option", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n    options:\n      - {names: [-a]}\n      - {names: [--all, -a]}\n"}, `a.yaml:6: x: duplicate option "-a"`},
		{"read_only with write", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n    read_only: true\n    effects: [read, write]\n"}, `a.yaml:2: x: read_only with effect "write"`},
		{"read_only running a script", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n    read_only: true\n    args: [script, path...]\n"}, "read_only but argument 1 is script"},
		{"bad value", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n    options:\n      - {names: [-a], value: maybe}\n"}, "a.yaml:5: x: option -a: value must be"},
		{"option without dash", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n    options:\n      - {names: [a]}\n"}, `option name "a" must start`},
		{"value with prefix and contains", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n    options:\n      - names: [-f]\n        value: required\n        values: [{prefix: a, contains: b}]\n"}, "a.yaml:5: x: option -f: a value needs one of prefix and contains"},
		{"no about", map[string]string{"a.yaml": "programs:\n  - name: x\n"}, "a.yaml:2: x: program has no about"},
		{"empty file", map[string]string{"a.yaml": "programs: []\n"}, "a.yaml:1: no programs"},
		{"wrong type", map[string]string{"a.yaml": "programs:\n  - name: x\n    about: y\n    read_only: sometimes\n"}, "a.yaml:4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string][]byte{}
			for k, v := range tt.files {
				files[k] = []byte(v)
			}
			c, err := Load(files)
			if err == nil {
				t.Fatalf("loaded %d programs, want an error with %q", len(c.Programs()), tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q lacks %q", err, tt.want)
			}
		})
	}
}

func TestLoadFS(t *testing.T) {
	fsys := fstest.MapFS{"a.yaml": {Data: []byte("programs:\n  - name: x\n    aliases: [y]\n    about: z\n    read_only: true\n    args: [path...]\n")}, "skip.txt": {Data: []byte("not yaml")}}
	c, err := LoadFS(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if c.Program("y") == nil || c.Program("x") != c.Program("y") || len(c.Programs()) != 1 {
		t.Fatalf("programs %v", c.Programs())
	}
	if r := c.Lookup([]string{"y", "-q", "file"}); !r.ReadOnly || r.Program != "x" {
		t.Fatalf("lookup %+v", r)
	}
}
