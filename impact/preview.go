package impact

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	parsed "github.com/approve-tui/approve-tui/shell"
)

// Key is the payload key the preview is kept under.
const Key = model.ImpactKey

// Preview is what a command would touch (model.Impact), and Target one
// path of it.
type (
	Preview = model.Impact
	Target  = model.ImpactTarget
)

// Options bound and place a preview.
type Options struct {
	// Cwd is where the command runs (globs and relative paths), as the
	// shell has it ($PWD: the logical path, symlinks kept).
	Cwd string
	// Env is the environment the command runs in (KEY=VALUE; nil: none):
	// the shell's HOME, CDPATH and the options it reads from it change
	// where cd goes and what ~ and globs are. Home, when set, is HOME.
	Env  []string
	Home string
	// Shell is the shell that runs the command ("": bash); a POSIX sh
	// has no pushd and may differ from bash where the preview says unknown.
	Shell string
	// PWDUnsure: the shell's $PWD may be Cwd's physical path rather than
	// Cwd (a shell not started here, as an agent's): where a cd .. from
	// the one and the other differ (Cwd through a symlink), it is unknown.
	// Unset, the shell's $PWD is Cwd, as for a process started in Cwd
	// with PWD set to it.
	PWDUnsure bool
	// MaxEntries and MaxTime bound every walk together (DefaultMaxEntries,
	// DefaultMaxTime when zero).
	MaxEntries int
	MaxTime    time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// The default bounds: enough to count a big release directory, short
// enough to keep a submit quick.
const (
	DefaultMaxEntries = 200_000
	DefaultMaxTime    = 2 * time.Second
)

// Compute previews command (read-only). A command that does not parse is
// previewed as wholly unknown. One deadline (MaxTime, or ctx's when
// sooner) bounds all of it: the glob expansion, every target, every walk
// and every program an analyser runs; what it could not see makes the
// preview incomplete (Complete false, Incomplete says why), never
// smaller. A preview that fails is incomplete, and says so.
func Compute(ctx context.Context, command string, o Options) (p *Preview) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.MaxTime <= 0 {
		o.MaxTime = DefaultMaxTime
	}
	start := o.Now()
	p = &Preview{Complete: true, Unknown: []string{}, Targets: []Target{}, At: float64(start.UnixNano()) / 1e9}
	b := newBudget(ctx, o.MaxEntries, o.MaxTime)
	ctx, cancel := context.WithDeadline(ctx, b.deadline)
	defer cancel()
	defer func() {
		if v := recover(); v != nil {
			p.Complete = false
			p.Incomplete = append(p.Incomplete, fmt.Sprintf("the preview failed (%v)", v))
			p.Summary = summary(p, start)
		}
	}()
	cwd := o.Cwd
	if !filepath.IsAbs(cwd) {
		cwd = "" // not known: relative paths and globs are not previewed
	} else {
		cwd = filepath.Clean(cwd)
	}
	env := envOf(o.Env)
	if o.Home != "" {
		env["HOME"] = known(o.Home, true)
	}
	// One parse of the line (shell.Parse, the reading every analysis of
	// the command shares): its tree is followed here, and the scripts its
	// shells run (sh -c) are the trees Parse read for them.
	script, err := parsed.Parse(command, parsed.Options{})
	if err != nil {
		p.Unknown = append(p.Unknown, "the command does not parse as a shell command ("+parseError(err).Error()+")")
		p.Summary = summary(p, start)
		return p
	}
	cmds := simples(script.Statements(script.File), newShell(cwd, env, o.Shell == "" || filepath.Base(o.Shell) == "bash", o.PWDUnsure), b)
	a := &analysis{ctx: ctx, o: o, b: b, scripts: []*parsed.Script{script}}
	for _, c := range cmds {
		a.simple(c)
	}
	p.Targets, p.Unknown = folded(a.targets), append(p.Unknown, a.unknown...)
	if b.unfollowed > 0 {
		p.Unknown = append(p.Unknown, "what "+human.Count(int64(b.unfollowed), "statement", "statements")+" of the line would do: the time bound ran out before they were followed")
	}
	for _, t := range p.Targets {
		p.Entries += t.Entries
		p.Bytes += t.Bytes
		p.Complete = p.Complete && t.Complete
	}
	if ctx.Err() != nil {
		b.timeUp = true // a program an analyser ran was stopped by the deadline
	}
	if b.cut() {
		p.Complete = false
	}
	p.Incomplete = b.reasons()
	if !p.Complete && len(p.Incomplete) == 0 {
		p.Incomplete = []string{"a walk was cut short"}
	}
	p.Summary = summary(p, start)
	return p
}

