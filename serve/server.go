package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anmitsu/go-shlex"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/keygen"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/log"
	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"
	bm "github.com/charmbracelet/wish/bubbletea"
	"github.com/muesli/termenv"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/approve-tui/approve-tui/internal/termbg"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/tui"
)

// Config is how the server runs. Zero values take the defaults.
type Config struct {
	Listen      string // ":2222"
	HostKeyPath string // DefaultHostKeyPath()
	Approvers   string // authorized_keys of the people who may decide
	Watchers    string // authorized_keys of the people who may only look

	Store *storage.Store // the one store of the process, shared by every session
	// Run runs a subcommand for a session without a terminal, as actor
	// (the CLI's ExecuteAs on the server's database); its exit code is
	// the session's.
	Run func(ctx context.Context, args []string, actor model.Actor, stdin io.Reader, stdout, stderr io.Writer) int

	MaxSessions       int           // 64 in all
	MaxSessionsPerKey int           // 8 per key
	IdleTimeout       time.Duration // 30 min without a byte either way
	LoginGrace        time.Duration // 30 s to authenticate
	AuthFailures      int           // 20 refused keys from one address in a minute...
	AuthBackoff       time.Duration // ...refuse it for 1 min
	ReloadEvery       time.Duration // 1 s: access files re-read when changed
	ShutdownGrace     time.Duration // 10 s for sessions to end on shutdown

	Log *log.Logger // stderr when nil

	// Bell, when set, rings each console's terminal when a proposal at or
	// above this risk arrives (tui.Options.Bell).
	Bell model.RiskLevel
	// PolicyMemory is the serving user's file in which the newest signed
	// policy seen in force is kept (tui.Signing.PolicyMemory): sessions
	// do not sign approvals against an older one. "" keeps none.
	PolicyMemory string
	// OnSessions, when set, is told how many sessions are open each time
	// one starts or ends (a metrics gauge); it must not block.
	OnSessions func(open int)
	// OnDecision, when set, is told of every decision made in a session,
	// after the server's log of it (a metrics counter): an observer, never
	// a gate.
	OnDecision func(storage.Decision)
}

func (c *Config) defaults() {
	if c.Listen == "" {
		c.Listen = ":2222"
	}
	if c.HostKeyPath == "" {
		c.HostKeyPath = DefaultHostKeyPath()
	}
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&c.MaxSessions, 64)
	set(&c.MaxSessionsPerKey, 8)
	set(&c.AuthFailures, 20)
	setD(&c.IdleTimeout, 30*time.Minute)
	setD(&c.LoginGrace, 30*time.Second)
	setD(&c.AuthBackoff, time.Minute)
	setD(&c.ReloadEvery, time.Second)
	setD(&c.ShutdownGrace, 10*time.Second)
	if c.Log == nil {
		// Stderr without its descriptor: charmbracelet/log would ask its
		// terminal for its colours and wait for the answer (see the CLI's
		// serveLog). The colours its environment gives.
		c.Log = log.NewWithOptions(struct{ io.Writer }{os.Stderr}, log.Options{ReportTimestamp: true, Prefix: "serve"})
		c.Log.SetColorProfile(termenv.NewOutput(os.Stderr).EnvColorProfile())
	}
}

// DefaultHostKeyPath is where the host key lives unless --host-key says:
// $XDG_DATA_HOME/approve-tui/ssh_host_ed25519 (~/.local/share/… by default).
func DefaultHostKeyPath() string {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "approve-tui", "ssh_host_ed25519")
}

// Server is approve-tui over SSH.
type Server struct {
	cfg    Config
	access *access
	srv    *ssh.Server
	hostFP string

	mu       sync.Mutex
	sessions map[*session]struct{}
	failures map[string]*failureCount
	closing  atomic.Bool
}

type session struct {
	person Person
	sess   ssh.Session
	start  time.Time
	// why is the reason the server ended the session ("" when the client
	// did), recorded with its end.
	why atomic.Pointer[string]
	// ended: its end is audited once, by its handler, or by a shutdown
	// that could not wait for the handler any longer.
	ended sync.Once
}

