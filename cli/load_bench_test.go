package cli

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/tui"
)

// BenchmarkWaiterLoad is a busy night, with real processes: a file with
// 10,000 pending proposals, 100 `approve-tui wait` processes heartbeating on
// 100 of them, agents that submit new proposals with `approve-tui run` and
// wait for them, operators that decide with `approve-tui approve`/`deny`
// (each its own process), and the console (this process: the real model
// with its real watcher and clock, driven as bubbletea drives it, every
// message followed by a frame) taking a key every 50 ms.
//
// It measures what the operator and the agents feel:
//   - keypress: from the key's arrival to the frame that shows it;
//   - new-row: from a run's submit (its created_at) to the console's first
//     frame that shows the row;
//   - notice: from a decision's commit (consumed_at) to the moment the
//     waiting process says it (run's "approved … running it" line, wait's
//     outcome line);
//   - locked: submits, approvals and denials that failed because the file
//     was locked (exit 6); heartbeat-failures: heartbeat warnings of waiters.
//
// One iteration is the whole night; run it with -benchtime 1x.
func BenchmarkWaiterLoad(b *testing.B) {
	const (
		pending = 10_000
		waiters = 100
		runs    = 25
	)
	bin, err := exec.LookPath("approve-tui")
	if err != nil {
		b.Skip("approve-tui is not in $PATH:", err)
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		db := filepath.Join(dir, "state.db")
		ids := seedPending(b, db, pending, waiters)
		l := &loadNight{b: b, bin: bin, db: db, dir: dir}
		self0, kids0 := cpuSeconds(syscall.RUSAGE_SELF), cpuSeconds(syscall.RUSAGE_CHILDREN)
		start := time.Now()
		b.StartTimer()
		l.night(ids, runs)
		b.StopTimer()
		l.wall = time.Since(start).Seconds()
		l.selfCPU, l.kidsCPU = cpuSeconds(syscall.RUSAGE_SELF)-self0, cpuSeconds(syscall.RUSAGE_CHILDREN)-kids0
		l.report()
	}
}

func cpuSeconds(who int) float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

type loadNight struct {
	wall, selfCPU, kidsCPU float64
	b                      *testing.B
	bin, db                string
	dir                    string
	mu                     sync.Mutex
	keys                   []time.Duration
	newRow                 []time.Duration
	notice                 []time.Duration
	locked                 int
	failures               []string
	hbFail                 int
}

func (l *loadNight) cmd(args ...string) *exec.Cmd {
	c := exec.Command(l.bin, append([]string{"--db", l.db}, args...)...)
	c.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	return c
}

// seedPending writes n pending low and medium risk proposals (they rank
// below the high-risk ones the runs submit) and returns the first w ids.
func seedPending(b *testing.B, path string, n, w int) []string {
	return seedPendingTTL(b, path, n, w, 2*time.Hour)
}

