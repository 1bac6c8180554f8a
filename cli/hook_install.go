package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/spf13/cobra"
)

// The hook timeout install writes by default, and how much longer the
// agent's own hook timeout is: the hook answers before its agent kills it.
const (
	installHookTimeout = 900 * time.Second
	installAgentMargin = 30 * time.Second
)

// The matchers and events each agent's hook is registered for.
const (
	claudeMatcher = "Bash|PowerShell"
	codexMatcher  = "^Bash$"
	geminiMatcher = "run_shell_command"
	codexStatus   = "Waiting for approval in approve-tui"
	geminiName    = "approve-tui"
)

var installAgents = map[string]agent.Agent{
	string(agent.AgentClaudeCode): agent.AgentClaudeCode,
	string(agent.AgentCodex):      agent.AgentCodex,
	string(agent.AgentGemini):     agent.AgentGemini,
}

// hookInstallOpts are install's and doctor's flags.
type hookInstallOpts struct {
	scope   string
	dir     string
	binary  string
	timeout time.Duration
	unasked string // install's --unasked ("": not written)
}

func (o *hookInstallOpts) flags(cmd *cobra.Command, install bool) {
	cmd.Flags().StringVar(&o.scope, "scope", "user", "user (the agent's settings in your home) or project (the project's own settings)")
	cmd.Flags().StringVar(&o.dir, "dir", "", "the project's root for --scope project, and the folder whose trust is checked (default: the current directory)")
	if install {
		cmd.Flags().StringVar(&o.binary, "binary", "", "the approve-tui the agent runs, an absolute path (default: this one)")
		cmd.Flags().DurationVar(&o.timeout, "timeout", installHookTimeout, "how long the hook waits for a decision; the agent's hook timeout is set 30s longer")
		cmd.Flags().StringVar(&o.unasked, "unasked", "", "write the hook's --unasked: nothing, read-only or low (default: none written; the hook then takes the configuration file's risk: unasked, else "+config.DefaultUnasked+")")
	}
}

// installTarget is where one agent's hooks go.
type installTarget struct {
	who      agent.Agent
	scope    string
	settings string // the settings file (Codex: hooks.json)
	project  string // the project's root (resolved), for --scope project
	home     string
	codex    string // Codex: CODEX_HOME as Codex resolves it
	dir      string // the folder whose trust matters (resolved)
}

func parseInstallAgent(args []string) (agent.Agent, error) {
	if len(args) != 1 {
		return "", usageErrorf("name one agent: claude-code, codex or gemini")
	}
	who, ok := installAgents[args[0]]
	if !ok {
		return "", usageErrorf("unknown agent %q: want claude-code, codex or gemini", line(args[0]))
	}
	return who, nil
}

func (a *app) installTarget(who agent.Agent, o hookInstallOpts) (*installTarget, error) {
	if o.scope != "user" && o.scope != "project" {
		return nil, usageErrorf("--scope %q: want user or project", line(o.scope))
	}
	home := a.getenv("HOME")
	if home == "" {
		return nil, exitf(ExitError, "HOME is not set: the agents' settings live under it")
	}
	dir := o.dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, exitf(ExitError, "the current directory: %v", err)
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, exitf(ExitError, "%s: %v", line(dir), err)
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	} else if o.scope == "project" {
		return nil, exitf(ExitError, "--dir %s: %v", line(dir), err)
	}
	t := &installTarget{who: who, scope: o.scope, home: home, dir: dir}
	if o.scope == "project" {
		t.project = dir
	}
	switch who {
	case agent.AgentClaudeCode:
		base := filepath.Join(home, ".claude")
		if d := a.getenv("CLAUDE_CONFIG_DIR"); d != "" {
			base = d
		}
		if t.project != "" {
			base = filepath.Join(t.project, ".claude")
		}
		t.settings = filepath.Join(base, "settings.json")
	case agent.AgentCodex:
		// Codex canonicalises $CODEX_HOME; ~/.codex it takes as $HOME says.
		t.codex = filepath.Join(home, ".codex")
		if d := a.getenv("CODEX_HOME"); d != "" {
			r, err := filepath.EvalSymlinks(d)
			if err != nil {
				return nil, exitf(ExitError, "$CODEX_HOME %s: %v", line(d), err)
			}
			t.codex, _ = filepath.Abs(r)
		}
		base := t.codex
		if t.project != "" {
			base = filepath.Join(t.project, ".codex")
		}
		t.settings = filepath.Join(base, "hooks.json")
	case agent.AgentGemini:
		gh := home
		if d := a.getenv("GEMINI_CLI_HOME"); d != "" {
			gh = d
		}
		base := filepath.Join(gh, ".gemini")
		if t.project != "" {
			base = filepath.Join(t.project, ".gemini")
		}
		t.settings = filepath.Join(base, "settings.json")
	}
	return t, nil
}