// endedBy notes why the server ends ss; the first reason given stays.
func (ss *session) endedBy(why string) { ss.why.CompareAndSwap(nil, &why) }

// finish audits ss's end (event session, reason end), with the reason the
// server ended it, if it did; once.
func (s *Server) finish(ss *session, actor model.Actor) {
	ss.ended.Do(func() {
		detail := map[string]any{"seconds": int(time.Since(ss.start).Seconds())}
		kv := who(ss.person)
		if why := ss.why.Load(); why != nil {
			detail["reason"] = *why
			kv = append(kv, "why", *why)
		}
		s.audit(actor, "end", detail)
		s.cfg.Log.Info("session end", kv...)
	})
}

type failureCount struct {
	n     int
	since time.Time
}

type ctxKey struct{ name string }

var (
	personKey = ctxKey{"person"}
	modelKey  = ctxKey{"model"}
	authedKey = ctxKey{"authed"}
)

// New prepares a server: reads the access files, loads (or makes) the host
// key. Nothing listens until Serve.
func New(cfg Config) (*Server, error) {
	cfg.defaults()
	if cfg.Store == nil || cfg.Run == nil {
		return nil, errors.New("serve: no store, or no way to run subcommands")
	}
	if cfg.Approvers == "" && cfg.Watchers == "" {
		return nil, errors.New("serve: give --approvers and/or --watchers (OpenSSH authorized_keys files): nobody could log in")
	}
	acc, err := newAccess(cfg.Approvers, cfg.Watchers)
	if err != nil {
		return nil, err
	}
	fp, err := ensureHostKey(cfg.HostKeyPath)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, access: acc, hostFP: fp, sessions: map[*session]struct{}{}, failures: map[string]*failureCount{}}
	s.srv, err = wish.NewServer(
		ssh.HostKeyFile(cfg.HostKeyPath),
		wish.WithPublicKeyAuth(s.publicKey),
		wish.WithIdleTimeout(cfg.IdleTimeout),
		func(srv *ssh.Server) error {
			srv.ConnCallback = s.connCallback
			return nil
		},
		wish.WithMiddleware(
			bm.MiddlewareWithProgramHandler(s.program, 0 /* TrueColor: the client's own profile decides */),
			s.gate,
		),
	)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ensureHostKey makes an ed25519 host key (mode 0600) if there is none, and
// returns its fingerprint.
func ensureHostKey(path string) (string, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", fmt.Errorf("host key: %w", err)
		}
		if _, err := keygen.New(path, keygen.WithKeyType(keygen.Ed25519), keygen.WithWrite()); err != nil {
			return "", fmt.Errorf("host key: %w", err)
		}
		if err := os.Chmod(path, 0o600); err != nil {
			return "", fmt.Errorf("host key: %w", err)
		}
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("host key: %w", err)
	}
	signer, err := gossh.ParsePrivateKey(pem)
	if err != nil {
		return "", fmt.Errorf("host key %s: %w", path, err)
	}
	return gossh.FingerprintSHA256(signer.PublicKey()), nil
}

// HostKeyFingerprint is the host key's SHA256 fingerprint (for pinning).
func (s *Server) HostKeyFingerprint() string { return s.hostFP }

