package shell

import "strings"

// ShellArgs is what a shell's own words say (sh, bash, dash ... their
// options, before the script or operands), read by the one rule Parse
// reads `sh -c` by: the options an analysis that runs the script in its
// own shell state sets there (impact/), and where what it runs starts.
type ShellArgs struct {
	// Set are set's options the words give, as set takes them ("-P",
	// "+e", "-o", "physical"); --posix is "-o", "posix".
	Set []string
	// Shopt are shopt's, in pairs: "-s" NAME for -O NAME, "-u" NAME for
	// +O NAME.
	Shopt []string
	// Startup: it runs start-up files first (-i, -l, --login, --rcfile,
	// --init-file).
	Startup bool
	// Command: -c (the first operand is its script); Input: -s (it reads
	// its commands from its input).
	Command, Input bool
	// Info, RCFile and Unknown are the index of the first --version or
	// --help, of the first --rcfile or --init-file, and of the first word
	// not certain among the options (-1: none). The reading stops at
	// Info and Unknown; --rcfile's file is skipped.
	Info, RCFile, Unknown int
	// End is the index of the first operand (past "--" or "-"), at most
	// len(words).
	End int
}

// ReadShellArgs reads words, a shell's words after its name.
func ReadShellArgs(words []Word) ShellArgs {
	r := ShellArgs{Info: -1, RCFile: -1, Unknown: -1}
	i := 0
scan:
	for ; i < len(words); i++ {
		w := words[i]
		if !w.Known {
			r.Unknown = i
			break
		}
		a := w.Value
		if a == "--" || a == "-" {
			i++
			break
		}
		if strings.HasPrefix(a, "--") {
			switch a {
			case "--version", "--help":
				r.Info = i
				break scan
			case "--login":
				r.Startup = true
			case "--rcfile", "--init-file":
				r.Startup = true
				if r.RCFile < 0 {
					r.RCFile = i
				}
				i++
			case "--posix":
				r.Set = append(r.Set, "-o", "posix")
			}
			continue
		}
		if len(a) < 2 || a[0] != '-' && a[0] != '+' {
			break
		}
		for _, c := range a[1:] {
			switch c {
			case 'c':
				r.Command = r.Command || a[0] == '-'
			case 's':
				r.Input = true
			case 'i', 'l':
				r.Startup = true
			case 'o', 'O':
				i++
				if i >= len(words) {
					break
				}
				if c == 'o' {
					r.Set = append(r.Set, string(a[0])+"o", words[i].Value)
				} else if a[0] == '-' {
					r.Shopt = append(r.Shopt, "-s", words[i].Value)
				} else {
					r.Shopt = append(r.Shopt, "-u", words[i].Value)
				}
			default:
				r.Set = append(r.Set, string(a[0])+string(c))
			}
		}
	}
	r.End = min(i, len(words))
	return r
}