// geminiDir is Gemini CLI's own folder (settings, trustedFolders.json).
func (a *app) geminiDir(home string) string {
	if d := a.getenv("GEMINI_CLI_HOME"); d != "" {
		home = d
	}
	return filepath.Join(home, ".gemini")
}

// hookCommandLine is the command an agent runs: this binary by absolute
// path, the store on the command line (an agent may strip the environment:
// Gemini CLI does in CI), and the wait when given.
func hookCommandLine(bin string, who agent.Agent, db string, timeout time.Duration, unasked string) string {
	argv := []string{bin, "hook", string(who), "--db", db}
	if timeout > 0 {
		argv = append(argv, "--timeout", strconv.FormatInt(int64(timeout/time.Second), 10)+"s")
	}
	if unasked != "" {
		argv = append(argv, "--unasked", unasked)
	}
	return agent.QuoteArgs(argv)
}

func handler(kv ...any) *agent.JSONObject {
	o := agent.NewJSONObject()
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// installGroups are the groups install writes for who.
func installGroups(who agent.Agent, bin, db string, timeout time.Duration, unasked string) []agent.HookGroup {
	pre := hookCommandLine(bin, who, db, timeout, unasked)
	post := hookCommandLine(bin, who, db, 0, "")
	agentSecs := json.Number(strconv.FormatInt(int64((timeout+installAgentMargin)/time.Second), 10))
	switch who {
	case agent.AgentClaudeCode:
		return []agent.HookGroup{
			{Event: "PreToolUse", Matcher: claudeMatcher, Handlers: []*agent.JSONObject{
				handler("type", "command", "command", pre, "timeout", agentSecs, "onFailure", "block")}},
			{Event: "PostToolUse", Matcher: claudeMatcher, Handlers: []*agent.JSONObject{handler("type", "command", "command", post)}},
			{Event: "PostToolUseFailure", Matcher: claudeMatcher, Handlers: []*agent.JSONObject{handler("type", "command", "command", post)}},
		}
	case agent.AgentCodex:
		return []agent.HookGroup{
			{Event: "PreToolUse", Matcher: codexMatcher, Handlers: []*agent.JSONObject{
				handler("type", "command", "command", pre, "timeout", agentSecs, "statusMessage", codexStatus)}},
			{Event: "PostToolUse", Matcher: codexMatcher, Handlers: []*agent.JSONObject{handler("type", "command", "command", post)}},
		}
	default:
		ms := json.Number(strconv.FormatInt(int64((timeout+installAgentMargin)/time.Millisecond), 10))
		return []agent.HookGroup{
			{Event: "BeforeTool", Matcher: geminiMatcher, Handlers: []*agent.JSONObject{
				handler("type", "command", "name", geminiName, "command", pre, "timeout", ms)}},
			// AfterTool: a call Gemini CLI ran although its BeforeTool
			// hook did not allow it (killed at its timeout) is recorded.
			{Event: "AfterTool", Matcher: geminiMatcher, Handlers: []*agent.JSONObject{
				handler("type", "command", "name", geminiName, "command", post)}},
		}
	}
}

// codexEvent is Codex's snake_case name of an event.
func codexEvent(ev string) string {
	var b strings.Builder
	for i, r := range ev {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codexHashes are the keys and trust hashes of who's handlers in hooks.json
// (at path) as Codex would compute them.
func codexHashes(settings *agent.JSONObject, path string) (map[string]string, error) {
	out := map[string]string{}
	for _, h := range agent.FindHooks(settings, agent.AgentCodex) {
		ch, err := codexHandlerOf(h)
		if err != nil {
			return nil, err
		}
		out[agent.CodexHookKey(path, codexEvent(h.Event), h.Group, h.Handler)] = agent.CodexHookHash(ch)
	}
	return out, nil
}

func codexHandlerOf(h agent.FoundHook) (agent.CodexHandler, error) {
	ch := agent.CodexHandler{Event: codexEvent(h.Event), Matcher: h.Matcher, Command: h.Command}
	if v, ok := h.Fields.Get("timeout"); ok {
		n, isNum := v.(json.Number)
		t, err := strconv.Atoi(string(n))
		if !isNum || err != nil {
			return ch, fmt.Errorf("hooks.%s: timeout %v is not a whole number of seconds", h.Event, v)
		}
		ch.Timeout = t
		if t == 0 {
			ch.Timeout = -1 // Codex raises 0 to 1
		}
	}
	if v, ok := h.Fields.Get("statusMessage"); ok {
		s, _ := v.(string)
		ch.StatusMessage = s
	}
	if v, ok := h.Fields.Get("commandWindows"); ok && v != nil {
		return ch, fmt.Errorf("hooks.%s: a commandWindows approve-tui did not write", h.Event)
	}
	if v, ok := h.Fields.Get("async"); ok && v != false {
		return ch, fmt.Errorf("hooks.%s: async hooks cannot gate a call", h.Event)
	}
	return ch, nil
}

// maxSettingsSize bounds a settings file install and doctor read: a
// project's files are the agent's to write, and a link to /dev/zero or a
// FIFO must not exhaust memory or hang the command.
const maxSettingsSize = 8 << 20

// readSettings reads a settings file: (nil, false, nil) when missing. A
// file that cannot be read or parsed is an error, and is never written;
// so is anything but a regular file (a FIFO, a device), and a file over
// maxSettingsSize. Opening does not block (a FIFO with no writer).
func readSettings(path string) ([]byte, bool, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if fi.Size() > maxSettingsSize {
		return nil, false, fmt.Errorf("%d bytes, over the %d a settings file may have", fi.Size(), maxSettingsSize)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSettingsSize+1))
	if err != nil {
		return nil, false, err
	}
	if len(b) > maxSettingsSize {
		return nil, false, fmt.Errorf("over the %d bytes a settings file may have", maxSettingsSize)
	}
	return b, true, nil
}

// readAgentSettings reads and parses t's settings file (an empty object
// when it is missing), with the refusals install and uninstall share: a
// link in a project, a file that is not a regular one or is too large, one
// that does not parse (Gemini's comments included, which could not be
// kept). It reports whether the file exists.
func readAgentSettings(t *installTarget) (*agent.JSONObject, bool, error) {
	if t.project != "" {
		if p := projectLinkProblem(t.project, t.settings); p != "" {
			return nil, false, exitf(ExitError, "%s; nothing written", p)
		}
	}
	src, exists, err := readSettings(t.settings)
	if err != nil {
		return nil, false, exitf(ExitError, "%s: %v; nothing written", line(t.settings), line(err.Error()))
	}
	settings, err := agent.ParseJSONObject(src)
	if err != nil {
		if _, err2 := agent.ParseJSONObject(agent.StripJSONComments(src)); t.who == agent.AgentGemini && err2 == nil {
			return nil, false, exitf(ExitError, "%s holds comments, which Gemini CLI allows but approve-tui could not keep; nothing written: remove them, or edit the hook by hand", line(t.settings))
		}
		return nil, false, exitf(ExitError, "%s is %v; nothing written: fix it (the agent cannot read it either)", line(t.settings), line(err.Error()))
	}
	return settings, exists, nil
}

// codexMovedTrust: Codex keys trust by position, so another hook that moved
// in the hooks file at abs keeps the trust it had (added to hashes under its
// new key) when it is the same hook it was trusted as. It returns the
// commands of the moved hooks that were trusted and lose it.
func codexMovedTrust(cfg *agent.CodexConfig, abs string, moves []agent.HookMove, hashes map[string]string) []string {
	var lost []string
	for _, m := range moves {
		oldKey := agent.CodexHookKey(abs, codexEvent(m.Event), m.OldGroup, m.OldHandler)
		st, ok := cfg.HookState(oldKey)
		if !ok || st.TrustedHash == "" {
			continue
		}
		c, _ := m.Fields.Get("command")
		cmdStr, _ := c.(string)
		ch, err := codexHandlerOf(agent.FoundHook{Event: m.Event, Matcher: m.Matcher, Fields: m.Fields, Command: cmdStr})
		if err == nil && agent.CodexHookHash(ch) == st.TrustedHash {
			hashes[agent.CodexHookKey(abs, codexEvent(m.Event), m.NewGroup, m.NewHandler)] = st.TrustedHash
		} else {
			lost = append(lost, line(cmdStr))
		}
	}
	return lost
}

// projectLinkProblem: a project's files are the agent's to write, so
// install --scope project writes no file through a symbolic link under
// the project (it could point at any file of the user's). It names the
// first link on the way from root to path ("" when there is none).
func projectLinkProblem(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return line(path) + " is not under the project " + line(root)
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return "" // missing from here on: created as plain folders and file
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			to, _ := os.Readlink(cur)
			return line(cur) + " is a symbolic link (to " + line(to) + "): hook install and uninstall --scope project write nothing through a link in a project, which could point at any of your files; replace it by a plain folder or file"
		}
	}
	return ""
}

