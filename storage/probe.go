package storage

import (
	"path/filepath"
	"strings"
)

// WriteProblem says why this user could not write the SQLite store at path
// (a path, or sqlite:PATH), or "" when it could: the file, and its
// directory for the journal. Like Open, it asks the kernel (access(2)) and
// never opens the file, so that no SQLite lock of this process is dropped;
// it creates and changes nothing. A PostgreSQL URL is not checked ("").
func WriteProblem(path string) string {
	if IsPostgresURL(path) {
		return ""
	}
	path = strings.TrimPrefix(strings.TrimPrefix(path, "sqlite://"), "sqlite:")
	abs, err := filepath.Abs(path)
	if err != nil {
		return err.Error()
	}
	return writeProblem(abs)
}