// Serve accepts connections on l until ctx ends, then shuts down: no new
// connections, every session told and closed, at most ShutdownGrace for
// what is in flight.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	lg := s.cfg.Log
	lg.Info("listening", "addr", l.Addr().String(), "host_key", s.hostFP, "people", s.access.count())
	go s.reloadLoop(ctx)
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(l) }()
	select {
	case err := <-errc:
		if errors.Is(err, ssh.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	s.closing.Store(true)
	lg.Info("shutting down", "sessions", len(s.list()))
	for _, ss := range s.list() {
		ss.endedBy(ReasonShutdown)
		fmt.Fprint(ss.sess.Stderr(), "\r\napprove-tui: the server is shutting down\r\n")
		ss.sess.Close()
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
	defer cancel()
	// Each session's handler audits its end as it returns: wait for them,
	// within the grace, and audit here the end of any still running, so
	// that every session ended by the shutdown is in the audit log before
	// the caller closes the store.
	s.waitSessions(sctx)
	for _, ss := range s.list() {
		s.finish(ss, actorOf(ss.person))
	}
	if err := s.srv.Shutdown(sctx); err != nil && !errors.Is(err, ssh.ErrServerClosed) {
		s.srv.Close()
	}
	return nil
}

// ReasonShutdown is the reason recorded with the end of a session the
// server's shutdown ended.
const ReasonShutdown = "server shutdown"

// waitSessions waits until no session is open, or ctx ends.
func (s *Server) waitSessions(ctx context.Context) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for len(s.list()) > 0 {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// connCallback enforces the login grace time: a connection that has not
// authenticated in time is closed. A connection that ended first (a
// refused key, a client that gave up) has nothing left to time out: its
// timer stops with it.
func (s *Server) connCallback(ctx ssh.Context, conn net.Conn) net.Conn {
	authed := &atomic.Bool{}
	ctx.SetValue(authedKey, authed)
	grace := time.AfterFunc(s.cfg.LoginGrace, func() {
		if authed.Load() || ctx.Err() != nil {
			return
		}
		s.cfg.Log.Warn("login grace time passed", "addr", conn.RemoteAddr().String())
		conn.Close()
	})
	// The server cancels a connection's context when the connection ends.
	context.AfterFunc(ctx, func() { grace.Stop() })
	return conn
}

// publicKey is the only authentication: a key of the access files.
func (s *Server) publicKey(ctx ssh.Context, key ssh.PublicKey) bool {
	addr := hostOf(ctx.RemoteAddr())
	fp := gossh.FingerprintSHA256(key)
	if s.backedOff(addr) {
		s.cfg.Log.Warn("authentication refused: too many failures from this address", "addr", addr, "key", fp)
		return false
	}
	p, ok := s.access.lookup(key)
	if !ok {
		s.fail(addr)
		s.cfg.Log.Warn("authentication refused: unknown key", "addr", addr, "key", fp)
		return false
	}
	ctx.SetValue(personKey, p)
	if a, ok := ctx.Value(authedKey).(*atomic.Bool); ok {
		a.Store(true)
	}
	s.cfg.Log.Info("authentication accepted", append([]any{"addr", addr}, who(p, "role", p.Role)...)...)
	return true
}

func hostOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return h
}

func (s *Server) fail(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.failures[addr]
	if f == nil || time.Since(f.since) > s.cfg.AuthBackoff {
		f = &failureCount{since: time.Now()}
		s.failures[addr] = f
	}
	f.n++
}

func (s *Server) backedOff(addr string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.failures[addr]
	return f != nil && f.n >= s.cfg.AuthFailures && time.Since(f.since) <= s.cfg.AuthBackoff
}

// who is the log's key-value pairs naming p (the key's comment is the
// key holder's text: sanitised), followed by more pairs.
func who(p Person, more ...any) []any {
	return append([]any{"name", model.Sanitize(p.Name, model.Line), "key", p.Fingerprint}, more...)
}

// deciding is a session's context for everything it runs: each decision
// made under it, by the console or by a command without a terminal, is
// logged when the store has made (or refused, or failed to make) it. The
// log observes the store's one decision path; it decides nothing.
func (s *Server) deciding(ctx context.Context, p Person) context.Context {
	return storage.WithDecisionObserver(ctx, func(d storage.Decision) {
		kv := who(p, "action", d.Event, "id", model.Sanitize(d.ID, model.Line), "outcome", d.Outcome)
		switch d.Outcome {
		case storage.OutcomeOK:
			s.cfg.Log.Info("decision", kv...)
		case storage.OutcomeRefused:
			// The code only: a refusal's message may quote the proposal.
			s.cfg.Log.Warn("decision", append(kv, "reason", d.Reason)...)
		default:
			s.cfg.Log.Error("decision", append(kv, "reason", d.Reason, "err", model.Sanitize(d.Err.Error(), model.Line))...)
		}
		if s.cfg.OnDecision != nil {
			s.cfg.OnDecision(d)
		}
	})
}

// actorOf is who a session decides as: NAME (SHA256:…) via ssh, read-only
// for a watcher. Its Key is the fingerprint of the key the server verified,
// and its Person the name the access file gives that key (its comment, the
// text before any @: "alice@laptop" is alice; a key without a comment is
// its fingerprint): set here, from what the server verified, and never
// read back from the name.
func actorOf(p Person) model.Actor {
	person := policy.Person(p.Name)
	if person == "" {
		person = p.Fingerprint
	}
	return model.Actor{Surface: model.SurfaceSSH, Name: p.Name + " (" + p.Fingerprint + ")", ReadOnly: p.Role != RoleApprover,
		Person: person, Key: p.Fingerprint}
}

// gate runs around every session: limits, the session's audit events and
// logs, and the subcommands of sessions without a terminal.
func (s *Server) gate(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		p, ok := sess.Context().Value(personKey).(Person)
		if !ok || s.closing.Load() {
			sess.Exit(1)
			return
		}
		if why := s.admit(p); why != "" {
			fmt.Fprintf(sess.Stderr(), "approve-tui: %s\r\n", why)
			s.cfg.Log.Warn("session refused", who(p, "why", why)...)
			sess.Exit(1)
			return
		}
		ss := &session{person: p, sess: sess, start: time.Now()}
		s.add(ss)
		defer s.remove(ss)
		actor := actorOf(p)
		_, _, pty := sess.Pty()
		detail := map[string]any{"addr": hostOf(sess.RemoteAddr()), "role": string(p.Role), "pty": pty}
		s.audit(actor, "start", detail)
		kv := who(p, "role", p.Role, "pty", pty)
		if id, _, _ := openOf(sess); pty && id != "" {
			kv = append(kv, "open", model.Sanitize(id, model.Line))
		}
		s.cfg.Log.Info("session start", kv...)
		defer s.finish(ss, actor)
		if !pty {
			sess.Exit(s.command(sess, p, actor))
			return
		}
		if _, isOpen, why := openOf(sess); isOpen && why != "" {
			fmt.Fprintf(sess.Stderr(), "approve-tui: %s\r\n", why)
			sess.Exit(exitUsage)
			return
		}
		next(sess)
		if m, ok := sess.Context().Value(modelKey).(*tui.Model); ok {
			m.Close() // its watcher and presence row
		}
	}
}

func (s *Server) audit(actor model.Actor, what string, detail map[string]any) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.cfg.Store.RecordSession(ctx, actor, what, detail); err != nil {
		s.cfg.Log.Error("could not record the session in the audit log", "err", err)
	}
}

