package storage

import (
	"encoding/json"
	"sync"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
)

// The judgement of a command (risk.Judge) depends on nothing but the
// command's bytes, its working directory, the process's configured extras
// (sensitive paths and programs, fixed when the store is opened:
// Options.Risk) and the rules (risk.Version names them). A decision re-reads
// and re-judges its row inside its transaction; when this process has
// already judged the same command in the same directory (the listing did,
// or the submit), the transaction takes that judgement instead of running
// the analysis again.
//
// The cache is content-addressed by construction: its key is the rules
// version, the extras, the cwd and the exact command text (Go compares map
// keys byte for byte), never an id or a hash of it, so a payload rewritten
// in place with another command or directory is a different key and is
// judged again, and rules of another version never see an entry of this one.

// classVerdict is what the store keeps of a judgement.
type classVerdict struct {
	level    model.RiskLevel // the judgement's (never below the table's)
	hardline bool
	reason   string // the pattern table's matched descriptions (Verdict.Reason)
	// patterns are those descriptions one by one (what a policy rule's
	// pattern matches).
	patterns []string
	// effects are the judgement's effects (what a policy rule's effect
	// matches).
	effects []string
}

type classKey struct{ rules, extras, cwd, command string }

// judging is what a Store judges commands with besides their own cwd: the
// configured extras (Options.Risk without its Cwd) and their fingerprint,
// part of every cache key.
type judging struct {
	ctx risk.Context
	key string
}

// newJudging fixes c's extras (a copy: the caller's map may change).
func newJudging(c risk.Context) *judging {
	c.Cwd = ""
	c.Paths = append([]string(nil), c.Paths...)
	if c.Programs != nil {
		m := make(map[string]model.RiskLevel, len(c.Programs))
		for k, v := range c.Programs {
			m[k] = v
		}
		c.Programs = m
	}
	// json.Marshal sorts map keys: equal extras, equal fingerprints.
	b, _ := json.Marshal(struct {
		H string
		P []string
		G map[string]model.RiskLevel
	}{c.Home, c.Paths, c.Programs})
	return &judging{ctx: c, key: string(b)}
}

// noExtras judges with nothing configured (a Store opened without
// Options.Risk, and a nil *judging).
var noExtras = newJudging(risk.Context{})

// in is the judgement's context for a command run in cwd.
func (j *judging) in(cwd string) risk.Context {
	if j == nil {
		j = noExtras
	}
	c := j.ctx
	c.Cwd = cwd
	return c
}

// classCache holds judgements in two generations: when the current one is
// full (classCacheMax entries or classCacheBytes of command text) it becomes
// the old one and the old one is dropped; a judgement found in the old one
// moves back. So it stays bounded, and whatever was used recently stays.
// Commands longer than classCacheMaxCommand are judged every time.
type classCache struct {
	mu       sync.Mutex
	cur, old map[classKey]classVerdict
	curBytes int
	// classify is the judgement (risk.Judge; tests count its calls).
	classify func(string, risk.Context) risk.Judgement
}

const (
	classCacheMax        = 8192
	classCacheBytes      = 4 << 20
	classCacheMaxCommand = 16 << 10
)

// classes is the process's cache.
var classes = &classCache{classify: risk.Judge}

// classifyCommand is risk.Judge of command in cwd with j's extras under the
// current rules, from the cache when this process judged the same text in
// the same directory already.
func classifyCommand(j *judging, cwd, command string) classVerdict {
	if j == nil {
		j = noExtras
	}
	return classes.get(risk.Version, j, cwd, command)
}

// effectiveRisk is risk.Effective with the cached judgement.
func effectiveRisk(j *judging, pinned model.RiskLevel, cwd, command string) model.RiskLevel {
	return model.MaxRisk(pinned.Normalized(), classifyCommand(j, cwd, command).level)
}

func (c *classCache) get(rules string, j *judging, cwd, command string) classVerdict {
	if len(command) > classCacheMaxCommand || len(cwd) > classCacheMaxCommand {
		return verdictOf(c.classify(command, j.in(cwd)))
	}
	k := classKey{rules, j.key, cwd, command}
	c.mu.Lock()
	v, ok := c.cur[k]
	if !ok {
		if v, ok = c.old[k]; ok {
			c.putLocked(k, v)
		}
	}
	c.mu.Unlock()
	if ok {
		return v
	}
	v = verdictOf(c.classify(command, j.in(cwd)))
	c.mu.Lock()
	c.putLocked(k, v)
	c.mu.Unlock()
	return v
}

func (c *classCache) putLocked(k classKey, v classVerdict) {
	if _, ok := c.cur[k]; ok {
		return
	}
	n := len(k.rules) + len(k.cwd) + len(k.command) + len(v.reason)
	if c.cur == nil || len(c.cur) >= classCacheMax || c.curBytes+n > classCacheBytes {
		c.old, c.cur, c.curBytes = c.cur, make(map[classKey]classVerdict, 256), 0
	}
	c.cur[k] = v
	c.curBytes += n
}

// reset empties the cache.
func (c *classCache) reset() {
	c.mu.Lock()
	c.cur, c.old, c.curBytes = nil, nil, 0
	c.mu.Unlock()
}

func verdictOf(j risk.Judgement) classVerdict {
	ps := make([]string, len(j.Table.Matches))
	for i, m := range j.Table.Matches {
		ps[i] = m.Description
	}
	return classVerdict{level: j.Level, hardline: j.Hardline, reason: j.Table.Reason(), patterns: ps,
		effects: append([]string(nil), j.Effects...)}
}
