package storage

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
)

// countingCache is a classCache whose classifier counts its calls.
func countingCache() (*classCache, *atomic.Int64) {
	var n atomic.Int64
	return &classCache{classify: func(cmd string, c risk.Context) risk.Judgement {
		n.Add(1)
		return risk.Judge(cmd, c)
	}}, &n
}

func TestClassCacheIsKeyedByRulesVersionAndExactCommand(t *testing.T) {
	c, calls := countingCache()
	want := func(cmd string, v classVerdict) {
		t.Helper()
		r := risk.Judge(cmd, risk.Context{})
		if v.level != r.Level || v.hardline != r.Hardline || v.reason != r.Table.Reason() {
			t.Fatalf("%q: cached %+v, the classifier says %+v", cmd, v, r)
		}
	}
	for i := 0; i < 3; i++ {
		want("rm -rf /srv", c.get("v1", noExtras, "", "rm -rf /srv"))
	}
	if calls.Load() != 1 {
		t.Fatalf("one command classified %d times", calls.Load())
	}
	// Another text, however close, is classified on its own.
	for _, cmd := range []string{"rm -rf /srv ", "rm -rf /srv\x00", "RM -rf /srv", "ls /srv"} {
		want(cmd, c.get("v1", noExtras, "", cmd))
	}
	if calls.Load() != 5 {
		t.Fatalf("%d classifications for 5 texts", calls.Load())
	}
	// Another rule set never sees this one's verdicts.
	want("rm -rf /srv", c.get("v2", noExtras, "", "rm -rf /srv"))
	if calls.Load() != 6 {
		t.Fatal("a verdict of rules v1 was served for rules v2")
	}
	want("rm -rf /srv", c.get("v1", noExtras, "", "rm -rf /srv"))
	if calls.Load() != 6 {
		t.Fatal("rules v1's verdict was lost")
	}
	// Commands too long to keep are classified every time.
	long := "echo " + strings.Repeat("a", classCacheMaxCommand)
	c.get("v1", noExtras, "", long)
	c.get("v1", noExtras, "", long)
	if calls.Load() != 8 {
		t.Fatalf("a long command was cached (%d calls)", calls.Load())
	}
	// The process's cache is keyed by the classifier's own version.
	if v := classifyCommand(nil, "/w", "mkfs.ext4 /dev/sdb"); !v.hardline {
		t.Fatalf("classifyCommand: %+v", v)
	}
	if _, ok := classes.cur[classKey{risk.Version, noExtras.key, "/w", "mkfs.ext4 /dev/sdb"}]; !ok {
		t.Fatal("the process's cache is not keyed by risk.Version")
	}
}

func TestClassCacheIsBounded(t *testing.T) {
	c, calls := countingCache()
	for i := 0; i < 3*classCacheMax; i++ {
		c.get("v1", noExtras, "", fmt.Sprintf("ls /srv/%d", i))
	}
	if n := len(c.cur) + len(c.old); n > 2*classCacheMax {
		t.Fatalf("%d entries kept", n)
	}
	// What was used last stays; the oldest went.
	before := calls.Load()
	c.get("v1", noExtras, "", fmt.Sprintf("ls /srv/%d", 3*classCacheMax-1))
	if calls.Load() != before {
		t.Fatal("the latest verdict was dropped")
	}
	c.get("v1", noExtras, "", "ls /srv/0")
	if calls.Load() != before+1 {
		t.Fatal("the cache kept everything")
	}
	// The byte budget bounds it too.
	c.reset()
	big := strings.Repeat("x", classCacheMaxCommand-16)
	for i := 0; i < 4*classCacheBytes/len(big); i++ {
		c.get("v1", noExtras, "", fmt.Sprintf("echo %d %s", i, big))
	}
	if c.curBytes > classCacheBytes {
		t.Fatalf("current generation holds %d bytes", c.curBytes)
	}
	if n := len(c.cur) + len(c.old); n > 2*classCacheBytes/len(big)+2 {
		t.Fatalf("%d long entries kept", n)
	}
}