// admit applies the session limits.
func (s *Server) admit(p Person) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sessions) >= s.cfg.MaxSessions {
		return fmt.Sprintf("the server has its maximum of %d sessions", s.cfg.MaxSessions)
	}
	n := 0
	for ss := range s.sessions {
		if ss.person.Fingerprint == p.Fingerprint {
			n++
		}
	}
	if n >= s.cfg.MaxSessionsPerKey {
		return fmt.Sprintf("your key has its maximum of %d sessions", s.cfg.MaxSessionsPerKey)
	}
	return ""
}

func (s *Server) add(ss *session) {
	s.mu.Lock()
	s.sessions[ss] = struct{}{}
	s.countSessionsLocked()
	s.mu.Unlock()
}

func (s *Server) remove(ss *session) {
	s.mu.Lock()
	delete(s.sessions, ss)
	s.countSessionsLocked()
	s.mu.Unlock()
}

// countSessionsLocked tells OnSessions the count, under s.mu so that the
// counts arrive in order.
func (s *Server) countSessionsLocked() {
	if s.cfg.OnSessions != nil {
		s.cfg.OnSessions(len(s.sessions))
	}
}

func (s *Server) list() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*session, 0, len(s.sessions))
	for ss := range s.sessions {
		out = append(out, ss)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

// reloadLoop re-reads the access files when they change; a session whose
// key is gone, or whose role changed, ends at once (reconnecting gives the
// new role).
func (s *Server) reloadLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.ReloadEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		changed, err := s.access.reloadIfChanged()
		if err != nil {
			s.cfg.Log.Error("access file not reloaded (the previous keys stay in force)", "err", err)
		}
		if !changed {
			continue
		}
		s.cfg.Log.Info("access files reloaded", "people", s.access.count())
		for _, ss := range s.list() {
			now, ok := s.access.byFingerprint(ss.person.Fingerprint)
			switch {
			case !ok:
				s.end(ss, "your key was removed from the access files")
			case now.Role != ss.person.Role:
				s.end(ss, fmt.Sprintf("your role changed to %s: reconnect", now.Role))
			}
		}
	}
}