// writeAtomic writes data to path (through a symlink to its target when
// follow) by a temporary file in the same folder and a rename, keeping the
// file's mode (new files: 0600, the folder made 0700). Unchanged content
// is not written; it reports whether it wrote.
func writeAtomic(path string, data []byte, follow bool) (bool, error) {
	if !follow {
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return false, errors.New("it became a symbolic link: nothing written through it")
		}
	} else if r, err := filepath.EvalSymlinks(path); err == nil {
		path = r
	}
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
		if p := notOurs(fi); p != "" {
			return false, errors.New(p)
		}
		if old, _, err := readSettings(path); err == nil && string(old) == string(data) {
			return false, nil
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".approve-tui-*")
	if err != nil {
		return false, err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return false, err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return false, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return false, err
	}
	if err := f.Close(); err != nil {
		return false, err
	}
	return true, os.Rename(tmp, path)
}

// notOurs says why install must not replace an existing file ("" when it
// may): a file made read-only, or another user's, was set so on purpose
// (a rename would replace it all the same, and make it ours).
func notOurs(fi fs.FileInfo) string {
	if fi.Mode().Perm()&0o200 == 0 {
		return "it is read-only (" + fi.Mode().Perm().String() + "): make it writable if it is to change"
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return "it belongs to user id " + strconv.Itoa(int(st.Uid)) + ", not to you: whoever owns it must change it"
	}
	return ""
}