func TestClassCacheConcurrentUse(t *testing.T) {
	c, _ := countingCache()
	cmds := []string{"ls", "rm -rf /", "git push --force", "sudo reboot", "mkfs.ext4 /dev/sdb", "echo hi", "chmod -R 777 /"}
	want := make([]risk.Judgement, len(cmds))
	for i, cmd := range cmds {
		want[i] = risk.Judge(cmd, risk.Context{})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				k := (i + g) % len(cmds)
				v := c.get("v1", noExtras, "", cmds[k])
				if i%97 == 0 {
					c.get("v1", noExtras, "", fmt.Sprintf("echo %d %d", g, i)) // churn
				}
				if v.level != want[k].Level || v.hardline != want[k].Hardline || v.reason != want[k].Table.Reason() {
					errs <- fmt.Errorf("%q: %+v, want %+v", cmds[k], v, want[k])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A payload rewritten in place after it was read and classified is
// classified again inside the decision: the rewritten command is a
// hardline one, and the approval is refused (no read hash named). The row
// is one Hermes wrote: it has no submit record to be found tampered by.
func TestRewrittenPayloadIsClassifiedAgain(t *testing.T) {
	s, c := newStore(t)
	insertRaw(t, rawDB(t, s.Path()), proposal("reclass01", "ls /srv", model.RiskLow, c.Now(), time.Hour))
	r, err := s.Get(ctx, "reclass01")
	if err != nil || r.Hardline || r.EffectiveRisk != model.RiskLow {
		t.Fatalf("before: %+v %v", r, err)
	}
	p2 := proposal("reclass01", "mkfs.ext4 /dev/sdb", model.RiskLow, c.Now(), time.Hour)
	mustExec(t, rawDB(t, s.Path()), `UPDATE gateway_approvals SET payload_json = ? WHERE approval_id = 'reclass01'`,
		string(model.EncodePayload(p2)))
	_, err = s.Consume(ctx, "reclass01", "reclass01", alice)
	var rf *RefusedError
	if !errors.As(err, &rf) || rf.Code != RefusedHardline {
		t.Fatalf("consume of the rewritten payload: %v", err)
	}
	if r, _ := s.Get(ctx, "reclass01"); !r.Hardline || r.ClassifierRisk != model.RiskHigh || r.Status != model.StatusPending {
		t.Fatalf("after: hardline %v risk %s status %s", r.Hardline, r.ClassifierRisk, r.Status)
	}
}

// effectiveRisk is risk.Effective over the cached verdict.
func TestEffectiveRiskIsRiskEffective(t *testing.T) {
	for _, pinned := range []model.RiskLevel{model.RiskLow, model.RiskMedium, model.RiskHigh, "", "bogus", "HIGH"} {
		for _, cmd := range []string{"ls", "rm -rf /", "git push --force origin main", "sudo rm -rf /var", "mkfs.ext4 /dev/sdb", "echo"} {
			for i := 0; i < 2; i++ { // classified, then cached
				if got, want := effectiveRisk(nil, pinned, "/w", cmd), risk.Effective(pinned, cmd, risk.Context{Cwd: "/w"}); got != want {
					t.Fatalf("pinned %q, %q: %s, risk.Effective says %s", pinned, cmd, got, want)
				}
			}
		}
	}
}

// The cache keeps the judgement apart by cwd and by the configured extras:
// the same command in another directory, or judged by a process with other
// sensitive paths, is judged again, never served another's judgement.
func TestClassCacheIsKeyedByCwdAndExtras(t *testing.T) {
	c, calls := countingCache()
	a := newJudging(risk.Context{Paths: []string{"/srv/prod/"}, Programs: map[string]model.RiskLevel{"psql": model.RiskHigh}})
	b := newJudging(risk.Context{Paths: []string{"/srv/prod/"}, Programs: map[string]model.RiskLevel{"psql": model.RiskHigh}})
	other := newJudging(risk.Context{Paths: []string{"/srv/other/"}})
	if a.key != b.key || a.key == other.key || a.key == noExtras.key {
		t.Fatalf("fingerprints: %q %q %q", a.key, b.key, other.key)
	}
	c.get("v1", a, "/w", "rm x")
	c.get("v1", b, "/w", "rm x") // the same extras
	if calls.Load() != 1 {
		t.Fatalf("%d judgements of one key", calls.Load())
	}
	c.get("v1", a, "/elsewhere", "rm x")
	c.get("v1", other, "/w", "rm x")
	c.get("v1", noExtras, "/w", "rm x")
	if calls.Load() != 4 {
		t.Fatalf("%d judgements for 4 keys", calls.Load())
	}
	// The judgement gets the cwd and the extras.
	var got risk.Context
	cc := &classCache{classify: func(cmd string, ctx risk.Context) risk.Judgement { got = ctx; return risk.Judge(cmd, ctx) }}
	cc.get("v1", a, "/w", "ls")
	if got.Cwd != "/w" || got.Programs["psql"] != model.RiskHigh || len(got.Paths) != 1 {
		t.Fatalf("judged in %+v", got)
	}
	// The effects a policy rule matches come from the judgement.
	if v := c.get("v1", noExtras, "/w", "rm build/x"); !slices.Contains(v.effects, "delete") {
		t.Fatalf("rm build/x: effects %q", v.effects)
	}
}
