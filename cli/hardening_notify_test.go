package cli

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// completionHostileIDs are ids another program may write into the store.
var completionHostileIDs = []string{
	"$(touch /tmp/pwned)", "`id`", "abc;id", "abc&&id", "abc|id", "abc\nid",
	"\x1b[31mred", "-rf", "--help", "'q'", `"q"`, "a b", "abc*", "abc>out", "ab\u202ecba",
}

// Completion offers plain ids only: a hostile id is never put on the
// command line by the shell.
func TestCompletionNeverOffersAHostileID(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	st, err := storage.Open(context.Background(), db, storage.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	ids := append([]string{"Plain_id-01"}, completionHostileIDs...)
	for _, id := range ids {
		p, _, err := risk.Propose(risk.Draft{ID: id, Command: "rm -rf build", SessionKey: "agent:x", TTL: time.Hour}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Submit(context.Background(), p, model.LocalActor(model.SurfaceCLI)); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	for _, args := range [][]string{{"__complete", "approve", ""}, {"__complete", "show", ""}, {"__complete", "audit", "--id", ""}, {"__complete", "approve", "$"}, {"__complete", "approve", "a"}} {
		code, out, stderr := run(t, db, false, "", args...)
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, stderr)
		}
		var offered []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if strings.HasPrefix(l, ":") || l == "" {
				continue
			}
			id, _, _ := strings.Cut(l, "\t")
			offered = append(offered, id)
		}
		for _, id := range offered {
			if !model.IsPlainID(id) {
				t.Errorf("%v offers %q", args, id)
			}
		}
		if args[len(args)-1] == "" && (len(offered) != 1 || offered[0] != "Plain_id-01") {
			t.Errorf("%v offers %q, want the plain id only", args, offered)
		}
		for _, bad := range []string{"$(", "`", "\x1b", ";id", "touch"} {
			if strings.Contains(out, bad) {
				t.Errorf("%v: the output holds %q:\n%q", args, bad, out)
			}
		}
	}
}

