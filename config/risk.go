package config

import (
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
)

// The keys of the risk: section: RiskSettings' tags, and unasked (a
// Setting: the flag run and the hooks take).
var riskKeys = append(yamlKeys[RiskSettings](), "unasked")

// The values of run's and every hook's --unasked: what goes without a
// proposal.
const (
	// UnaskedNothing: every command is a proposal.
	UnaskedNothing = "nothing"
	// UnaskedReadOnly: only what the judgement proves read-only goes
	// without asking.
	UnaskedReadOnly = "read-only"
	// UnaskedLow: everything judged low goes without asking.
	UnaskedLow = "low"
	// DefaultUnasked is --unasked when neither the flag nor the file says.
	DefaultUnasked = UnaskedLow
)

// UnaskedModes are --unasked's values, strictest first.
var UnaskedModes = []string{UnaskedNothing, UnaskedReadOnly, UnaskedLow}

// RiskSettings is the file's risk: section:
//
//	risk:
//	  sensitive_paths: [/srv/prod/, ~/.kube/config]
//	  sensitive_programs: {psql: medium, kubectl: high}
//	  unasked: read-only
type RiskSettings struct {
	// SensitivePaths: absolute paths, or paths starting with ~/ (the home
	// of the user the command runs as); one ending in / is a directory and
	// everything below it.
	SensitivePaths []string `yaml:"sensitive_paths" config:"paths"`
	// SensitivePrograms: program names with the least level any use of
	// them gets (medium or high).
	SensitivePrograms map[string]model.RiskLevel `yaml:"sensitive_programs"`
}

// risk decodes risk:.
func (l *loader) risk(f *File, e entry) bool {
	_, ok, good := l.object(e.val, part{what: "risk", prefix: "risk: ", inFile: true, want: "a mapping (" + strings.Join(riskKeys, ", ") + ")", allowed: riskKeys, read: map[string]func(entry) bool{
		"sensitive_programs": func(pe entry) bool {
			ps, good := decodeNamed[model.RiskLevel](l, pe, "risk: sensitive_programs", "a mapping of program names to their least level, such as {psql: medium, kubectl: high}", kindLevel,
				func(name string) string {
					if name == "" || strings.ContainsAny(name, "/ \t\n") {
						return "is not a program name; want a name as it is run, such as psql"
					}
					return ""
				})
			if good {
				f.Risk.SensitivePrograms = ps
			}
			return good
		},
		"unasked": func(ue entry) bool { return l.unasked(f, ue) },
	}}, &f.Risk)
	return ok && good
}

// unasked decodes risk: unasked, a Setting (the flag run and the hooks
// take).
func (l *loader) unasked(f *File, e entry) bool {
	what := "risk: " + e.name
	s, ok := l.str(e, what)
	if !ok {
		return false
	}
	if !slices.Contains(UnaskedModes, s) {
		l.add(e.at(), "%s: %q is not one of %s; want what run and the hooks let through without asking", what, s, strings.Join(UnaskedModes, ", "))
		return false
	}
	line, col := pos(e.key)
	f.settings = append(f.settings, Setting{Section: "risk", Key: "unasked", Flag: "unasked", Value: s, Line: line, Column: col})
	return true
}

// RiskContext is the judgement's context for a command run in cwd, on a
// surface whose approval store is db (a path, sqlite:PATH or a PostgreSQL
// URL; "" when none): the file's sensitive paths and programs, the file
// itself and the store's files (an agent that writes them decides its own
// approvals), and the home directory of this process's user from the
// system's user database (never $HOME, which the agent sets). Every
// surface that judges (run, the hooks, the store, show, classify, the
// console) builds its context here, so that they judge alike.
func (f *File) RiskContext(cwd, db string) risk.Context {
	c := risk.Context{Cwd: cwd, Home: accountHome()}
	if f != nil {
		c.Paths = append(c.Paths, f.Risk.SensitivePaths...)
		if f.Path != "" {
			if abs, err := filepath.Abs(f.Path); err == nil {
				c.Paths = append(c.Paths, abs)
			}
		}
		if len(f.Risk.SensitivePrograms) > 0 {
			c.Programs = make(map[string]model.RiskLevel, len(f.Risk.SensitivePrograms))
			for k, v := range f.Risk.SensitivePrograms {
				c.Programs[k] = v
			}
		}
	}
	c.Paths = append(c.Paths, storeFiles(db)...)
	return c
}

// accountHome is this process's user's home directory as the user
// database says ("" when it cannot say).
func accountHome() string {
	u, err := user.Current()
	if err != nil || !filepath.IsAbs(u.HomeDir) {
		return ""
	}
	return filepath.Clean(u.HomeDir)
}

// storeFiles are the absolute paths of the files of the SQLite store db
// (the database, its -wal, -shm and -journal), none for a PostgreSQL URL.
func storeFiles(db string) []string {
	if db == "" || strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://") {
		return nil
	}
	db = strings.TrimPrefix(strings.TrimPrefix(db, "sqlite://"), "sqlite:")
	abs, err := filepath.Abs(db)
	if err != nil {
		return nil
	}
	abs = filepath.Clean(abs)
	return []string{abs, abs + "-wal", abs + "-shm", abs + "-journal"}
}