// MaxTargets is how many targets a preview names one by one; the rest
// (rm -f dir/* over 12,000 files) are counted together, one target per
// op, so that the payload stays small.
const MaxTargets = 100

// folded is ts with the targets past MaxTargets counted together: per op,
// one target at the directory they share, its note saying how many.
func folded(ts []Target) []Target {
	if len(ts) <= MaxTargets {
		return ts
	}
	out := append([]Target(nil), ts[:MaxTargets]...)
	byOp := map[string]int{}
	counts := map[string]int64{}
	for _, t := range ts[MaxTargets:] {
		i, ok := byOp[t.Op]
		if !ok {
			i = len(out)
			byOp[t.Op] = i
			out = append(out, Target{Op: t.Op, Path: t.Path, LiveLinks: []string{}, Complete: true})
		}
		f := &out[i]
		counts[t.Op]++
		for !within(t.Path, f.Path) {
			f.Path = filepath.Dir(f.Path)
		}
		f.Exists = f.Exists || t.Exists
		f.Entries += t.Entries
		f.Files += t.Files
		f.Dirs += t.Dirs
		f.Links += t.Links
		f.Bytes += t.Bytes
		f.NewestMtime = max(f.NewestMtime, t.NewestMtime)
		f.Complete = f.Complete && t.Complete
		f.Outside = f.Outside || t.Outside
		f.Mounts = capped(f.Mounts, t.Mounts)
		f.LiveLinks = capped(f.LiveLinks, t.LiveLinks)
	}
	for op, i := range byOp {
		out[i].Note = human.Count(counts[op], "more path", "more paths") + " under it, counted together"
	}
	return out
}

// capped is to with from's items added, at most model.MaxImpactDetails.
func capped(to, from []string) []string {
	for _, x := range from {
		if len(to) >= model.MaxImpactDetails {
			break
		}
		if !slices.Contains(to, x) {
			to = append(to, x)
		}
	}
	return to
}

// summary is the one line, at the time the preview was made.
func summary(p *Preview, now time.Time) string {
	var parts []string
	byOp := map[string]*Target{}
	var ops []string
	var live []string
	var newest float64
	var others []string // devices, branches, plans: one phrase each
	for _, t := range p.Targets {
		if !t.Touches() {
			continue
		}
		if phrase := otherPhrase(t); phrase != "" {
			others = append(others, phrase)
			continue
		}
		s, ok := byOp[t.Op]
		if !ok {
			s = &Target{Op: t.Op}
			byOp[t.Op] = s
			ops = append(ops, t.Op)
		}
		s.Files += t.Files
		s.Dirs += t.Dirs
		s.Links += t.Links
		s.Bytes += t.Bytes
		if t.NewestMtime > newest {
			newest = t.NewestMtime
		}
		live = append(live, t.LiveLinks...)
	}
	atLeast := ""
	if !p.Complete {
		atLeast = "at least "
	}
	for _, op := range ops {
		s := byOp[op]
		var what []string
		if s.Dirs > 0 {
			what = append(what, human.Count(s.Dirs, "directory", "directories"))
		}
		if s.Files > 0 {
			what = append(what, human.Count(s.Files, "file", "files"))
		}
		if s.Links > 0 {
			what = append(what, human.Count(s.Links, "symlink", "symlinks"))
		}
		line := verbs[op] + " " + atLeast + strings.Join(what, ", ")
		if s.Bytes > 0 || s.Files > 0 {
			line += ", " + human.Bytes(s.Bytes)
		}
		parts = append(parts, line)
	}
	if newest > 0 {
		parts[len(parts)-1] += ", newest change " + human.Coarse(now.Sub(time.Unix(0, int64(newest*1e9)))) + " before"
	}
	parts = append(parts, others...)
	if len(parts) == 0 {
		switch {
		case !p.Complete:
			parts = append(parts, "nothing counted")
		case len(p.Targets) > 0:
			parts = append(parts, "touches nothing that exists now")
		case len(p.Unknown) == 0:
			parts = append(parts, "nothing this preview knows to destroy")
		}
	}
	out := strings.Join(parts, "; ")
	if len(live) > 0 {
		sort.Strings(live)
		l := live[0]
		if len(live) > 1 {
			l += fmt.Sprintf(" and %d more", len(live)-1)
		}
		out += "; " + l + " points into it"
	}
	if !p.Complete {
		if out != "" {
			out += "; "
		}
		out += "incomplete: " + strings.Join(p.Incomplete, ", ")
	}
	if len(p.Unknown) > 0 {
		if out != "" {
			out += "; "
		}
		out += "could not preview: " + strings.Join(p.Unknown, ", ")
	}
	return out
}