func (s *Server) end(ss *session, why string) {
	ss.endedBy(why)
	s.cfg.Log.Warn("session ended", who(ss.person, "why", why)...)
	fmt.Fprintf(ss.sess.Stderr(), "\r\napprove-tui: %s\r\n", why)
	ss.sess.Close()
}

// program is the console for a PTY session: the session's own renderer
// (its terminal's colour profile), the session's actor.
func (s *Server) program(sess ssh.Session) *tea.Program {
	p, _ := sess.Context().Value(personKey).(Person)
	actor := actorOf(p)
	label := fmt.Sprintf("ssh: %s (%s)", p.Name, p.Role)
	m := tui.New(tui.Options{
		Store: s.cfg.Store, Actor: actor, Name: p.Name, Renderer: sessionRenderer(sess), Context: s.deciding(sess.Context(), p), Label: label,
		Follow: followOf(sess), Open: openID(sess), Bell: s.cfg.Bell, Signing: sessionSigning(sess, s.cfg.PolicyMemory),
	})
	// Closed by gate once the program has ended (not while it runs); that
	// also restores the client's terminal.
	sess.Context().SetValue(modelKey, m)
	// The console writes its own frames to the session, each as soon as
	// it changed (tui.Model.UseScreen): Bubble Tea's renderer would wake 60
	// times a second in every session for as long as it is open. The
	// session's size comes from the middleware (tea.WindowSizeMsg).
	m.UseScreen(sess)
	// A signal to the server is the server's to handle (Serve ends every
	// session, saying why): a program of its own per session would quit
	// on SIGTERM first, and its session's end would read as the person's.
	return tea.NewProgram(m, append(bm.MakeOptions(sess), tea.WithoutRenderer(), tea.WithoutSignalHandler())...)
}

// noAgent is what a session that forwarded no agent is told when the
// store requires signatures.
const noAgent = "connect with ssh -A so your key can sign: this session forwarded no ssh-agent, and every approval here is signed with the approver's own key"

// sessionSigning is where a session's decisions get their signatures: the
// client's forwarded agent (ssh -A), reached over the session's own
// connection, one channel per signature. The private key stays on the
// client's machine; the server's own agent and environment play no part.
func sessionSigning(sess ssh.Session, memory string) tui.Signing {
	return tui.Signing{Missing: noAgent, Agent: func() (agent.Agent, io.Closer, error) { return forwardedAgent(sess) }, PolicyMemory: memory}
}

// agentChannel is the channel type OpenSSH forwards its agent on.
const agentChannel = "auth-agent@openssh.com"

// exitUsage is the CLI's usage exit code.
const exitUsage = 2

// followOf reads "follow NAME" from an interactive session's command
// (ssh -t host follow alice): the console starts following NAME.
func followOf(sess ssh.Session) string {
	if c, err := commandOf(sess); err == nil && len(c) == 2 && c[0] == "follow" {
		return c[1]
	}
	return ""
}

