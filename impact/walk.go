package impact

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/approve-tui/approve-tui/human"
)

// budget bounds one preview: entries and time, shared by the glob
// expansion, every target and every walk. It keeps what the preview could
// not see (the time ran out, the entry bound was reached, a directory or
// an entry could not be read): the totals are then "at least", and
// reasons says why.
type budget struct {
	entries  int
	deadline time.Time
	done     <-chan struct{} // the preview's context: it ends the walks too
	// max and limit are the bounds as set, for the reasons.
	max   int
	limit time.Duration
	calls int
	// globRead counts the entries globs read (maxGlobEntries).
	globRead int

	timeUp, capped bool
	// unread are the directories that could not be read, unstat the
	// entries that could not be looked at (first few named, all counted).
	unread, unstat named
	// unseen counts the paths named that were not looked at: the time ran
	// out first.
	unseen int64
	// unfollowed counts the statements of the line the shell was not
	// followed through: the time ran out first.
	unfollowed int
	// links caches, per directory, its symlinks (liveLinks reads each
	// directory once per preview).
	links map[string][]dirLink
}

// named counts paths and keeps the first few to name them.
type named struct {
	n     int64
	first []string
}

// maxNamed is how many paths a reason names.
const maxNamed = 3

// add counts p; the first few in name order are kept (directories are
// read in no particular order).
func (s *named) add(p string) {
	s.n++
	i, _ := slices.BinarySearch(s.first, p)
	if i < maxNamed {
		s.first = slices.Insert(s.first, i, p)
		if len(s.first) > maxNamed {
			s.first = s.first[:maxNamed]
		}
	}
}

// list is "a, b, c and 4 more".
func (s named) list() string {
	out := strings.Join(s.first, ", ")
	if more := s.n - int64(len(s.first)); more > 0 {
		out += " and " + human.Group(more) + " more"
	}
	return out
}

func newBudget(ctx context.Context, entries int, limit time.Duration) *budget {
	deadline := time.Now().Add(limit)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return &budget{entries: entries, max: entries, deadline: deadline, limit: limit, done: ctx.Done()}
}

// fork is a copy of b for work done on another goroutine (that may be
// abandoned at the deadline): nothing of it is shared with b. What the
// fork saw is b's again by *b = *fork once that work is done.
func (b *budget) fork() *budget {
	f := *b
	f.unread.first = slices.Clone(b.unread.first)
	f.unstat.first = slices.Clone(b.unstat.first)
	f.links = maps.Clone(b.links)
	return &f
}

// out reports whether the time is up: the deadline passed, or the
// preview's context ended.
func (b *budget) out() bool {
	if b.timeUp {
		return true
	}
	if b.calls++; time.Now().After(b.deadline) {
		b.timeUp = true
	} else if b.calls%64 == 0 {
		select {
		case <-b.done:
			b.timeUp = true
		default:
		}
	}
	return b.timeUp
}

// take counts one entry read: false when a bound says stop.
func (b *budget) take() bool {
	if b.out() {
		return false
	}
	if b.entries <= 0 {
		b.capped = true
		return false
	}
	b.entries--
	return true
}

// cut reports whether the preview missed anything.
func (b *budget) cut() bool {
	return b.timeUp || b.capped || b.unread.n > 0 || b.unstat.n > 0 || b.unseen > 0
}

// reasons say what the preview could not see (empty: it saw all it names).
func (b *budget) reasons() []string {
	var out []string
	if b.timeUp {
		out = append(out, "the "+b.limit.String()+" time bound ran out")
	}
	if b.capped {
		out = append(out, "the "+human.Group(int64(b.max))+"-entry bound was reached")
	}
	if b.unseen > 0 {
		out = append(out, human.Count(b.unseen, "path", "paths")+" it names not looked at")
	}
	if b.unread.n > 0 {
		out = append(out, "could not read "+human.Count(b.unread.n, "directory", "directories")+" ("+b.unread.list()+")")
	}
	if b.unstat.n > 0 {
		out = append(out, "could not look at "+human.Count(b.unstat.n, "path", "paths")+" ("+b.unstat.list()+")")
	}
	return out
}

// errUnseen is lstat's answer for a path not looked at.
var errUnseen = errors.New("not looked at")

// lstat is os.Lstat within the budget: errUnseen when a bound was
// reached or the path could not be looked at (both counted for the
// reasons); a path that is not there is fs.ErrNotExist.
func (b *budget) lstat(p string) (fs.FileInfo, error) { return b.look(p, os.Lstat) }

// stat is os.Stat (symlinks followed) within the budget, as lstat.
func (b *budget) stat(p string) (fs.FileInfo, error) { return b.look(p, os.Stat) }

// look is how lstat and stat look at p within the budget.
func (b *budget) look(p string, how func(string) (fs.FileInfo, error)) (fs.FileInfo, error) {
	if b.out() || b.capped {
		b.unseen++
		return nil, errUnseen
	}
	fi, err := how(p)
	if err != nil && !absent(err) {
		b.unstat.add(p)
		return nil, errUnseen
	}
	return fi, err
}