var verbs = map[string]string{
	"delete": "deletes", "truncate": "truncates", "overwrite": "overwrites", "shred": "shreds",
	"chmod": "changes the mode of", "chown": "changes the owner of", "discard": "discards uncommitted changes to",
	model.OpWipe: "wipes",
}

// otherPhrase is the summary's phrase for a target that is not counted in
// entries ("" for one that is): a block device, a branch, a plan.
func otherPhrase(t Target) string {
	switch {
	case t.Device != "":
		s := "wipes " + t.Path + " (" + t.Note
		if len(t.Mounts) > 0 {
			s += ", mounted on " + strings.Join(t.Mounts, ", ")
		}
		return s + ")"
	case t.Op == model.OpForcePush:
		return "drops " + commits(t.Commits) + " from " + t.Path + " (as local refs have it)"
	case t.Op == model.OpDeleteBranch:
		if t.Commits == 0 {
			return "deletes branch " + t.Path + " (its commits are on other refs)"
		}
		return "deletes branch " + t.Path + " and " + commits(t.Commits) + " on no other ref"
	case t.Op == model.OpMoveBranch:
		if t.Commits == 0 {
			return "moves " + t.Path + " (its commits stay on other refs)"
		}
		s := "moves " + t.Path + " and leaves " + commits(t.Commits) + " on no ref"
		if len(t.Details) > 0 {
			s += " (" + t.Details[0] + ")"
		}
		return s
	case t.Op == model.OpApply:
		s := "applies " + filepath.Base(t.Path) + ": " + planCounts(t)
		if t.Destroys > 0 && len(t.Details) > 0 {
			s += " (" + t.Details[0] + ")"
		}
		return s
	}
	return ""
}

func commits(n int64) string {
	if n == 0 {
		return "no commits"
	}
	return human.Count(n, "commit", "commits")
}

// planCounts is terraform's own count: "1 to add, 0 to change, 2 to destroy".
func planCounts(t Target) string {
	return fmt.Sprintf("%s to add, %s to change, %s to destroy", human.Group(t.Creates), human.Group(t.Updates), human.Group(t.Destroys))
}

// Description is one target in words, for the console and show: What
// follows "OP PATH: ", Live names what it reaches that is live, Details
// are the items it names (commits, partitions, resources). Paths in them
// are the host's: the caller sanitises each line.
type Description struct {
	What    string
	Live    []string
	Details []string
}

// Describe puts t in words (see Description); long adds the newest
// change and the note, for show.
func Describe(t Target, long bool) Description {
	var d Description
	switch {
	case !t.Exists:
		d.What = "does not exist"
		if t.Note != "" {
			d.What += " (" + t.Note + ")"
		}
		return d
	case t.Device != "":
		d.What = t.Note
	case t.Op == model.OpForcePush && t.Commits == 0:
		d.What = "no commits dropped (a fast-forward of what local refs have)"
	case t.Op == model.OpForcePush:
		d.What = commits(t.Commits) + " dropped that no other branch there holds"
	case t.Op == model.OpDeleteBranch && t.Commits == 0:
		d.What = "no commits lost: other refs hold them all"
	case t.Op == model.OpDeleteBranch:
		d.What = commits(t.Commits) + " on no other ref"
	case t.Op == model.OpMoveBranch && t.Commits == 0:
		d.What = "no commits left behind: other refs hold them all"
	case t.Op == model.OpMoveBranch:
		d.What = commits(t.Commits) + " left on no ref"
	case t.Op == model.OpApply:
		d.What = planCounts(t)
	default:
		d.What = human.Count(t.Entries, "entry", "entries") + ", " + human.Bytes(t.Bytes)
		if !t.Complete {
			d.What = "at least " + d.What
		}
		if long && t.NewestMtime > 0 {
			d.What += ", newest change " + model.FromEpoch(t.NewestMtime).UTC().Format("2006-01-02 15:04:05Z")
		}
	}
	if t.Outside {
		d.What += ", outside the working directory"
	}
	if long && t.Note != "" && t.Device == "" {
		d.What += " (" + t.Note + ")"
	}
	for _, l := range t.LiveLinks {
		d.Live = append(d.Live, l+" points into it")
	}
	for _, m := range t.Mounts {
		if t.Device != "" {
			d.Live = append(d.Live, "mounted on "+m)
		} else {
			d.Live = append(d.Live, m+" is a mount point in it")
		}
	}
	d.Details = t.Details
	return d
}
