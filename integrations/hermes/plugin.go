// Package hermes carries approve-tui's Hermes plugin (approve-tui/: the
// files Hermes loads from $HERMES_HOME/plugins/approve-tui/), embedded in
// the binary, so that `approve-tui hermes install` writes the copy that
// matches the binary's own hook, and `approve-tui hermes doctor` can tell
// whether an installed copy is that one.
package hermes

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// The files are named one by one: a directory pattern would leave out
// __init__.py (embed skips names that start with _ or .).
//
//go:embed approve-tui/plugin.yaml approve-tui/__init__.py approve-tui/README.md
var pluginFS embed.FS

// PluginName is the plugin's name: its directory under
// $HERMES_HOME/plugins/ and its entry in plugins.enabled.
const PluginName = "approve-tui"

// TransportName is the approval transport the plugin registers, the value
// of security.approval.transport that selects it.
const TransportName = "approve-tui"

// files are the plugin's files, in the order they are written.
var files = []string{"plugin.yaml", "__init__.py", "README.md"}

// Files returns the names of the plugin's files.
func Files() []string { return append([]string(nil), files...) }

// File returns the embedded bytes of the plugin file name (one of Files).
func File(name string) ([]byte, error) {
	return pluginFS.ReadFile(path.Join(PluginName, name))
}

// FileState is what Install did with one file.
type FileState string

const (
	FileCreated   FileState = "created"   // it was missing
	FileUpdated   FileState = "updated"   // it differed and was replaced
	FileUnchanged FileState = "unchanged" // it had the embedded bytes already
)

// InstallResult is what Install did, file by file, in Files' order.
type InstallResult struct {
	Dir   string
	Files []FileResult
}

// FileResult is one file's fate.
type FileResult struct {
	Name  string
	State FileState
}

// Written names the files Install wrote (created or updated).
func (r InstallResult) Written() []string {
	var w []string
	for _, f := range r.Files {
		if f.State != FileUnchanged {
			w = append(w, f.Name)
		}
	}
	return w
}

// Summary is "installed" when every file was missing, "current" when none
// had to be written, else "updated".
func (r InstallResult) Summary() string {
	created, unchanged := 0, 0
	for _, f := range r.Files {
		switch f.State {
		case FileCreated:
			created++
		case FileUnchanged:
			unchanged++
		}
	}
	switch {
	case unchanged == len(r.Files):
		return "current"
	case created == len(r.Files):
		return "installed"
	}
	return "updated"
}

// Install writes the plugin's files into dir (made with mode 0755 when
// missing), each one that is missing or differs from the embedded copy
// atomically: a temporary file in dir, mode 0644, synced, then renamed over
// the name, so that Hermes never loads a half-written file. Files already
// equal are left alone, and so is anything else in dir.
func Install(dir string) (InstallResult, error) {
	res := InstallResult{Dir: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	wrote := false
	for _, name := range files {
		want, err := File(name)
		if err != nil {
			return res, err
		}
		dst := filepath.Join(dir, name)
		state := FileCreated
		switch have, err := os.ReadFile(dst); {
		case err == nil && bytes.Equal(have, want):
			res.Files = append(res.Files, FileResult{name, FileUnchanged})
			continue
		case err == nil:
			state = FileUpdated
		case errors.Is(err, fs.ErrNotExist):
		default:
			return res, err
		}
		if err := writeAtomic(dst, want); err != nil {
			return res, err
		}
		wrote = true
		res.Files = append(res.Files, FileResult{name, state})
	}
	if wrote {
		syncDir(dir)
	}
	return res, nil
}

// writeAtomic replaces name with data: temporary file, 0644, fsync, rename.
func writeAtomic(name string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err == nil {
		if err = f.Chmod(0o644); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return os.Rename(tmp, name)
}

// syncDir makes the renames durable, where the system allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// Comparison is how an installed directory stands against the embedded
// files.
type Comparison struct {
	// DirMissing: the directory itself does not exist.
	DirMissing bool
	// Missing and Differ name the files absent from the directory and those
	// whose bytes are not the embedded ones, in Files' order.
	Missing, Differ []string
}

// Current reports whether every file is there with the embedded bytes.
func (c Comparison) Current() bool {
	return !c.DirMissing && len(c.Missing) == 0 && len(c.Differ) == 0
}

// Compare reads each plugin file in dir and compares it with the embedded
// copy. Files other than the plugin's (Hermes' __pycache__, say) are not
// looked at. A file that cannot be read (not a regular file, no
// permission) is an error.
func Compare(dir string) (Comparison, error) {
	var c Comparison
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		c.DirMissing = true
		c.Missing = Files()
		return c, nil
	case err != nil:
		return c, err
	case !fi.IsDir():
		return c, fmt.Errorf("%s is not a directory", dir)
	}
	for _, name := range files {
		want, err := File(name)
		if err != nil {
			return c, err
		}
		have, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			c.Missing = append(c.Missing, name)
		case err != nil:
			return c, err
		case !bytes.Equal(have, want):
			c.Differ = append(c.Differ, name)
		}
	}
	return c, nil
}