// openOf reads "open ID" from a session's command (ssh -t host open ID, the
// form a page gives): the console starts on that proposal. isOpen says
// the command is open; why, when not "", is what is wrong with it (no id,
// or words after it). "open -- ID" is accepted too, as the CLI writes an
// id that starts with -. The id is the page's text: only ever compared.
func openOf(sess ssh.Session) (id string, isOpen bool, why string) {
	c, err := commandOf(sess)
	if err != nil || len(c) == 0 || c[0] != "open" {
		return "", false, ""
	}
	args := c[1:]
	if len(args) == 2 && args[0] == "--" {
		args = args[1:]
	}
	switch {
	case len(args) == 0 || strings.TrimSpace(args[0]) == "":
		return "", true, "open needs the approval id of a proposal: ssh -t HOST open ID"
	case len(args) > 1:
		return "", true, fmt.Sprintf("open takes one approval id, and was given %d words: ssh -t HOST open ID", len(args))
	}
	return args[0], true, ""
}

// openID is the proposal an interactive session opens on ("" for none).
func openID(sess ssh.Session) string {
	if id, _, why := openOf(sess); why == "" {
		return id
	}
	return ""
}

// commandOf is a session's command in words. ssh sends a remote command as
// one string (its arguments joined by spaces, their quotes removed by the
// client's shell); the server splits it as a POSIX shell would (quotes
// group words, a backslash escapes), and an unclosed quote or a trailing
// backslash is an error here, not a guess at what was meant.
func commandOf(sess ssh.Session) ([]string, error) {
	return shlex.Split(sess.RawCommand(), true)
}

// sessionRenderer is the session's own renderer: the colour profile its
// client's environment gives (TERM from the PTY request, COLORTERM and
// NO_COLOR when the client sends them), the background COLORFGBG gives
// when the client sends it, else dark. It asks the terminal nothing: a
// client that does not answer a query (some terminals, scripts) would
// otherwise leave the console waiting on the session's input before its
// first frame, and a late answer would arrive as keys.
func sessionRenderer(sess ssh.Session) *lipgloss.Renderer {
	pty, _, _ := sess.Pty()
	env := sessionEnv(append(sess.Environ(), "TERM="+pty.Term))
	r := lipgloss.NewRenderer(sess, termenv.WithEnvironment(env), termenv.WithTTY(pty.Term != "" && pty.Term != "dumb"))
	dark, ok := termbg.FromEnv(env.Getenv)
	r.SetHasDarkBackground(dark || !ok)
	return r
}

// sessionEnv is a session's environment for termenv.
type sessionEnv []string

func (e sessionEnv) Environ() []string { return e }

func (e sessionEnv) Getenv(k string) string {
	v := ""
	for _, kv := range e {
		if name, val, ok := strings.Cut(kv, "="); ok && name == k {
			v = val // the last one wins, as TERM from the PTY request
		}
	}
	return v
}

// Subcommands a session without a terminal may run: reading, and deny for
// approvers. Approve needs the console's typed-id gate.
var readCommands = map[string]bool{"list": true, "show": true, "audit": true, "lockouts": true, "policy": true}

// offered is what a session without a terminal may run, as its errors say.
const offered = `list, show ID, audit, lockouts, policy show, policy explain ID, deny ID [--reason "WHY"]`

// noTerminal says that the console needs a terminal, and how to ask for
// one (connect).
func noTerminal(connect string) string {
	return "approve-tui: the console needs a terminal, and this session has none (ssh asks for one only when its own input is a terminal): " +
		"connect with " + connect + ", or run one of: " + offered
}

// policyReadOnly reports whether a policy command only reads: policy show,
// or policy explain (whose --file would read a file on the server: not
// offered).
func policyReadOnly(args []string) bool {
	sub := ""
	for i, a := range args {
		if a == "policy" {
			for _, b := range args[i+1:] {
				if !strings.HasPrefix(b, "-") {
					sub = b
					break
				}
			}
			break
		}
	}
	for _, a := range args {
		if a == "--file" || strings.HasPrefix(a, "--file=") {
			return false
		}
	}
	return sub == "show" || sub == "explain" || sub == "" && (slices.Contains(args, "--help") || slices.Contains(args, "-h"))
}