// seedPendingTTL is seedPending with the i-th proposal expiring ttl + i
// seconds after it is made.
func seedPendingTTL(b *testing.B, path string, n, w int, ttl time.Duration) []string {
	s, err := storage.Open(context.Background(), path, storage.Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	raw, err := sql.Open("sqlite", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	tx, err := raw.Begin()
	if err != nil {
		b.Fatal(err)
	}
	ins, err := tx.Prepare(`INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status, payload_json) VALUES (?, ?, ?, 'pending', ?)`)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	cmds := []string{"ls -la /srv/%d", "sh -c 'make -C /srv/app%d'"}
	var ids []string
	for i := 0; i < n; i++ {
		p, _, err := risk.Propose(risk.Draft{Command: fmt.Sprintf(cmds[i%2], i), SessionKey: fmt.Sprintf("agent:night-%d", i%40),
			ID: fmt.Sprintf("night%06d", i), TTL: ttl + time.Duration(i)*time.Second}, now)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ins.Exec(p.ApprovalID, p.CreatedAt, *p.ExpiresAt, string(model.EncodePayload(p))); err != nil {
			b.Fatal(err)
		}
		if i < w {
			ids = append(ids, p.ApprovalID)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return ids
}

func (l *loadNight) fail(format string, args ...any) {
	l.mu.Lock()
	l.failures = append(l.failures, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *loadNight) add(to *[]time.Duration, d time.Duration) {
	l.mu.Lock()
	*to = append(*to, d)
	l.mu.Unlock()
}

// night runs the whole load and the console until every waiter and run
// has its decision.
func (l *loadNight) night(waitIDs []string, runs int) {
	b := l.b
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := storage.Open(ctx, l.db, storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()

	// The 100 waiters, live before the night starts.
	var procs sync.WaitGroup
	for _, id := range waitIDs {
		procs.Add(1)
		go func(id string) {
			defer procs.Done()
			l.waitProcess(id)
		}(id)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		n := 0
		for _, id := range waitIDs {
			if ws, err := s.WaiterState(ctx, id); err == nil && ws.State == storage.WaiterLive {
				n++
			}
		}
		if n == len(waitIDs) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d waiters live after a minute", n, len(waitIDs))
		}
		time.Sleep(200 * time.Millisecond)
	}

	con := startLoadConsole(ctx, s)
	defer con.stop()
	if !con.await(`\d+ pending`, 30*time.Second) {
		b.Fatalf("the console never loaded:\n%s", con.view())
	}

	// Keys every 50 ms for the whole night.
	keysDone := make(chan struct{})
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-keysDone:
				return
			case <-t.C:
				k := "j"
				if i%16 >= 8 {
					k = "k"
				}
				con.key(k)
			}
		}
	}()

	// Agents: a run every 400 ms; each is approved or denied by an
	// operator process once the console shows it.
	var agents sync.WaitGroup
	for i := 0; i < runs; i++ {
		agents.Add(1)
		go func(i int) {
			defer agents.Done()
			l.runAgent(con, i)
		}(i)
		time.Sleep(400 * time.Millisecond)
	}
	// Meanwhile, and then, the operators decide the waiters' proposals,
	// ten a second.
	for i, id := range waitIDs {
		verb := "approve"
		if i%2 == 1 {
			verb = "deny"
		}
		go l.decide(verb, id)
		time.Sleep(100 * time.Millisecond)
	}
	agents.Wait()
	procs.Wait()
	close(keysDone)
	time.Sleep(100 * time.Millisecond)
	con.mu.Lock()
	l.keys = append(l.keys, con.keyLat...)
	con.mu.Unlock()
}

// decide runs `approve-tui approve|deny` for id as its own process.
func (l *loadNight) decide(verb, id string) {
	args := []string{verb, "--", id}
	if verb == "approve" {
		args = []string{verb, "--confirm", id, "--", id}
	}
	out, err := l.cmd(args...).CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == ExitUnavailable {
			l.mu.Lock()
			l.locked++
			l.mu.Unlock()
		}
		l.fail("%s %s: %v: %s", verb, id, err, out)
	}
}

var (
	waitOutcome = regexp.MustCompile(`^(\S+) (approved|denied)`)
	runNeeds    = regexp.MustCompile(`^approve-tui: (\S+) needs approval`)
	runDecided  = regexp.MustCompile(`^approve-tui: (\S+) (approved by .*; running it|denied by .*; not run)`)
)

// waitProcess runs `approve-tui wait ID` and times its notice of the
// decision.
func (l *loadNight) waitProcess(id string) {
	c := l.cmd("wait", "--", id)
	stdout, _ := c.StdoutPipe()
	stderr, _ := c.StderrPipe()
	if err := c.Start(); err != nil {
		l.fail("wait %s: %v", id, err)
		return
	}
	go l.countHeartbeatWarnings(stderr)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if waitOutcome.MatchString(sc.Text()) {
			l.noticed(id, time.Now())
		}
	}
	if err := c.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 10 { // 10: denied
			l.fail("wait %s: %v", id, err)
		}
	}
}

func (l *loadNight) countHeartbeatWarnings(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "heartbeat") {
			l.mu.Lock()
			l.hbFail++
			l.mu.Unlock()
		}
	}
}

