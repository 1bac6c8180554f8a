package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
)

// cfgSecret is a recognisable secret value: no output may contain it.
const cfgSecret = "s3cr3t-VALUE"

// runConfig runs approve-tui with env as its whole environment (secrets
// are read from the process's: t.Setenv them).
func runConfig(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	code, out, errs := hdocRun(t, env, args...)
	if strings.Contains(out+errs, cfgSecret) {
		t.Fatalf("%v: a secret's value is in the output:\n%s%s", args, out, errs)
	}
	return code, out, errs
}

func writeConfig(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// setExampleSecrets sets the example's environment variables, each holding
// the recognisable value.
func setExampleSecrets(t *testing.T) {
	for _, k := range []string{"NTFY_TOKEN", "SLACK_WEBHOOK_URL", "PD_ROUTING_KEY", "APPROVE_TUI_WEBHOOK_SECRET"} {
		t.Setenv(k, cfgSecret+"-"+k)
	}
}

// lineOf is the line number of the first line of s that starts with
// prefix.
func lineOf(t *testing.T, s, prefix string) int {
	t.Helper()
	for i, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	t.Fatalf("no line starts with %q", prefix)
	return 0
}

// config example prints a file that config check passes once its
// environment variables are set, and says in words what it does.
func TestConfigExamplePassesCheck(t *testing.T) {
	code, example, stderr := runConfig(t, nil, "config", "example")
	if code != 0 || example != config.Example || stderr != "" {
		t.Fatalf("config example: %d %q", code, stderr)
	}
	p := writeConfig(t, example)
	setExampleSecrets(t)
	code, out, stderr := runConfig(t, nil, "config", "check", "--config", p)
	if code != 0 || stderr != "" {
		t.Fatalf("config check: exit %d\n%s%s", code, out, stderr)
	}
	r1 := lineOf(t, example, "  - match: {risk: high")
	r2 := lineOf(t, example, "  - match: {risk: medium")
	for _, want := range []string{
		"config " + p + "\n",
		"channels (5):\n",
		"  push (line " + strconv.Itoa(lineOf(t, example, "  push:")) + "): ntfy, to https://ntfy.example/approvals, token $NTFY_TOKEN (set, 23 characters), with the command, timeout 10s\n",
		"  chat (line " + strconv.Itoa(lineOf(t, example, "  chat:")) + "): slack, url $SLACK_WEBHOOK_URL (set, 30 characters) → (not a URL), without the command, timeout 10s\n",
		"  desk (line " + strconv.Itoa(lineOf(t, example, "  desk:")) + "): exec, runs notify-send approve-tui, with the command, timeout 10s\n",
		"routes (2):\n",
		"  route 1 (line " + strconv.Itoa(r1) + "): risk ≥ high, session agent:prod:* → 0s push, hook; 5m pager; reminder 2m before expiry\n",
		"  route 2 (line " + strconv.Itoa(r2) + "): risk ≥ medium, requester ops-* → 0s desk; 10m chat\n",
		"open hint: ssh -t -p 2222 approvals.example open {id}\n",
		"ok\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config check lacks %q:\n%s", want, out)
		}
	}

	// --json: the same, as one object.
	code, out, _ = runConfig(t, nil, "--json", "config", "check", "--config", p)
	var v struct {
		Path     string
		Found    bool
		OK       bool
		Problems []any
		Channels []struct {
			Name    string
			Type    string
			Secrets []struct {
				Role, Env string
				OK        bool
				Length    int
			}
		}
		Routes []struct {
			Line  int
			Risk  string
			Steps []struct {
				After  string
				Notify []string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 {
		t.Fatalf("--json: %d %v\n%s", code, err, out)
	}
	if v.Path != p || !v.Found || !v.OK || len(v.Problems) != 0 || len(v.Channels) != 5 || len(v.Routes) != 2 ||
		v.Routes[0].Line != r1 || v.Routes[0].Steps[1].After != "5m" || !slices.Equal(v.Routes[0].Steps[0].Notify, []string{"push", "hook"}) {
		t.Fatalf("--json: %+v", v)
	}
	push := v.Channels[4]
	if push.Name != "push" || len(push.Secrets) != 1 || !push.Secrets[0].OK || push.Secrets[0].Env != "NTFY_TOKEN" || push.Secrets[0].Length != 23 {
		t.Errorf("--json push: %+v", push)
	}
}

// A file with problems: every one as FILE:LINE:COL: on stderr, exit 1,
// nothing on stdout; --json lists them; a secret written in the file
// (Slack's URL) is refused without being quoted.
func TestConfigCheckBrokenFile(t *testing.T) {
	p := writeConfig(t, `channels:
  chat: {type: slack, url: "https://hooks.slack.com/services/`+cfgSecret+`"}
  push: {type: ntfy, url: "https://ntfy.example/t"}
routes:
  - match: {risk: critical}
    steps:
      - {after: 5m, notify: [push]}
      - {after: 1m, notify: [pager]}
`)
	code, out, stderr := runConfig(t, nil, "config", "check", "--config", p)
	want := p + `:2:3: channel chat (slack) needs its incoming-webhook URL, a secret: url_env or url_file
` + p + `:2:23: channel chat (slack): url: a Slack webhook URL is a secret, never written in the file; want url_env (an environment variable) or url_file (a file) that holds it
` + p + `:5:19: route 1: match: risk: "critical" is not a risk; want low, medium or high (it takes that risk and above)
` + p + `:8:17: route 1, step 2: after 1m is not later than the step before (5m); want the steps in increasing after
` + p + `:8:30: route 1, step 2: notify: no channel "pager"; want one of the channels defined: chat, push
approve-tui: ` + p + `: 5 problems
`
	if code != ExitError || out != "" || stderr != want {
		t.Fatalf("config check: exit %d\nstdout %q\nstderr:\n%s\nwant:\n%s", code, out, stderr, want)
	}
	code, out, stderr = runConfig(t, nil, "--json", "config", "check", "--config", p)
	var v struct {
		OK       bool
		Found    bool
		Problems []struct {
			Line, Column int
			Message      string
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != ExitError || stderr != "" {
		t.Fatalf("--json: %d %v %q\n%s", code, err, stderr, out)
	}
	if v.OK || !v.Found || len(v.Problems) != 5 || v.Problems[4].Line != 8 || v.Problems[4].Column != 30 ||
		!strings.HasPrefix(v.Problems[4].Message, `route 1, step 2: notify: no channel "pager"`) {
		t.Fatalf("--json: %+v", v)
	}
}

// Secrets are resolved: one unset is a problem at its key (exit 1), and
// so is a secret file its group or others may read, or that another user
// owns, each with the fix; values are never printed.
func TestConfigCheckSecrets(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "ntfy-token")
	if err := os.WriteFile(tok, []byte(cfgSecret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tok, 0o644); err != nil {
		t.Fatal(err)
	}
	src := `channels:
  push: {type: ntfy, url: "https://ntfy.example/t", token_file: ntfy-token}
  hook: {type: webhook, url_env: AT_CFG_HOOK_URL, secret_env: AT_CFG_UNSET}
`
	p := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AT_CFG_HOOK_URL", "https://hooks.example/"+cfgSecret)
	code, out, stderr := runConfig(t, nil, "config", "check", "--config", p)
	wantErr := p + ":3:51: channel hook: signing secret (secret_env): AT_CFG_UNSET is not set\n" +
		p + ":2:53: channel push: token (token_file): secret file " + tok + " may be read or written by its group and others (mode 0644): refused; chmod 600 " + tok + "\n" +
		"approve-tui: " + p + ": 2 problems\n"
	if code != ExitError || stderr != wantErr {
		t.Fatalf("exit %d\n%s\nstderr:\n%s\nwant:\n%s", code, out, stderr, wantErr)
	}
	for _, want := range []string{
		"  hook (line 3): webhook, url $AT_CFG_HOOK_URL (set, 34 characters) → https://hooks.example/…redacted…, signing secret $AT_CFG_UNSET (not set), with the command, timeout 10s\n",
		"  push (line 2): ntfy, to https://ntfy.example/t, token file " + tok + " (may be read or written by its group and others (mode 0644): refused; chmod 600 " + tok + "), with the command, timeout 10s\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+stderr, cfgSecret) {
		t.Errorf("the secret is printed:\n%s%s", out, stderr)
	}
	// Kept as a secret should be and set, it passes.
	if err := os.Chmod(tok, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AT_CFG_UNSET", cfgSecret)
	code, out, stderr = runConfig(t, nil, "config", "check", "--config", p)
	if code != 0 || stderr != "" || !strings.HasSuffix(out, "ok\n") || !strings.Contains(out, "token file "+tok+" (readable, 12 characters)") {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	code, out, _ = runConfig(t, nil, "--json", "config", "check", "--config", p)
	if code != 0 || !strings.Contains(out, `"warnings": []`) {
		t.Fatalf("--json: %d %s", code, out)
	}
	if os.Geteuid() != 0 {
		t.Skip("another user's secret file needs root to chown it (tests run as root in CI)")
	}
	// Another user's file, mode 0600 (root reads it all the same): refused.
	if err := os.Chown(tok, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = runConfig(t, nil, "--json", "config", "check", "--config", p)
	if code != ExitError || !strings.Contains(out, `"problem": "secret file `+tok+` is owned by uid 65534`) ||
		!strings.Contains(out, "chown root "+tok+" && chmod 600 "+tok) || strings.Contains(out+stderr, cfgSecret) {
		t.Fatalf("another user's secret file: exit %d\n%s%s", code, out, stderr)
	}
}

// Which file: --config, else $APPROVE_TUI_CONFIG, else the default place,
// where no file means the defaults; a named file must exist.
func TestConfigCheckWhichFile(t *testing.T) {
	home := t.TempDir()
	def := filepath.Join(home, ".config", "approve-tui", "config.yaml")
	code, out, stderr := runConfig(t, map[string]string{"HOME": home}, "config", "check")
	if code != 0 || !strings.HasPrefix(out, "no config file at "+def+": the defaults apply") || stderr != "" {
		t.Fatalf("no file at the default place: %d %q %q", code, out, stderr)
	}
	code, out, _ = runConfig(t, map[string]string{"HOME": home}, "--json", "config", "check")
	if code != 0 || !strings.Contains(out, `"found": false, "ok": true`) {
		t.Fatalf("--json, no file: %d %s", code, out)
	}
	missing := filepath.Join(home, "missing.yaml")
	for _, tc := range []struct {
		env  map[string]string
		args []string
	}{
		{map[string]string{"HOME": home}, []string{"config", "check", "--config", missing}},
		{map[string]string{"HOME": home, "APPROVE_TUI_CONFIG": missing}, []string{"config", "check"}},
	} {
		code, out, stderr := runConfig(t, tc.env, tc.args...)
		if code != ExitError || out != "" || stderr != "approve-tui: no config file at "+missing+"\n" {
			t.Errorf("%v %v: %d %q %q", tc.env, tc.args, code, out, stderr)
		}
	}
	// The XDG place, and --config over $APPROVE_TUI_CONFIG.
	xdg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(xdg, "approve-tui"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "approve-tui", "config.yaml"), []byte("open_hint: \"xdg {id}\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runConfig(t, map[string]string{"HOME": home, "XDG_CONFIG_HOME": xdg}, "config", "check"); code != 0 || !strings.Contains(out, "open hint: xdg {id}") {
		t.Errorf("XDG: %d %s", code, out)
	}
	named := writeConfig(t, "open_hint: \"named {id}\"\n")
	if code, out, _ := runConfig(t, map[string]string{"APPROVE_TUI_CONFIG": missing}, "config", "check", "--config", named); code != 0 || !strings.Contains(out, "open hint: named {id}") {
		t.Errorf("--config over the env: %d %s", code, out)
	}
	// Usage.
	for _, args := range [][]string{{"config", "check", "extra"}, {"config", "check", "--bogus"}, {"config", "example", "x"}} {
		if code, _, _ := runConfig(t, nil, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// Strings from the file are sanitised before they are printed.
func TestConfigCheckSanitises(t *testing.T) {
	p := writeConfig(t, `channels:
  desk: {type: exec, command: ["\e[2J", "\u202e"]}
  push: {type: ntfy, url: "https://ntfy.example/t", token_file: "\e[31mtok"}
routes:
  - match: {session: "a\e]0;x\a*"}
    steps: [{after: 0s, notify: [desk]}]
open_hint: "open \e[31m{id}\u202e"
`)
	code, out, stderr := runConfig(t, nil, "config", "check", "--config", p)
	if code != ExitError || strings.ContainsAny(out+stderr, "\x1b\a\u202e") {
		t.Fatalf("not sanitised: %d\n%q\n%q", code, out, stderr)
	}
	for _, want := range []string{`runs '\x1b[2J' '<U+202E>'`, `session a\x1b]0;x\x07*`, `open hint: open \x1b[31m{id}<U+202E>`} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, `token (token_file): secret file `+filepath.Dir(p)+`/\x1b[31mtok cannot be read`) {
		t.Errorf("stderr: %q", stderr)
	}
	_, out, _ = runConfig(t, nil, "--json", "config", "check", "--config", p)
	if strings.Contains(out, `\u001b`) || strings.ContainsAny(out, "\x1b\u202e") || !strings.Contains(out, `"open_hint": "open \\x1b[31m{id}<U+202E>"`) {
		t.Errorf("--json not sanitised: %s", out)
	}
}

// The file's serve: and tier2: values apply to the flags not given on the
// command line, and a flag given wins.
func TestConfigFlags(t *testing.T) {
	p := writeConfig(t, "serve: {listen: \":2300\", max_sessions: 9, idle_timeout: 5m, approvers: keys/approvers}\ntier2: {phrase_limit: 1}\n")
	var out, errb bytes.Buffer
	a := newApp(strings.NewReader(""), &out, &errb)
	a.getenv = func(string) string { return "" }
	a.config = p
	var (
		listen, approvers string
		maxSessions       int
		idle              time.Duration
	)
	cmd := &cobra.Command{Use: "serve"}
	cmd.Flags().StringVar(&listen, "listen", ":2222", "")
	cmd.Flags().StringVar(&approvers, "approvers", "", "")
	cmd.Flags().IntVar(&maxSessions, "max-sessions", 64, "")
	cmd.Flags().DurationVar(&idle, "idle-timeout", 30*time.Minute, "")
	if err := cmd.Flags().Parse([]string{"--listen", ":9"}); err != nil {
		t.Fatal(err)
	}
	if err := a.configFlags(cmd, "serve"); err != nil {
		t.Fatal(err)
	}
	if listen != ":9" || maxSessions != 9 || idle != 5*time.Minute || approvers != filepath.Join(filepath.Dir(p), "keys", "approvers") {
		t.Fatalf("listen %q, max-sessions %d, idle-timeout %v, approvers %q", listen, maxSessions, idle, approvers)
	}
	if cmd.Flags().Changed("max-sessions") {
		t.Error("a value from the file marks its flag as given")
	}
	// A broken file stops the command, saying the first problem.
	a.config = writeConfig(t, "serve: {listen: 1}\nopen_hint: x\n")
	err := a.configFlags(cmd, "serve")
	if code, msg := exitCode(err, time.Now()); code != ExitError || msg != a.config+":1:17: serve: listen: want a string, got a number (and 1 more); see approve-tui config check" {
		t.Fatalf("broken file: %d %q", code, msg)
	}
	// Another surface's session (SSH) reads no file, and refuses --config.
	a.as = &model.Actor{}
	if _, err := a.loadConfig(); err == nil || !strings.Contains(err.Error(), "--config is not taken here") {
		t.Errorf("--config in another surface's session: %v", err)
	}
	a.config = ""
	if f, err := a.loadConfig(); err != nil || f.Path != "" {
		t.Errorf("another surface's session: %+v %v", f, err)
	}
}

// approve takes tier2: phrase_limit from the file unless --phrase-limit
// is given: with a limit of 1 the first wrong phrase blocks.
func TestConfigTier2PhraseLimit(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	py := hermesTier2(t, db)
	t.Setenv("APPROVE_TUI_CONFIG", writeConfig(t, "tier2: {phrase_limit: 1}\n"))
	run := func(want int, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Execute(append([]string{"--db", db}, args...), strings.NewReader(""), &out, &errb); code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, out.String(), errb.String())
		}
		return errb.String()
	}
	run(0, "init")
	py("upgrade")
	flagged := py("submit", "diag", "postgres", "1111")
	if e := run(5, "approve", "--phrase-limit", "3", "--phrase", "DIAG POSTGRES 2", "--", flagged); !strings.Contains(e, "wrong phrase 1 of 3") {
		t.Fatalf("--phrase-limit 3 given: %s", e)
	}
	filed := py("submit", "diag", "redis", "1111")
	if e := run(1, "approve", "--phrase", "DIAG REDIS 2", "--", filed); !strings.Contains(e, "blocked") {
		t.Fatalf("the file's phrase_limit 1: %s", e)
	}
}

// config's commands say their exit codes, in lines of at most 80 cells.
func TestConfigHelp(t *testing.T) {
	for cmd, want := range map[string][]int{"config check": {0, 1, 2}, "config example": {0, 2}, "config": nil} {
		help := helpOf(t, strings.Fields(cmd)...)
		if got := exitCodesIn(help); !slices.Equal(got, want) {
			t.Errorf("%s --help: exit codes %v, want %v\n%s", cmd, got, want, help)
		}
		for _, l := range strings.Split(help, "\n") {
			if cells(l) > 80 && !strings.HasPrefix(l, "  approve-tui ") && !strings.HasPrefix(l, "      --") {
				t.Errorf("%s --help: a line of %d cells: %q", cmd, cells(l), l)
			}
		}
	}
	if h := helpOf(t, "config", "check"); !strings.Contains(h, "--config file") {
		t.Errorf("config check --help lacks the global --config:\n%s", h)
	}
}

// config check says the park window run and the hooks use, and where it
// comes from; 0s is off.
func TestConfigCheckParkWindow(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.yaml")
	for _, tc := range []struct{ src, text, json string }{
		{"open_hint: x{id}\n", "park window: 1h (the default; --park-window on run and the hooks wins)\n", "1h"},
		{"open_hint: x{id}\npark:\n  window: 90m\n", "park window: 1h30m (line 3; --park-window on run and the hooks wins)\n", "1h30m"},
		{"park: {window: 0s}\n", "park window: off (line 1; --park-window on run and the hooks wins): a hook or run that stops waiting withdraws its proposal", "off"},
	} {
		if err := os.WriteFile(p, []byte(tc.src), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runConfig(t, nil, "config", "check", "--config", p)
		if code != 0 || !strings.Contains(out, tc.text) {
			t.Errorf("%q: config check: %d, want %q\n%s%s", tc.src, code, tc.text, out, stderr)
		}
		code, out, _ = runConfig(t, nil, "--json", "config", "check", "--config", p)
		var v struct {
			ParkWindow string `json:"park_window"`
		}
		if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || v.ParkWindow != tc.json {
			t.Errorf("%q: --json park_window %q (%v), want %q", tc.src, v.ParkWindow, err, tc.json)
		}
	}
}
