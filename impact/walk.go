package impact

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// budget bounds the walks of one preview: entries and time, shared by
// every target. A walk cut by it says so (Complete false: "at least").
type budget struct {
	entries  int
	deadline time.Time
	cut      bool
}

func (b *budget) take() bool {
	if b.entries <= 0 || time.Now().After(b.deadline) {
		b.cut = true
		return false
	}
	b.entries--
	return true
}

// walkStats is what a walk of one target found.
type walkStats struct {
	entries, files, dirs, links int64
	bytes                       int64
	newest                      time.Time
	complete                    bool
}

// add counts one entry.
func (w *walkStats) add(fi fs.FileInfo) {
	w.entries++
	switch m := fi.Mode(); {
	case m.IsRegular():
		w.files++
		w.bytes += fi.Size()
	case m.IsDir():
		w.dirs++
	case m&fs.ModeSymlink != 0:
		w.links++
	default:
		w.files++ // devices, sockets, fifos: entries that would go
	}
	if t := fi.ModTime(); t.After(w.newest) {
		w.newest = t
	}
}

// walk counts root and, when recursive, everything under it, without
// following symlinks; match (nil: all) chooses what counts, and minDepth
// and maxDepth (< 0: none) bound the depths that count (root is 0).
func walk(root string, recursive bool, b *budget, match func(path string, d fs.DirEntry) bool, minDepth, maxDepth int) walkStats {
	st := walkStats{complete: true}
	fi, err := os.Lstat(root)
	if err != nil {
		return st
	}
	counts := func(path string, d fs.DirEntry, depth int) bool {
		return depth >= minDepth && (maxDepth < 0 || depth <= maxDepth) && (match == nil || match(path, d))
	}
	if !b.take() {
		st.complete = false
		return st
	}
	if counts(root, fs.FileInfoToDirEntry(fi), 0) {
		st.add(fi)
	}
	if !recursive || !fi.IsDir() {
		return st
	}
	rootDepth := strings.Count(filepath.Clean(root), string(filepath.Separator))
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if path == root {
			return nil
		}
		if err != nil {
			return nil // unreadable: what can be read is counted
		}
		if !b.take() {
			st.complete = false
			return filepath.SkipAll
		}
		depth := strings.Count(path, string(filepath.Separator)) - rootDepth
		if maxDepth >= 0 && depth > maxDepth {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if counts(path, d, depth) {
			if info, err := d.Info(); err == nil {
				st.add(info)
			}
		}
		return nil
	})
	return st
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountsIn are the mount points at or under root.
func mountsIn(root string, mounts []mount) []string {
	var out []string
	for _, m := range mounts {
		if within(m.point, root) {
			out = append(out, m.point)
		}
	}
	return out
}

// within reports whether p is root or under it (both clean, absolute).
func within(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// maxLinkScan bounds the entries read from one directory when looking for
// symlinks into a target.
const maxLinkScan = 2000

// liveLinks are the symlinks near root (in its directory and the one above,
// where a "current" link sits beside its releases) that point at root or
// into it, from outside it: what would dangle once it goes.
func liveLinks(root string, b *budget) []string {
	var out []string
	seen := map[string]bool{}
	dir := filepath.Dir(root)
	for i := 0; i < 2 && dir != root; i++ {
		if !seen[dir] {
			seen[dir] = true
			out = append(out, linksInto(dir, root, b)...)
		}
		if dir == "/" {
			break
		}
		dir = filepath.Dir(dir)
	}
	return out
}

func linksInto(dir, root string, b *budget) []string {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	ents, _ := f.ReadDir(maxLinkScan)
	var out []string
	for _, e := range ents {
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		link := filepath.Join(dir, e.Name())
		if within(link, root) {
			continue
		}
		to, err := os.Readlink(link)
		if err != nil {
			continue
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(dir, to)
		}
		if within(filepath.Clean(to), root) {
			out = append(out, link)
		}
		if !b.take() {
			break
		}
	}
	return out
}
