package model

import (
	"strconv"
	"strings"
)

// ImpactKey is approve-tui's own payload key for the impact preview: what
// the command would touch, computed where it runs, at submit (package
// impact). It is part of the payload whose hash an approval names, so an
// approval holds for the impact shown (SPEC §3.15). Hermes ignores keys it
// does not know.
const ImpactKey = "approve_tui_impact"

// Impact is a command's impact preview. Every string in it (paths, the
// parts not previewed) comes from the agent's host: foreign text.
type Impact struct {
	// Summary is one line in approve-tui's words, with paths from the
	// host: "deletes 3 directories, 12,408 files, 2.3 GiB, …".
	Summary string
	// Entries and Bytes are the totals over the targets.
	Entries, Bytes int64
	// Complete is false when the preview did not see all it names (a bound
	// cut a walk, a directory could not be read): the totals are at least.
	Complete bool
	// Incomplete says why Complete is false, one phrase each ("could not
	// read 2 directories (…)", "the 1s time bound ran out").
	Incomplete []string
	// Unknown are the parts of the command not previewed, as written.
	Unknown []string
	Targets []ImpactTarget
	// At is when it was computed (Unix seconds).
	At float64
}

// ImpactTarget is one thing the command would destroy or change: a path,
// a block device, a git branch (Path "origin/main" for a remote's) or a
// terraform plan.
type ImpactTarget struct {
	Path string
	// Op: delete, truncate, overwrite, shred, chmod, chown, discard (git's
	// uncommitted changes), wipe (a block device or an image), force-push,
	// delete-branch, move-branch, apply (terraform).
	Op                          string
	Exists                      bool
	Entries, Files, Dirs, Links int64
	Bytes                       int64
	// NewestMtime: Unix seconds (0: nothing exists).
	NewestMtime float64
	Mounts      []string
	Outside     bool
	LiveLinks   []string
	Complete    bool
	Note        string
	// Device is a block device's kernel name (loop0, sdb1); its Mounts are
	// where it (or a partition of it) is mounted.
	Device string
	// Commits are the commits a force-push, a branch deletion or a branch
	// moved drops.
	Commits int64
	// Creates, Updates and Destroys count a terraform plan's changes as
	// terraform does (a replacement is one create and one destroy).
	Creates, Updates, Destroys int64
	// Details are the items named one by one, at most MaxImpactDetails:
	// commits, partitions, resources.
	Details []string
}

// MaxImpactDetails bounds a target's Details.
const MaxImpactDetails = 20

// Impact ops that count something other than entries.
const (
	OpWipe         = "wipe"
	OpForcePush    = "force-push"
	OpDeleteBranch = "delete-branch"
	// OpMoveBranch: a branch (Path; "HEAD" when detached) moved by git
	// reset, rebase, checkout -B or branch -f; its Commits are those left
	// on no ref.
	OpMoveBranch = "move-branch"
	OpApply      = "apply"
)

// Touches reports whether t names something that exists and would go or
// change: entries, a device, a branch, a plan.
func (t ImpactTarget) Touches() bool {
	if !t.Exists {
		return false
	}
	switch t.Op {
	case OpForcePush, OpDeleteBranch, OpMoveBranch, OpApply:
		return true
	}
	return t.Entries > 0 || t.Device != ""
}

// gitOp reports whether t's op counts commits.
func (t ImpactTarget) gitOp() bool {
	return t.Op == OpForcePush || t.Op == OpDeleteBranch || t.Op == OpMoveBranch
}

// ImpactDiffSummary is the diff_summary run and the hooks write when the
// agent gave none: the preview's one line, which Hermes' prompt shows.
func ImpactDiffSummary(m *Impact) string { return "impact: " + m.Summary }

// Live reports whether the impact reaches something live: a mount point,
// or a symlink elsewhere that points into what would go.
func (m *Impact) Live() bool {
	for _, t := range m.Targets {
		if len(t.Mounts) > 0 || len(t.LiveLinks) > 0 {
			return true
		}
	}
	return false
}