// noticed times a notice against the decision's commit (consumed_at, on
// this machine's clock).
func (l *loadNight) noticed(id string, at time.Time) {
	rec, err := l.store().Get(context.Background(), id)
	if err != nil || rec.ConsumedAt == nil {
		l.fail("notice %s: %v", id, err)
		return
	}
	l.add(&l.notice, at.Sub(model.FromEpoch(*rec.ConsumedAt)))
}

var (
	loadStoreOnce sync.Once
	loadStore     *storage.Store
)

// store is a reader for the timings (the one handle set of the file is
// shared with the console's).
func (l *loadNight) store() *storage.Store {
	loadStoreOnce.Do(func() {
		s, err := storage.Open(context.Background(), l.db, storage.Options{})
		if err != nil {
			panic(err)
		}
		loadStore = s
	})
	return loadStore
}

// runAgent is one agent: `approve-tui run` of a high-risk command, which an
// operator approves (or denies, one in four) once the console shows it.
func (l *loadNight) runAgent(con *loadConsole, i int) {
	target := fmt.Sprintf("scratch-%03d", i)
	con.watchFor(target)
	c := l.cmd("run", "--", "rm", "-rf", target)
	c.Dir = l.dir
	stderr, _ := c.StderrPipe()
	if err := c.Start(); err != nil {
		l.fail("run %d: %v", i, err)
		return
	}
	sc := bufio.NewScanner(stderr)
	var id string
	for sc.Scan() {
		line := sc.Text()
		if m := runNeeds.FindStringSubmatch(line); m != nil {
			id = m[1]
			go l.seeAndDecide(con, id, target, i%4 == 3)
		}
		if m := runDecided.FindStringSubmatch(line); m != nil {
			l.noticed(m[1], time.Now())
		}
		if strings.Contains(line, "locked") {
			l.mu.Lock()
			l.locked++
			l.mu.Unlock()
		}
		if strings.Contains(line, "heartbeat") {
			l.mu.Lock()
			l.hbFail++
			l.mu.Unlock()
		}
	}
	if err := c.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 10 {
			l.fail("run %d (%s): %v", i, id, err)
		}
	}
}

// seeAndDecide waits for the console to show the new proposal, times it,
// then decides it as an operator would.
func (l *loadNight) seeAndDecide(con *loadConsole, id, target string, deny bool) {
	rec, err := l.store().Get(context.Background(), id)
	if err != nil {
		l.fail("read %s: %v", id, err)
		return
	}
	if at, ok := con.seen(target, 30*time.Second); ok {
		// at is the first frame that showed it, perhaps before its
		// runner's line reached us.
		l.add(&l.newRow, at.Sub(model.FromEpoch(rec.CreatedAt)))
	} else {
		l.fail("the console never showed %s (%s):\n%s", id, target, con.view())
	}
	verb := "approve"
	if deny {
		verb = "deny"
	}
	l.decide(verb, id)
}