func (s *Server) command(sess ssh.Session, p Person, actor model.Actor) int {
	out, errw := sess, sess.Stderr()
	args, err := commandOf(sess)
	if err != nil {
		fmt.Fprintf(errw, "approve-tui: the command cannot be split into words (%s): ssh sends it as one string, which the server splits as a shell would; "+
			"close its quotes, and quote it whole so that they reach the server: ssh HOST 'deny ID --reason \"no piping to sh\"'\n", strings.ToLower(err.Error()))
		return exitUsage
	}
	if len(args) == 0 {
		fmt.Fprintln(errw, noTerminal("ssh -t HOST"))
		return exitUsage
	}
	if _, isOpen, why := openOf(sess); isOpen {
		if why == "" {
			why = noTerminal("ssh -t HOST open ID")
		} else {
			why = "approve-tui: " + why
		}
		fmt.Fprintln(errw, why)
		return exitUsage
	}
	for _, a := range args {
		if a == "--db" || strings.HasPrefix(a, "--db=") || a == "--read-only" || strings.HasPrefix(a, "--read-only=") {
			fmt.Fprintln(errw, "approve-tui: --db and --read-only are the server's to set")
			return exitUsage
		}
	}
	name := args[0]
	if strings.HasPrefix(name, "-") {
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				name = a
				break
			}
		}
	}
	switch {
	case name == "approve":
		fmt.Fprintln(errw, "approve-tui: approve is refused outside the console: it needs the typed-id gate. Connect with a terminal (ssh -t) and approve there")
		return exitUsage
	case name == "follow":
		fmt.Fprintln(errw, "approve-tui: follow needs a terminal, and ssh gives a command none unless asked: ssh -t HOST follow NAME")
		return exitUsage
	case name == "deny" || readCommands[name] || name == "help" || name == "--help":
	default:
		fmt.Fprintf(errw, "approve-tui: %q is not offered over ssh: %s\n", model.Sanitize(name, model.Line), offered)
		return exitUsage
	}
	if name == "lockouts" && len(args) > 1 {
		fmt.Fprintln(errw, "approve-tui: lockouts clear is not offered over ssh")
		return exitUsage
	}
	if name == "policy" && !policyReadOnly(args) {
		fmt.Fprintln(errw, "approve-tui: over ssh, policy offers show and explain; the policy is set on the host, by whoever may write the store: approve-tui policy set FILE")
		return exitUsage
	}
	ctx := s.deciding(sess.Context(), p)
	if name == "deny" && ssh.AgentRequested(sess) {
		// deny signs where the store requires signatures: with the
		// client's forwarded agent, never the server's.
		if ag, closer, err := forwardedAgent(sess); err == nil {
			defer closer.Close()
			ctx = context.WithValue(ctx, agentKey{}, ag)
		}
	}
	return s.cfg.Run(ctx, args, actor, sess, out, errw)
}

// agentKey keys the forwarded agent in a command's context.
type agentKey struct{}

// ForwardedAgent is the agent the client of the session running a command
// forwarded (ssh -A), for the command's decisions to sign with; nil when
// it forwarded none. Config.Run passes it on.
func ForwardedAgent(ctx context.Context) agent.Agent {
	ag, _ := ctx.Value(agentKey{}).(agent.Agent)
	return ag
}

// forwardedAgent opens a channel to the session's forwarded agent.
func forwardedAgent(sess ssh.Session) (agent.Agent, io.Closer, error) {
	if !ssh.AgentRequested(sess) {
		return nil, nil, errors.New(noAgent)
	}
	conn, ok := sess.Context().Value(ssh.ContextKeyConn).(gossh.Conn)
	if !ok {
		return nil, nil, errors.New("the session's connection is gone")
	}
	ch, reqs, err := conn.OpenChannel(agentChannel, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("the forwarded ssh-agent cannot be reached (connect with ssh -A): %v", err)
	}
	go gossh.DiscardRequests(reqs)
	return agent.NewClient(ch), ch, nil
}