// storeProblem says why the store at db is not ready for a hook ("" when
// it is): opened read-only, never created or migrated.
func storeProblem(ctx context.Context, db string, lock time.Duration) string {
	shown := db
	if storage.IsPostgresURL(db) {
		shown = storage.RedactURL(db)
	}
	initFix := "run " + agent.QuoteArgs([]string{"approve-tui", "init", "--db", shown}) + " first"
	if !storage.IsPostgresURL(db) {
		p := strings.TrimPrefix(strings.TrimPrefix(db, "sqlite://"), "sqlite:")
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return line(shown) + " does not exist: " + initFix
		}
	}
	s, err := storage.Open(ctx, db, storage.Options{ReadOnly: true, BusyTimeout: lock})
	if err != nil {
		msg := line(shown) + ": " + line(err.Error())
		if !strings.Contains(err.Error(), "approve-tui init") {
			msg += "; " + initFix
		}
		return msg
	}
	s.Close()
	if !storage.IsPostgresURL(db) {
		if p := storage.WriteProblem(db); p != "" {
			return line(shown) + ": " + line(p) + "; the hook could not record anything: fix its permissions"
		}
	}
	return ""
}

// installBinary is the absolute path of the approve-tui the hook runs.
func installBinary(flag string) (string, error) {
	bin := flag
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", exitf(ExitError, "cannot find this binary's path (%v): give --binary", err)
		}
		bin = exe
	}
	if !filepath.IsAbs(bin) {
		return "", usageErrorf("--binary %s: give an absolute path (the agent's PATH and directory are not this shell's)", line(bin))
	}
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	if filepath.Base(bin) != "approve-tui" {
		return "", usageErrorf("%s is not named approve-tui: give --binary with the path of an approve-tui (install and doctor find their entries by that name)", line(bin))
	}
	return bin, nil
}

