package risk

import (
	"flag"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// The judgement attacked as a hostile agent would: commands that destroy,
// write sensitive files, run code through options, hide their program or
// exfiltrate, each with the least level it must get (so that it never runs
// unasked under --unasked low), or "!ro" when it may stay LOW but must not
// be proven read-only (so that it never runs unasked under --unasked
// read-only). The table is in attack_cases_test.go.
//
// Commands the judgement still gets wrong are listed in attackOpen with
// the reason; they are reported (t.Log) and, with -attack.strict, fail.
// A listed command that now passes is reported so that it can be taken off
// the list. Every other command of the table must pass.

var attackStrict = flag.Bool("attack.strict", false, "fail on the open attack cases too")

type attackCase struct {
	cmd  string
	want string // "low", "medium", "high" or "!ro"
}

// attackHome and attackCwd are the home directory and workspace the table
// is judged in.
const (
	attackHome = "/home/dev"
	attackCwd  = "/home/dev/project"
)

// attackOpen are the commands of the table the judgement gets wrong, and
// why each matters.
var attackOpen = map[string]string{
	// A write inside the workspace is LOW by design (as git log --output=out
	// and sort -o out are); only the read-only proof was wrong, and is fixed.
	"git shortlog -s --output=out": "writes out inside the workspace: LOW, not proven read-only; the table asks MEDIUM",
}

// attackContext is the context the table is judged in.
func attackContext() Context {
	return Context{Cwd: attackCwd, Home: attackHome}
}

// attackFails says what is wrong with j for c ("" when nothing).
func attackFails(c attackCase, j Judgement) string {
	var bad []string
	if c.want != "!ro" && j.Level.Rank() < model.RiskLevel(c.want).Rank() {
		bad = append(bad, "level "+string(j.Level)+", want at least "+c.want)
	}
	if j.ReadOnly && (c.want == "!ro" || c.want != "low") {
		bad = append(bad, "proven read-only")
	}
	return strings.Join(bad, "; ")
}

func TestAttackTable(t *testing.T) {
	var open, fixed []string
	for _, c := range attackTable {
		j := Judge(c.cmd, attackContext())
		wrong := attackFails(c, j)
		why, listed := attackOpen[c.cmd]
		switch {
		case wrong != "" && listed:
			open = append(open, c.cmd+"\t"+wrong+"\t"+why)
			if *attackStrict {
				t.Errorf("%q: %s (%s)", c.cmd, wrong, why)
			}
		case wrong != "":
			t.Errorf("%q: %s; findings %+v", c.cmd, wrong, j.Findings)
		case listed:
			fixed = append(fixed, c.cmd)
		}
	}
	sort.Strings(open)
	for _, o := range open {
		t.Logf("open: %s", o)
	}
	for _, f := range fixed {
		t.Logf("listed as open but now judged as it should: %q", f)
	}
	t.Logf("%d attacks, %d open", len(attackTable), len(open))
}

// Every command of the table judged at least as the pattern table does,
// with the pattern table's hardline (the table is the floor; hardline is
// Hermes' alone).
func TestAttackNeverBelowTable(t *testing.T) {
	for _, c := range attackTable {
		for _, ctx := range []Context{attackContext(), {}, {Cwd: "/", Home: "/root"}} {
			j, v := Judge(c.cmd, ctx), Classify(c.cmd)
			if j.Level.Rank() < v.Level.Rank() {
				t.Errorf("%q in %q: %s below the table's %s", c.cmd, ctx.Cwd, j.Level, v.Level)
			}
			if j.Hardline != v.Hardline || j.Table.Level != v.Level {
				t.Errorf("%q: hardline %v level %s, table says hardline %v level %s", c.cmd, j.Hardline, j.Table.Level, v.Hardline, v.Level)
			}
		}
	}
}

// The controls stay read-only and LOW: the attacks above are not answered
// by proving nothing.
func TestAttackControls(t *testing.T) {
	for _, cmd := range readOnlyControls {
		j := Judge(cmd, attackContext())
		if !j.ReadOnly || j.Level != model.RiskLow {
			t.Errorf("%q: level %s read-only %v; findings %+v", cmd, j.Level, j.ReadOnly, j.Findings)
		}
	}
}

// attackFill repeats unit, joined by sep, to about 64 KiB.
func attackFill(unit, sep string) string {
	n := 64 * 1024 / (len(unit) + len(sep))
	return strings.Repeat(unit+sep, n)[:n*(len(unit)+len(sep))-len(sep)]
}

// Crafted 64 KiB lines: the slowest shapes found for the judgement.
func BenchmarkAttack64K(b *testing.B) {
	var fns strings.Builder
	for i := 0; fns.Len() < 64*1024; i++ {
		fmt.Fprintf(&fns, "f%d(){ g%d; }; ", i, i)
	}
	for _, c := range []struct{ name, cmd string }{
		{"ssh-nested", attackFill("ssh h ssh h ssh h ls", "; ")},
		{"functions", fns.String()},
		{"curl-pipe-sh", attackFill("curl x | sh", " | ")},
		{"sh-c", attackFill(`sh -c 'sh -c "ls; ls"'`, "; ")},
		{"git-c", "git " + attackFill("-c core.pager=less", " ") + " log"},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := attackContext()
			for b.Loop() {
				Judge(c.cmd, ctx)
			}
		})
	}
}
