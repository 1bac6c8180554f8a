package shell

import "strings"

// inline are the interpreters' options that take code to run, by
// interpreter family.
var inline = map[string][]string{
	"python":    {"-c"},
	"perl":      {"-e", "-E"},
	"ruby":      {"-e"},
	"node":      {"-e", "--eval", "-p", "--print"},
	"php":       {"-r"},
	"lua":       {"-e"},
	"Rscript":   {"-e"},
	"osascript": {"-e"},
	"deno":      {"eval"},
	"bun":       {"-e", "--eval"},
	"tclsh":     {},
	"pwsh":      {"-c", "-Command", "-EncodedCommand", "-e", "-ec"},
}

func family(name string) string {
	switch {
	case strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pypy"):
		return "python"
	case strings.HasPrefix(name, "perl"):
		return "perl"
	case strings.HasPrefix(name, "ruby"):
		return "ruby"
	case name == "node" || name == "nodejs":
		return "node"
	case strings.HasPrefix(name, "php"):
		return "php"
	case strings.HasPrefix(name, "lua"):
		return "lua"
	case name == "powershell":
		return "pwsh"
	}
	return name
}

func isInterpreter(name string) bool {
	_, ok := inline[family(name)]
	return ok
}

// interpreter says what code an interpreter runs: given inline, from a
// file, or from its input (nil: none, as for --version).
func interpreter(name string, ws []Word) *Opaque {
	fam := family(name)
	for i, w := range ws {
		if !w.Known {
			return &Opaque{Kind: "unknown", Code: w.Raw, Why: name + "'s words are not certain"}
		}
		a := w.Value
		switch a {
		case "--version", "-V", "--help", "-h", "-v":
			if i == 0 {
				return nil
			}
		}
		for _, o := range inline[fam] {
			if a == o || strings.HasPrefix(a, o) && len(o) == 2 && o[0] == '-' && len(a) > 2 && fam != "pwsh" {
				code := strings.TrimPrefix(a, o)
				if code == "" && i+1 < len(ws) {
					code = ws[i+1].Raw
				}
				return &Opaque{Kind: "inline", Code: code, Why: name + " " + o + " runs code given on the line"}
			}
		}
		if fam == "python" && (a == "-m" || strings.HasPrefix(a, "-m")) {
			mod := strings.TrimPrefix(a, "-m")
			if mod == "" && i+1 < len(ws) {
				mod = ws[i+1].Raw
			}
			return &Opaque{Kind: "script", Code: mod, Why: name + " -m runs a module not on the line"}
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			if a == "-" {
				break
			}
			return &Opaque{Kind: "script", Code: a, Why: name + " runs a script file not on the line"}
		}
	}
	return &Opaque{Kind: "input", Why: name + " runs code from its input"}
}