// installDB is the store the hook uses: --db as the other commands resolve
// it, made absolute (the agent runs the hook in its own directory).
func (a *app) installDB() (string, error) {
	db := a.db
	if storage.IsPostgresURL(db) {
		return db, nil
	}
	p := strings.TrimPrefix(strings.TrimPrefix(db, "sqlite://"), "sqlite:")
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", exitf(ExitError, "--db %s: %v", line(db), err)
	}
	return abs, nil
}

func (a *app) hookInstallCmd() *cobra.Command {
	var o hookInstallOpts
	cmd := &cobra.Command{
		Use:   "install claude-code|codex|gemini [--scope user|project] [--db PATH] [--timeout D] [--unasked MODE]",
		Short: "Write an agent's settings so that its shell commands wait for approval in approve-tui",
		Long: `Register approve-tui's hook in an agent's settings, for every event the hook
handles, as that agent needs it:

  claude-code  ~/.claude/settings.json ($CLAUDE_CONFIG_DIR), or
               .claude/settings.json with --scope project: PreToolUse
               (timeout, "onFailure": "block"), PostToolUse and
               PostToolUseFailure, matcher Bash|PowerShell
  codex        ~/.codex/hooks.json ($CODEX_HOME), or .codex/hooks.json:
               PreToolUse and PostToolUse, matcher ^Bash$; and, in
               ~/.codex/config.toml, the trust Codex's /hooks review would
               store for each ([hooks.state."KEY"] trusted_hash): Codex runs
               no hook the user has not trusted. A project's .codex/ loads
               only in a project Codex trusts: install says when it is not,
               and never trusts a project itself
  gemini       ~/.gemini/settings.json, or .gemini/settings.json: BeforeTool
               (timeout in milliseconds) and AfterTool, matcher
               run_shell_command; and
               "hooksConfig": {"enabled": true} when unset. Gemini CLI runs
               hooks, user ones included, only in folders it trusts

--scope project writes into the project at --dir (default: the current
directory). The command written runs this approve-tui by its absolute path
(or --binary) with --db, the store as the other commands resolve it
(--db, $APPROVE_TUI_DB, ~/.hermes/state.db) made absolute, so that neither
the agent's PATH nor its environment matters. The store must exist
("approve-tui init" first): install refuses otherwise. The hook waits
--timeout (900s); the agent's hook timeout is set 30s longer. --unasked
nothing|read-only|low is written on the hook's command line when given
(what goes without asking; without it the hook takes the configuration
file's risk: unasked, else low).

Entries of approve-tui's hook for that agent (a command running
"approve-tui hook AGENT", by any path) are replaced in place; everything
else in the files is kept: other hooks, events and keys, in their order
(config.toml byte for byte but for the [hooks.state] tables of these hooks,
and of Codex hooks of yours that moved, which keep their trust). Running it
again gives the same files. A file that does not parse is left untouched,
and install fails. Then run "approve-tui hook doctor AGENT".
` + exitCodes(ExitOK, ExitError, ExitUsage, ExitUnavailable),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			who, err := parseInstallAgent(args)
			if err != nil {
				return err
			}
			if o.timeout < time.Second || o.timeout%time.Second != 0 {
				return usageErrorf("--timeout %v: want a whole number of seconds, at least 1s", o.timeout)
			}
			if o.unasked != "" && !slices.Contains(config.UnaskedModes, o.unasked) {
				return usageErrorf("--unasked %q: want one of %s", o.unasked, strings.Join(config.UnaskedModes, ", "))
			}
			return a.hookInstall(cmd.Context(), who, o)
		},
	}
	o.flags(cmd, true)
	return cmd
}

