package storage

import (
	"sync"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
)

// The classifier's verdict on a command depends on nothing but the command's
// bytes and the rule set (risk.RulesVersion names it). A decision re-reads
// and re-classifies its row inside its transaction; when this process has
// already classified the same command (the listing did, or the submit), the
// transaction takes that verdict instead of running the rules again.
//
// The cache is content-addressed by construction: its key is the rules
// version and the exact command text (Go compares map keys byte for byte),
// never an id or a hash of it, so a payload rewritten in place with another
// command is a different key and is classified again, and a rule set of
// another version never sees an entry of this one.

// classVerdict is what the store keeps of a verdict.
type classVerdict struct {
	level    model.RiskLevel
	hardline bool
	reason   string // the matched rules' descriptions (Verdict.Reason)
	// patterns are those descriptions one by one (what a policy rule's
	// pattern matches).
	patterns []string
}

type classKey struct{ rules, command string }

// classCache holds verdicts in two generations: when the current one is
// full (classCacheMax entries or classCacheBytes of command text) it becomes
// the old one and the old one is dropped; a verdict found in the old one
// moves back. So it stays bounded, and whatever was used recently stays.
// Commands longer than classCacheMaxCommand are classified every time.
type classCache struct {
	mu       sync.Mutex
	cur, old map[classKey]classVerdict
	curBytes int
	// classify is the classifier (risk.Classify; tests count its calls).
	classify func(string) risk.Verdict
}

const (
	classCacheMax        = 8192
	classCacheBytes      = 4 << 20
	classCacheMaxCommand = 16 << 10
)

// classes is the process's cache.
var classes = &classCache{classify: risk.Classify}

// classifyCommand is risk.Classify of command under the current rules,
// from the cache when this process classified the same text already.
func classifyCommand(command string) classVerdict {
	return classes.get(risk.RulesVersion, command)
}

// effectiveRisk is risk.Effective with the cached verdict.
func effectiveRisk(pinned model.RiskLevel, command string) model.RiskLevel {
	return model.MaxRisk(pinned.Normalized(), classifyCommand(command).level)
}

func (c *classCache) get(rules, command string) classVerdict {
	if len(command) > classCacheMaxCommand {
		return verdictOf(c.classify(command))
	}
	k := classKey{rules, command}
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
	v = verdictOf(c.classify(command))
	c.mu.Lock()
	c.putLocked(k, v)
	c.mu.Unlock()
	return v
}

func (c *classCache) putLocked(k classKey, v classVerdict) {
	if _, ok := c.cur[k]; ok {
		return
	}
	n := len(k.rules) + len(k.command) + len(v.reason)
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

func verdictOf(v risk.Verdict) classVerdict {
	ps := make([]string, len(v.Matches))
	for i, m := range v.Matches {
		ps[i] = m.Description
	}
	return classVerdict{level: v.Level, hardline: v.Hardline, reason: v.Reason(), patterns: ps}
}