// absent reports whether err says a path is not there (and not that it
// could not be looked at).
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// readDir is the glob's directory read, within the budget: read in
// chunks, the time checked between them; the last directory read is kept
// (the expander reads a directory twice for "dir/*"). A read past the time
// bound, or of a directory that is there and cannot be read, sets why:
// the word is then not known (bash's glob would see what this one cannot).
func (b *budget) readDir(why *string) func(string) ([]fs.DirEntry, error) {
	var last string
	var lastEnts []fs.DirEntry
	return func(name string) ([]fs.DirEntry, error) {
		if name == last && lastEnts != nil {
			return lastEnts, nil
		}
		ents, err := b.readDirBounded(name)
		switch {
		case errors.Is(err, errUnseen):
			if *why == "" {
				*why = "the " + b.limit.String() + " time bound ran out expanding it"
			}
		case errors.Is(err, errGlobCap):
			if *why == "" {
				*why = "it reads more than " + human.Group(int64(maxGlobEntries)) + " entries"
			}
		case err != nil && !absent(err):
			if *why == "" {
				*why = "could not read " + name
			}
			b.unread.add(name)
		case err == nil:
			last, lastEnts = name, ents
		}
		return ents, err
	}
}

// maxGlobEntries bounds the entries the globs of one preview read: past
// it, matching and sorting what was read (in the expander, which cannot be
// stopped) would outlast the time bound. A glob cut by it is unknown.
var maxGlobEntries = 50_000

// errGlobCap is a glob's read past maxGlobEntries.
var errGlobCap = errors.New("too many entries for a glob")

func (b *budget) readDirBounded(name string) ([]fs.DirEntry, error) {
	return b.readDirChunked(name, &b.globRead)
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

// walk counts root (fi: its Lstat) and, when recursive, everything under
// it, without following symlinks; match (nil: all) chooses what counts,
// and minDepth and maxDepth (< 0: none) bound the depths that count (root
// is 0). What it could not read (a directory, an entry) leaves it
// incomplete, counted in b.
func walk(root string, fi fs.FileInfo, recursive bool, b *budget, match func(path string, d fs.DirEntry) bool, minDepth, maxDepth int) walkStats {
	st := walkStats{complete: true}
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
	if !recursive || !fi.IsDir() || maxDepth == 0 {
		return st
	}
	b.walkDir(root, 0, &st, counts, maxDepth)
	return st
}

// walkDir counts what is under dir (at depth), depth first, reading each
// directory in chunks within the budget (a directory of 200,000 entries
// does not outlast the time bound); false when a bound says stop.
func (b *budget) walkDir(dir string, depth int, st *walkStats, counts func(string, fs.DirEntry, int) bool, maxDepth int) bool {
	ents, err := b.readDirChunked(dir, nil)
	switch {
	case errors.Is(err, errUnseen):
		st.complete = false
		return false
	case err != nil && !absent(err):
		// Its entry is counted; what is under it is not known.
		st.complete = false
		b.unread.add(dir)
	}
	for _, d := range ents {
		if !b.take() {
			st.complete = false
			return false
		}
		path := filepath.Join(dir, d.Name())
		if counts(path, d, depth+1) {
			info, err := d.Info()
			switch {
			case err == nil:
				st.add(info)
			case !absent(err):
				st.complete = false
				b.unstat.add(path)
			}
		}
		if d.IsDir() && (maxDepth < 0 || depth+1 < maxDepth) {
			if !b.walkDir(path, depth+1, st, counts, maxDepth) {
				return false
			}
		}
	}
	return true
}

// readDirChunked reads dir's entries in chunks, the time checked between
// them (errUnseen once it is up); unsorted: counts need no order. A glob's
// read counts its entries in globRead (nil: not a glob's), and stops past
// maxGlobEntries (errGlobCap).
func (b *budget) readDirChunked(dir string, globRead *int) ([]fs.DirEntry, error) {
	if b.out() {
		return nil, errUnseen
	}
	if globRead != nil && *globRead > maxGlobEntries {
		return nil, errGlobCap
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []fs.DirEntry
	for {
		ents, err := f.ReadDir(dirChunk)
		out = append(out, ents...)
		if globRead != nil {
			if *globRead += len(ents); *globRead > maxGlobEntries {
				return nil, errGlobCap
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return out, nil
		case err != nil:
			return out, err
		case b.out():
			return nil, errUnseen
		}
	}
}

// dirChunk is how many entries a read takes between looks at the clock.
const dirChunk = 4096

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
			for _, l := range b.dirLinks(dir) {
				if !within(l.path, root) && within(l.to, root) {
					out = append(out, l.path)
				}
			}
		}
		if dir == "/" {
			break
		}
		dir = filepath.Dir(dir)
	}
	return out
}

// dirLink is a symlink and where it points (absolute, clean).
type dirLink struct{ path, to string }

// dirLinks are the symlinks among the first maxLinkScan entries of dir,
// read once per preview.
func (b *budget) dirLinks(dir string) []dirLink {
	if l, ok := b.links[dir]; ok {
		return l
	}
	if b.links == nil {
		b.links = map[string][]dirLink{}
	}
	var out []dirLink
	defer func() { b.links[dir] = out }()
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	ents, _ := f.ReadDir(maxLinkScan)
	for _, e := range ents {
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if !b.take() {
			break
		}
		link := filepath.Join(dir, e.Name())
		to, err := os.Readlink(link)
		if err != nil {
			continue
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(dir, to)
		}
		out = append(out, dirLink{link, filepath.Clean(to)})
	}
	return out
}