func (a *app) hookInstall(ctx context.Context, who agent.Agent, o hookInstallOpts) error {
	t, err := a.installTarget(who, o)
	if err != nil {
		return err
	}
	bin, err := installBinary(o.binary)
	if err != nil {
		return err
	}
	db, err := a.installDB()
	if err != nil {
		return err
	}
	if p := storeProblem(ctx, db, a.lockTimeout); p != "" {
		return exitf(ExitUnavailable, "the store is not ready, nothing written: %s", p)
	}

	settings, _, err := readAgentSettings(t)
	if err != nil {
		return err
	}
	moves, err := agent.MergeHookGroups(settings, who, installGroups(who, bin, db, o.timeout, o.unasked))
	if err != nil {
		return exitf(ExitError, "%s: %v; nothing written", line(t.settings), err)
	}
	var notes []string
	if storage.IsPostgresURL(db) && storage.RedactURL(db) != db {
		notes = append(notes, "the store's URL carries a password, now in "+line(t.settings)+" and on the hook's command line (visible to ps): prefer a password file (~/.pgpass or PGPASSFILE) and a URL without it")
	}
	if who == agent.AgentGemini {
		notes = append(notes, geminiSwitch(settings)...)
	}
	if v, _ := settings.Get("disableAllHooks"); who == agent.AgentClaudeCode && v == true {
		notes = append(notes, `"disableAllHooks": true in `+line(t.settings)+` turns every hook off, this one too: remove it (left as you wrote it)`)
	}
	out, err := agent.FormatJSON(settings)
	if err != nil {
		return exitf(ExitError, "%s: %v", line(t.settings), err)
	}

	// Codex: the trust, computed and checked before anything is written.
	var cfgPath string
	var cfgOut []byte
	if who == agent.AgentCodex {
		abs, err := filepath.Abs(t.settings)
		if err != nil {
			return exitf(ExitError, "%v", err)
		}
		hashes, err := codexHashes(settings, abs)
		if err != nil {
			return exitf(ExitError, "%s: %v; nothing written", line(t.settings), err)
		}
		cfgPath = filepath.Join(t.codex, "config.toml")
		csrc, _, err := readSettings(cfgPath)
		if err != nil {
			return exitf(ExitError, "%s: %v; nothing written", line(cfgPath), err)
		}
		cfg, err := agent.ParseCodexConfig(csrc)
		if err != nil {
			return exitf(ExitError, "%s is %v; nothing written: fix it (Codex cannot read it either)", line(cfgPath), err)
		}
		lost := codexMovedTrust(cfg, abs, moves, hashes)
		if len(lost) > 0 {
			notes = append(notes, "other hooks moved in "+line(t.settings)+", and Codex will ask to trust them again in /hooks: "+strings.Join(lost, "; "))
		}
		if cfgOut, err = cfg.SetHookTrust(hashes); err != nil {
			return exitf(ExitError, "%s: %v; nothing written", line(cfgPath), err)
		}
		if t.project != "" {
			if ok, level := cfg.ProjectTrusted(codexProjectRoots(t.project)...); !ok {
				what := "is not trusted"
				if level != "" {
					what = "has trust_level " + strconv.Quote(level)
				}
				notes = append(notes, fmt.Sprintf("Codex loads %s only in a trusted project, and %s %s: start codex there and trust it when asked, or add to %s:\n      [projects.%s]\n      trust_level = \"trusted\"",
					line(filepath.Join(t.project, ".codex")), line(codexProjectRoots(t.project)[0]), what, line(cfgPath), line(strconv.Quote(codexProjectRoots(t.project)[0]))))
			}
		}
		for k := range hashes {
			if st, ok := cfg.HookState(k); ok && st.HasEnabled && !st.Enabled && agentKeyOurs(settings, abs, k) {
				notes = append(notes, "[hooks.state."+line(strconv.Quote(k))+"] in "+line(cfgPath)+" says enabled = false: Codex skips that hook; enable it in /hooks (left as you set it)")
			}
		}
		if name, off := cfg.HooksFeatureOff(); off {
			notes = append(notes, name+" = false in "+line(cfgPath)+" turns every Codex hook off: remove it")
		}
		if n := codexInlineOurs(cfg); n > 0 {
			notes = append(notes, fmt.Sprintf("%s also has %d approve-tui hook(s) inline under [hooks]: remove them, or the hook runs twice", line(cfgPath), n))
		}
	}

	for _, p := range []string{t.settings, cfgPath} {
		if p == "" {
			continue
		}
		if fi, err := os.Stat(p); err == nil {
			if why := notOurs(fi); why != "" {
				return exitf(ExitError, "%s: %s; nothing written", line(p), why)
			}
		}
	}
	wrote, err := writeAtomic(t.settings, out, t.project == "")
	if err != nil {
		return exitf(ExitError, "writing %s: %v", line(t.settings), err)
	}
	a.printf("%s %s\n", verb(wrote), line(t.settings))
	if cfgPath != "" {
		w, err := writeAtomic(cfgPath, cfgOut, true)
		if err != nil {
			return exitf(ExitError, "writing %s: %v (the hooks are written but not trusted: trust them in Codex's /hooks)", line(cfgPath), err)
		}
		a.printf("%s %s (the hooks' trust)\n", verb(w), line(cfgPath))
	}
	a.printf("  hook: %s\n", line(hookCommandLine(bin, who, db, o.timeout, o.unasked)))
	if who == agent.AgentGemini {
		notes = append(notes, a.geminiTrustNote(t))
	}
	for _, n := range notes {
		if n != "" {
			a.printf("  to do: %s\n", n)
		}
	}
	a.printf("check it with: %s\n", line(doctorLine(who, o)))
	return nil
}