// config check never prints a secret-bearing URL part: an ntfy ?auth=
// written in the file, a Slack webhook URL from the environment.
func TestConfigCheckRedactsURLs(t *testing.T) {
	t.Setenv("AT_SLACK_URL", "https://hooks.slack.com/services/T0"+cfgSecret+"/B0X/"+cfgSecret)
	p := writeConfig(t, `channels:
  push: {type: ntfy, url: "https://ntfy.example/approvals?auth=`+cfgSecret+`"}
  chat: {type: slack, url_env: AT_SLACK_URL}
  pager: {type: pagerduty, routing_key_env: AT_SLACK_URL, events_url: "https://events.example/v2/enqueue?token=`+cfgSecret+`"}
`)
	// runConfig fails the test if the secret's value is in any output.
	code, out, stderr := runConfig(t, nil, "config", "check", "--config", p)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []string{
		"to https://ntfy.example/approvals?auth=…redacted…",
		"url $AT_SLACK_URL (set, ",
		"→ https://hooks.slack.com/services/…redacted…",
		"events to https://events.example/v2/enqueue?token=…redacted…",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config check lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runConfig(t, nil, "--json", "config", "check", "--config", p)
	if code != 0 || !strings.Contains(out, `"url": "https://ntfy.example/approvals?auth=…redacted…"`) || !strings.Contains(out, `"shown": "https://hooks.slack.com/services/…redacted…"`) {
		t.Fatalf("--json: %d %s", code, out)
	}
}

// A configuration file holding channels that others may write is refused
// by every command that loads it, naming the file, its mode and the fix.
func TestConfigWritableByOthersRefused(t *testing.T) {
	p := writeConfig(t, "channels:\n  desk: {type: exec, command: [touch, /tmp/x]}\nroutes:\n  - steps: [{after: 0s, notify: [desk]}]\n")
	if err := os.Chmod(p, 0o666); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("config file %s holds channels", p)
	for _, args := range [][]string{{"config", "check", "--config", p}, {"notify", "--once", "--config", p}} {
		code, out, stderr := runConfig(t, map[string]string{"APPROVE_TUI_DB": filepath.Join(t.TempDir(), "state.db")}, args...)
		if code != ExitError || !strings.Contains(stderr+out, want) || !strings.Contains(stderr+out, "(mode 0666)") || !strings.Contains(stderr+out, "chmod 600 "+p) {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := runConfig(t, nil, "config", "check", "--config", p); code != 0 {
		t.Errorf("0600: exit %d\n%s%s", code, out, stderr)
	}
}

// The break as found: an exec channel's script with set -x prints the
// Slack webhook URL (read from the file slack's url_file names); neither
// notify's log nor stats --json (last_error, trouble) shows it, and the
// script's environment had no other channel's secret.
func TestStatsShowsNoSecretFromAChannelsError(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	slackURL := "https://hooks.slack.com/services/T0LEAKX/B0LEAKX/" + cfgSecret
	urlFile := filepath.Join(dir, "slack-url")
	if err := os.WriteFile(urlFile, []byte(slackURL+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AT_NTFY_TOKEN", cfgSecret+"-ntfy")
	envOut := filepath.Join(dir, "env.txt")
	sh := filepath.Join(dir, "page.sh")
	if err := os.WriteFile(sh, []byte("#!/bin/sh\nset -x\nenv > "+envOut+"\ncat >/dev/null\nu=$(cat "+urlFile+")\necho \"posting to $u with $AT_NTFY_TOKEN\" >&2\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	p := writeConfig(t, `channels:
  desk: {type: exec, command: [`+sh+`]}
  chat: {type: slack, url_file: `+urlFile+`}
  push: {type: ntfy, url: "http://127.0.0.1:1/approvals", token_env: AT_NTFY_TOKEN}
routes:
  - steps: [{after: 0s, notify: [desk]}]
`)
	submitDeploy(t, db, "hm-leak01")
	env := map[string]string{"APPROVE_TUI_DB": db}
	// runConfig fails the test on any output that holds cfgSecret.
	code, out, stderr := runConfig(t, env, "notify", "--once", "--config", p)
	if code != 0 {
		t.Fatalf("notify --once: %d\n%s%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "exec page.sh") || !strings.Contains(stderr, "[line withheld: it holds part of a secret]") {
		t.Errorf("the log does not show the redacted failure:\n%s", stderr)
	}
	code, out, stderr = runConfig(t, env, "--json", "stats", "--config", p)
	if code != 0 || !strings.Contains(out, `"last_error": "exec page.sh: exit status 1; stderr:`) || !strings.Contains(out, "[line withheld: it holds part of a secret]") {
		t.Fatalf("stats --json: %d\n%s%s", code, out, stderr)
	}
	envs, err := os.ReadFile(envOut)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(envs), cfgSecret) || strings.Contains(string(envs), "AT_NTFY_TOKEN=") {
		t.Errorf("the exec command's environment held another channel's secret:\n%s", envs)
	}
	// A row written by a notifier whose configuration this host has not
	// read (another host's, or from before redaction): stats still keeps
	// what has a secret's shape out.
	st, err := storage.Open(context.Background(), db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	key := storage.DeliveryKey{ApprovalID: "hm-leak01", Kind: "page", Channel: "other"}
	if _, err := st.AddDeliveries(context.Background(), []storage.DeliveryKey{key}); err != nil {
		t.Fatal(err)
	}
	if c, err := st.ClaimDelivery(context.Background(), key, "old", time.Minute); err != nil || c == nil {
		t.Fatalf("claim: %v", err)
	}
	old := "Slack webhook https://hooks.slack.com/services/T9/B9/" + cfgSecret + "Z answered 500; ntfy https://ntfy.sh/x?auth=" + cfgSecret + "Y"
	if err := st.FinishDelivery(context.Background(), key, "old", storage.DeliveryResult{State: storage.DeliveryPending, RetryAt: time.Now().Add(time.Hour), Err: old}, model.LocalActor(model.SurfaceNotify)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	code, out, stderr = runConfig(t, env, "--json", "stats")
	if code != 0 || !strings.Contains(out, "hooks.slack.com/services/[redacted]") || !strings.Contains(out, "auth=[redacted]") {
		t.Fatalf("stats --json without the configuration: %d\n%s%s", code, out, stderr)
	}
}

// The exec channel's script prints the Slack webhook URL's token
// base64-encoded, URL-encoded and cut across lines, without tracing
// itself: neither notify's log nor stats --json holds any of it.
func TestStatsShowsNoEncodedOrSplitSecret(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	token := "Tk9" + cfgSecret + "x.y+z"
	urlFile := filepath.Join(dir, "slack-url")
	if err := os.WriteFile(urlFile, []byte("https://hooks.slack.com/services/T0LEAKX/B0LEAKX/"+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sh := filepath.Join(dir, "page.sh")
	if err := os.WriteFile(sh, []byte(`#!/bin/sh
cat >/dev/null
u=$(cat `+urlFile+`)
t=${u##*/}
echo "b64: $(printf 'key:%s' "$t" | base64 -w0)" >&2
echo "url: $(printf '%s' "$t" | od -An -v -tx1 | tr -d ' \n' | sed 's/../%&/g')" >&2
printf '%s' "$t" | fold -w 4 >&2; echo >&2
echo "relay refused: ok-marker" >&2
exit 1
`), 0o700); err != nil {
		t.Fatal(err)
	}
	p := writeConfig(t, `channels:
  desk: {type: exec, command: [`+sh+`]}
  chat: {type: slack, url_file: `+urlFile+`}
routes:
  - steps: [{after: 0s, notify: [desk]}]
`)
	submitDeploy(t, db, "hm-leak02")
	env := map[string]string{"APPROVE_TUI_DB": db}
	_, _, logs := runConfig(t, env, "notify", "--once", "--config", p)
	code, out, stderr := runConfig(t, env, "--json", "stats", "--config", p)
	if code != 0 || !strings.Contains(out, "relay refused: ok-marker") {
		t.Fatalf("stats --json: %d\n%s%s", code, out, stderr)
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("key:" + token))
	for _, leak := range []string{token, cfgSecret, b64[len(b64)/2-6 : len(b64)/2+6], "%73%33%63%72", "3cr3", "t-VA", "LUEx"} {
		if strings.Contains(out, leak) || strings.Contains(logs, leak) {
			t.Errorf("%q shows:\nstats: %s\nlog: %s", leak, out, logs)
		}
	}
}

// A 0600 configuration file in a directory others may write, or naming
// an exec program in one, is refused by config check and notify, saying
// which directory, its mode and the fix.
func TestConfigInWritableDirectoryRefused(t *testing.T) {
	open := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(open, "config.yaml")
	src := "channels:\n  desk: {type: exec, command: [touch, /tmp/x]}\nroutes:\n  - steps: [{after: 0s, notify: [desk]}]\n"
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"APPROVE_TUI_DB": filepath.Join(t.TempDir(), "state.db")}
	for _, args := range [][]string{{"config", "check", "--config", p}, {"notify", "--once", "--config", p}} {
		code, out, stderr := runConfig(t, env, args...)
		if code != ExitError || !strings.Contains(stderr+out, "directory "+open+" on its path may be written by its group and others (mode 0777") || !strings.Contains(stderr+out, "chmod go-w "+open) {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	prog := filepath.Join(open, "page.sh")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	q := writeConfig(t, "channels:\n  desk: {type: exec, command: ["+prog+"]}\n")
	code, out, stderr := runConfig(t, env, "config", "check", "--config", q)
	if code != ExitError || !strings.Contains(stderr+out, "channel desk (exec): program "+prog) || !strings.Contains(stderr+out, "directory "+open) {
		t.Errorf("an exec program in an open directory: exit %d\n%s%s", code, out, stderr)
	}
}

// submitDeploy creates the store db and submits one proposal, id, of
// "make deploy" (every route without a match takes it).
func submitDeploy(t *testing.T, db, id string) {
	t.Helper()
	st, err := storage.Open(context.Background(), db, storage.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seedNotify(t, st, 1, func(int) string { return id }, func(int) string { return "make deploy" }, time.Hour)
}