// impactObject is m as its payload object.
func impactObject(m *Impact) *JSONObject {
	ts := make([]string, len(m.Targets))
	for i, t := range m.Targets {
		o := NewJSONObject().Str("path", t.Path).Str("op", t.Op).Bool("exists", t.Exists).
			Int("entries", t.Entries).Int("files", t.Files).Int("dirs", t.Dirs).Int("symlinks", t.Links).
			Int("bytes", t.Bytes).Num("newest_mtime", t.NewestMtime).Strs("mounts", orEmpty(t.Mounts)).
			Bool("outside_cwd", t.Outside).Strs("live_links", orEmpty(t.LiveLinks)).Bool("complete", t.Complete).
			Str("note", t.Note)
		if t.Device != "" {
			o.Str("device", t.Device)
		}
		if t.gitOp() {
			o.Int("commits", t.Commits)
		}
		if t.Op == OpApply {
			o.Int("creates", t.Creates).Int("updates", t.Updates).Int("destroys", t.Destroys)
		}
		if len(t.Details) > 0 {
			o.Strs("details", t.Details)
		}
		ts[i] = o.String()
	}
	o := NewJSONObject().Str("summary", m.Summary).Int("entries", m.Entries).Int("bytes", m.Bytes).
		Bool("complete", m.Complete)
	if len(m.Incomplete) > 0 {
		o.Strs("incomplete", m.Incomplete)
	}
	return o.Strs("unknown", orEmpty(m.Unknown)).Raw("targets", "["+strings.Join(ts, ", ")+"]").Num("at", m.At)
}

// ImpactJSON is m as show --json and the payload write it.
func ImpactJSON(m *Impact) *JSONObject { return impactObject(m) }

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// impact decodes the payload's ImpactKey object (nil when absent).
func (d *payloadDecoder) impact() *Impact {
	sub, ok := d.object(ImpactKey)
	if !ok {
		return nil
	}
	m := &Impact{Summary: sub.str("summary"), Entries: int64(sub.numOr("entries", 0)), Bytes: int64(sub.numOr("bytes", 0)),
		Complete: sub.boolOr("complete", false), Incomplete: sub.strs("incomplete"), Unknown: sub.strs("unknown"), At: sub.numOr("at", 0)}
	if v, ok := sub.raw("targets"); ok {
		elems, err := arrayElements(v)
		if v[0] != '[' || err != nil {
			sub.bad("targets", "an array", v)
		}
		for i, e := range elems {
			t, ok := (&payloadDecoder{members: []jsonMember{{key: []byte("t"), raw: e}}}).object("t")
			if !ok {
				sub.problems = append(sub.problems, "targets["+strconv.Itoa(i)+"]: not an object")
				continue
			}
			m.Targets = append(m.Targets, ImpactTarget{Path: t.str("path"), Op: t.str("op"), Exists: t.boolOr("exists", false),
				Entries: int64(t.numOr("entries", 0)), Files: int64(t.numOr("files", 0)), Dirs: int64(t.numOr("dirs", 0)),
				Links: int64(t.numOr("symlinks", 0)), Bytes: int64(t.numOr("bytes", 0)), NewestMtime: t.numOr("newest_mtime", 0),
				Mounts: t.strs("mounts"), Outside: t.boolOr("outside_cwd", false), LiveLinks: t.strs("live_links"),
				Complete: t.boolOr("complete", false), Note: t.str("note"), Device: t.str("device"),
				Commits: int64(t.numOr("commits", 0)), Creates: int64(t.numOr("creates", 0)), Updates: int64(t.numOr("updates", 0)),
				Destroys: int64(t.numOr("destroys", 0)), Details: t.strs("details")})
			for _, p := range t.problems {
				sub.problems = append(sub.problems, "targets["+strconv.Itoa(i)+"]."+p)
			}
		}
	}
	for _, p := range sub.problems {
		d.problems = append(d.problems, ImpactKey+"."+p)
	}
	return m
}

// object decodes key's value as an object's members (ok false: absent, or
// not an object, which is then a problem).
func (d *payloadDecoder) object(key string) (*payloadDecoder, bool) {
	v, ok := d.raw(key)
	if !ok {
		return nil, false
	}
	if v[0] != '{' {
		d.bad(key, "an object", v)
		return nil, false
	}
	members, _, err := objectMembers(v, 0, nil)
	if err != nil {
		d.problems = append(d.problems, key+": malformed object")
		return nil, false
	}
	return &payloadDecoder{members: members}, true
}