func verb(wrote bool) string {
	if wrote {
		return "wrote"
	}
	return "unchanged"
}

func doctorLine(who agent.Agent, o hookInstallOpts) string {
	argv := []string{"approve-tui", "hook", "doctor", string(who)}
	if o.scope == "project" {
		argv = append(argv, "--scope", "project")
		if o.dir != "" {
			argv = append(argv, "--dir", o.dir)
		}
	}
	return agent.QuoteArgs(argv)
}

// geminiSwitch turns Gemini CLI's hooks system on where it is unset, and
// says so when the user turned it off (left as is: other hooks would run).
func geminiSwitch(settings *agent.JSONObject) []string {
	hc, has := settings.Get("hooksConfig")
	obj, ok := hc.(*agent.JSONObject)
	if has && !ok {
		return []string{`"hooksConfig" is not an object: Gemini CLI ignores it; make it {"enabled": true}`}
	}
	if !has {
		obj = agent.NewJSONObject()
		settings.Set("hooksConfig", obj)
	}
	var notes []string
	switch v, has := obj.Get("enabled"); {
	case !has:
		obj.Set("enabled", true)
	case v != true:
		notes = append(notes, `"hooksConfig": {"enabled": false} turns every hook off, this one too: set it to true (left as you wrote it)`)
	}
	if geminiDisabled(obj) {
		notes = append(notes, `"hooksConfig.disabled" lists approve-tui: remove it from that list`)
	}
	return notes
}

// geminiDisabled: hooksConfig.disabled names the hook (by name or command).
func geminiDisabled(hc *agent.JSONObject) bool {
	v, _ := hc.Get("disabled")
	list, _ := v.([]any)
	for _, e := range list {
		if s, ok := e.(string); ok && (s == geminiName || agent.IsApproveTUIHook(s, agent.AgentGemini)) {
			return true
		}
	}
	return false
}

// codexProjectRoots are the folders whose [projects."DIR"] trust Codex
// reads for a project at dir: its git repository's root, then dir.
func codexProjectRoots(dir string) []string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if d == dir {
				return []string{dir}
			}
			return []string{d, dir}
		}
		up := filepath.Dir(d)
		if up == d {
			return []string{dir}
		}
		d = up
	}
}

// agentKeyOurs reports whether key names one of approve-tui's handlers in
// the hooks file at path.
func agentKeyOurs(settings *agent.JSONObject, path, key string) bool {
	for _, h := range agent.FindHooks(settings, agent.AgentCodex) {
		if agent.CodexHookKey(path, codexEvent(h.Event), h.Group, h.Handler) == key {
			return true
		}
	}
	return false
}

// codexInlineOurs counts approve-tui codex hooks inline in config.toml.
func codexInlineOurs(cfg *agent.CodexConfig) int {
	return cfg.InlineHooks(func(cmd string) bool { return agent.IsApproveTUIHook(cmd, agent.AgentCodex) })
}

// geminiTrustNote says whether Gemini CLI trusts the folder: it loads no
// hook at all, user ones included, in a folder it does not trust.
func (a *app) geminiTrustNote(t *installTarget) string {
	trusted, why := a.geminiFolderTrusted(t.home, t.dir)
	if trusted {
		return ""
	}
	return "Gemini CLI runs no hook (user hooks included) in a folder it does not trust, and " + why +
		": trust each folder you run gemini in (its own prompt, or /permissions trust), or run gemini --skip-trust (headless, gemini refuses to start in an untrusted folder)"
}