func (l *loadNight) report() {
	b := l.b
	for _, f := range l.failures {
		b.Log(f)
	}
	pct := func(ds []time.Duration, p float64) float64 {
		if len(ds) == 0 {
			return -1
		}
		s := append([]time.Duration(nil), ds...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return float64(s[int(p*float64(len(s)-1))].Microseconds()) / 1e3
	}
	b.ReportMetric(pct(l.keys, 0.5), "key-p50-ms")
	b.ReportMetric(pct(l.keys, 0.99), "key-p99-ms")
	b.ReportMetric(pct(l.newRow, 0.5), "newrow-p50-ms")
	b.ReportMetric(pct(l.newRow, 0.99), "newrow-p99-ms")
	b.ReportMetric(pct(l.notice, 0.5), "notice-p50-ms")
	b.ReportMetric(pct(l.notice, 0.99), "notice-p99-ms")
	b.ReportMetric(float64(l.locked), "locked")
	b.ReportMetric(float64(l.hbFail), "heartbeat-failures")
	b.ReportMetric(float64(len(l.failures)), "failures")
	// CPU over the night, in cores: this process (the console, the
	// timing reads) and every process it started (waiters, runs, deciders).
	b.ReportMetric(l.selfCPU/l.wall, "console-cores")
	b.ReportMetric(l.kidsCPU/l.wall, "others-cores")
	b.Logf("keys %d, new rows %d, notices %d", len(l.keys), len(l.newRow), len(l.notice))
}

// loadConsole drives the console model as bubbletea does: one message at a
// time, each command in its own goroutine, a frame after every message.
type loadConsole struct {
	m      *tui.Model
	msgs   chan tea.Msg
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	frame   string
	watch   map[string]time.Time // text -> first frame that showed it (zero: not yet)
	keyAt   []time.Time          // keys sent, not yet applied
	keyLat  []time.Duration
	changed *sync.Cond
}

func startLoadConsole(ctx context.Context, s *storage.Store) *loadConsole {
	ctx, cancel := context.WithCancel(ctx)
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	c := &loadConsole{
		m: tui.New(tui.Options{Store: s, Actor: model.Actor{Surface: model.SurfaceTUI, Name: "bench@night", Person: "bench"},
			Renderer: r, Context: ctx, Label: "night"}),
		msgs: make(chan tea.Msg, 1024), ctx: ctx, cancel: cancel, done: make(chan struct{}),
		watch: map[string]time.Time{},
	}
	c.changed = sync.NewCond(&c.mu)
	c.m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	c.exec(c.m.Init())
	go c.loop()
	return c
}

func (c *loadConsole) loop() {
	defer close(c.done)
	for {
		select {
		case <-c.ctx.Done():
			return
		case msg := <-c.msgs:
			_, cmd := c.m.Update(msg)
			c.exec(cmd)
			v := c.m.View()
			now := time.Now()
			c.mu.Lock()
			c.frame = v
			for t, at := range c.watch {
				if at.IsZero() && strings.Contains(v, t) {
					c.watch[t] = now
				}
			}
			if _, ok := msg.(tea.KeyMsg); ok && len(c.keyAt) > 0 {
				c.keyLat = append(c.keyLat, now.Sub(c.keyAt[0]))
				c.keyAt = c.keyAt[1:]
			}
			c.changed.Broadcast()
			c.mu.Unlock()
		}
	}
}

var cmdType = reflect.TypeOf(tea.Cmd(nil))

func (c *loadConsole) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() { c.post(cmd()) }()
}

func (c *loadConsole) post(msg tea.Msg) {
	switch m := msg.(type) {
	case nil, tea.QuitMsg:
		return
	case tea.BatchMsg:
		for _, cmd := range m {
			c.exec(cmd)
		}
		return
	}
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == cmdType {
		for i := 0; i < v.Len(); i++ {
			if cmd, _ := v.Index(i).Interface().(tea.Cmd); cmd != nil {
				c.post(cmd())
			}
		}
		return
	}
	select {
	case c.msgs <- msg:
	case <-c.ctx.Done():
	}
}

func (c *loadConsole) key(k string) {
	c.mu.Lock()
	c.keyAt = append(c.keyAt, time.Now())
	c.mu.Unlock()
	c.post(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
}

func (c *loadConsole) view() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.frame
}

// watchFor starts looking for text in every frame.
func (c *loadConsole) watchFor(text string) {
	c.mu.Lock()
	c.watch[text] = time.Time{}
	c.mu.Unlock()
}

// seen waits until a frame showed text (watchFor) and returns that frame's
// time.
func (c *loadConsole) seen(text string, limit time.Duration) (time.Time, bool) {
	end := time.Now().Add(limit)
	stop := time.AfterFunc(limit, func() {
		c.mu.Lock()
		c.changed.Broadcast()
		c.mu.Unlock()
	})
	defer stop.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.watch[text].IsZero() {
		if time.Now().After(end) {
			return time.Time{}, false
		}
		c.changed.Wait()
	}
	return c.watch[text], true
}

func (c *loadConsole) await(pattern string, limit time.Duration) bool {
	re := regexp.MustCompile(pattern)
	end := time.Now().Add(limit)
	for time.Now().Before(end) {
		if re.MatchString(c.view()) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func (c *loadConsole) stop() {
	c.cancel()
	<-c.done
	c.m.Close()
}
