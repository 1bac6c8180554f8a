package notify

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
)

// leakRig is a configuration with a secret in every place one can be,
// resolved the way the notifier resolves them (the real environment and
// files), an exec channel whose script traces itself (set -x) and prints
// every secret it can find, and an ntfy receiver that quotes other
// channels' secrets in its errors.
type leakRig struct {
	*rig
	dir     string
	recs    map[string]*recorder
	envDump string
	secrets []string
	logs    *lockedLines
}

type lockedLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.TrimSpace(fmt.Sprintf(format, args...)))
}

func (l *lockedLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

const (
	leakSlackURLPath = "/services/T0LEAK/B0LEAK/LEAKslackHOOKtoken01"
	leakNtfyToken    = "tk_LEAKntfyTOKEN02"
	leakNtfyAuth     = "QmFzaWMgTEVBS2F1dGgwMw"
	leakPDKey        = "R0LEAKpagerdutyKEY000000000004"
	leakHookSecret   = "whsec_LEAKsigning05"
	leakDBPassword   = "LEAKdbPASSWORD06"
)

func newLeakRig(t *testing.T, ntfyStatus int) *leakRig {
	t.Helper()
	r := &leakRig{rig: newRig(t), dir: t.TempDir(), logs: &lockedLines{}}
	slack := newRecorder(t, http.StatusOK)
	pd := newRecorder(t, http.StatusAccepted)
	hook := newRecorder(t, http.StatusOK)
	ntfy := newRecorder(t, ntfyStatus)
	slackURL := slack.URL + leakSlackURLPath
	ntfy.set(ntfyStatus, nil, "upstream said: slack="+slackURL+" key="+leakPDKey)
	keyFile := filepath.Join(r.dir, "pd-key")
	if err := os.WriteFile(keyFile, []byte(leakPDKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LEAK_SLACK_URL", slackURL)
	t.Setenv("LEAK_NTFY_TOKEN", leakNtfyToken)
	t.Setenv("LEAK_HOOK_SECRET", leakHookSecret)
	// The same secret under a name no channel gives, and a database URL.
	t.Setenv("SOME_OTHER_NAME", "prefix-"+leakHookSecret)
	t.Setenv("APPROVE_TUI_DB", "postgres://approver:"+leakDBPassword+"@db.example/approvals")
	t.Setenv("PGPASSWORD", leakDBPassword)
	t.Setenv("KEEP_ME", "kept")
	r.envDump = filepath.Join(r.dir, "env.txt")
	r.recs = map[string]*recorder{"slack": slack, "pagerduty": pd, "webhook": hook, "ntfy": ntfy}
	sh := script(t, r.dir, "leaky.sh", `set -x
env > "$1"
cat > "$1.stdin"
echo "slack=$LEAK_SLACK_URL token=$LEAK_NTFY_TOKEN hook=$LEAK_HOOK_SECRET other=$SOME_OTHER_NAME db=$APPROVE_TUI_DB pg=$PGPASSWORD" >&2
echo "key file: $(cat "$2")" >&2
echo "slack again: `+slackURL+`" >&2
exit 3
`)
	r.secrets = []string{slackURL, "LEAKslackHOOKtoken01", "T0LEAK/B0LEAK", leakNtfyToken, leakNtfyAuth, leakPDKey, leakHookSecret, leakDBPassword}
	r.cfg = &config.File{
		Channels: map[string]*config.Channel{
			"push":  {Name: "push", Type: config.TypeNtfy, URL: ntfy.URL + "/approvals?auth=" + leakNtfyAuth, Token: config.Secret{Env: "LEAK_NTFY_TOKEN"}, IncludeCommand: true, Timeout: 10 * time.Second},
			"chat":  {Name: "chat", Type: config.TypeSlack, URLSecret: config.Secret{Env: "LEAK_SLACK_URL"}, IncludeCommand: true, Timeout: 10 * time.Second},
			"pager": {Name: "pager", Type: config.TypePagerDuty, RoutingKey: config.Secret{File: keyFile}, EventsURL: pd.URL + "/v2/enqueue", IncludeCommand: true, Timeout: 10 * time.Second},
			"hook":  {Name: "hook", Type: config.TypeWebhook, URL: hook.URL + "/in", SigningSecret: config.Secret{Env: "LEAK_HOOK_SECRET"}, IncludeCommand: true, Timeout: 10 * time.Second},
			"desk":  {Name: "desk", Type: config.TypeExec, Command: []string{sh, r.envDump, keyFile}, IncludeCommand: true, Timeout: 10 * time.Second},
		},
		Routes:   []*config.Route{{Steps: []config.Step{{Notify: []string{"push", "chat", "pager", "hook", "desk"}}}}},
		OpenHint: "ssh -t approvals.example open {id}",
	}
	sec := NewSecrets(r.cfg, nil)
	senders := map[string]Sender{}
	for name, ch := range r.cfg.Channels {
		senders[name] = mustSender(t, ch, Options{Version: "1.2.3", Secrets: sec})
	}
	r.n = &Notifier{Store: r.store, Config: r.cfg, Senders: senders, Secrets: sec, ID: "n1", Logf: r.logs.logf,
		Actor: model.Actor{Surface: model.SurfaceNotify, Name: "notifier@test"}}
	return r
}

func (r *leakRig) noLeak(t *testing.T, where, text string) {
	t.Helper()
	for _, s := range r.secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s holds the secret %q:\n%s", where, s, text)
		}
	}
}

// The exec channel's command runs without any channel's secret: the
// channels' *_env variables, a variable holding a secret's value under
// another name, PGPASSWORD and a database URL with a password are gone;
// what a script needs stays.
func TestExecGetsNoOtherChannelsSecret(t *testing.T) {
	r := newLeakRig(t, http.StatusOK)
	r.submit("hm-leak1", "agent:prod:web", "make deploy", time.Hour)
	r.tick()
	env, err := os.ReadFile(r.envDump)
	if err != nil {
		t.Fatal(err)
	}
	r.noLeak(t, "the exec command's environment", string(env))
	for _, name := range []string{"LEAK_SLACK_URL=", "LEAK_NTFY_TOKEN=", "LEAK_HOOK_SECRET=", "SOME_OTHER_NAME=", "APPROVE_TUI_DB=", "PGPASSWORD="} {
		if strings.Contains(string(env), "\n"+name) || strings.HasPrefix(string(env), name) {
			t.Errorf("the exec command's environment has %s", name)
		}
	}
	for _, keep := range []string{"KEEP_ME=kept", "PATH=", "APPROVE_TUI_EVENT=page", "APPROVE_TUI_APPROVAL_ID=hm-leak1"} {
		if !strings.Contains(string(env), keep) {
			t.Errorf("the exec command's environment lacks %s:\n%s", keep, env)
		}
	}
}

// Whatever a channel says (an exec script tracing itself and printing
// every secret it can read, a receiver quoting other channels' secrets),
// the log, the stored last_error and the notifier's trouble hold none.
func TestChannelErrorsAreRedactedEverywhere(t *testing.T) {
	r := newLeakRig(t, http.StatusBadRequest)
	r.submit("hm-leak2", "agent:prod:web", "make deploy", time.Hour)
	r.tick()
	ds, err := r.store.DeliveriesOf(context.Background(), "hm-leak2")
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, d := range ds {
		r.noLeak(t, "last_error of "+d.Channel, d.LastError)
		if d.LastError != "" {
			failed++
		}
		if d.Channel == "desk" && !strings.Contains(d.LastError, "[redacted]") && !strings.Contains(d.LastError, "[line withheld: it holds part of a secret]") {
			t.Errorf("the exec channel's error shows no redaction, so the test proves nothing: %q", d.LastError)
		}
		if d.Channel == "push" && !strings.Contains(d.LastError, "upstream said") {
			t.Errorf("the ntfy error lost the receiver's words: %q", d.LastError)
		}
	}
	if failed < 2 {
		t.Errorf("%d deliveries failed, want the exec and ntfy ones: %+v", failed, ds)
	}
	r.noLeak(t, "the notifier's log", r.logs.String())
	if !strings.Contains(r.logs.String(), "exec leaky.sh") {
		t.Errorf("the log does not speak of the exec failure:\n%s", r.logs.String())
	}
	ns, err := r.store.Notifiers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		r.noLeak(t, "the notifier's trouble", n.Trouble)
	}
}

// A configured secret in the command text (a token the agent passes) is
// redacted before the page leaves, in every channel's payload, and before
// the command is cut (no part of a secret is left at the cut).
func TestCommandTextRedacted(t *testing.T) {
	r := newLeakRig(t, http.StatusOK)
	cmd := "curl -H 'X-Token: " + leakNtfyToken + "' https://api.example/?key=" + leakPDKey + " && echo "
	cmd += strings.Repeat("x", 295-len(cmd)) + leakHookSecret + " done"
	r.submit("hm-leak3", "agent:prod:web", cmd, time.Hour)
	r.tick()
	var texts []string
	for name, srv := range r.recs {
		srv.mu.Lock()
		if len(srv.reqs) == 0 {
			t.Errorf("%s got no page", name)
		}
		for _, req := range srv.reqs {
			texts = append(texts, allStrings(t, req.Body)...)
		}
		srv.mu.Unlock()
	}
	stdin, err := os.ReadFile(r.envDump + ".stdin")
	if err != nil {
		t.Fatal(err)
	}
	texts = append(texts, allStrings(t, stdin)...)
	redacted := false
	for _, s := range texts {
		if s == leakPDKey {
			continue // PagerDuty's routing_key field: its own secret, to its own service
		}
		r.noLeak(t, "a page", s)
		if strings.Contains(s, "whsec_") || strings.Contains(s, "tk_LEAK") {
			t.Errorf("a page holds part of a secret: %q", s)
		}
		if strings.Contains(s, "X-Token: [redacted]") {
			redacted = true
		}
	}
	if !redacted {
		t.Errorf("no page shows the command with the token redacted: %q", texts)
	}
}

func TestRedactURLParts(t *testing.T) {
	for raw, want := range map[string]string{
		"https://hooks.slack.com/services/T000/B000/XXXXXXXX": "https://hooks.slack.com/services/…redacted…",
		"https://ntfy.example/approvals?auth=QmFzaWMgdG9r":    "https://ntfy.example/…redacted…?auth=…redacted…",
		"https://user:pw@hooks.example/in/abc":                "https://…redacted…@hooks.example/in/…redacted…",
		"https://ntfy.sh/mytopic":                             "https://ntfy.sh/…redacted…",
	} {
		if got := config.RedactURL(raw, true); got != want {
			t.Errorf("RedactURL(%q, secret) = %q, want %q", raw, got, want)
		}
	}
	if got := config.RedactURL("https://ntfy.example/approvals?auth=QmFzaWMgdG9r&x=1", false); got != "https://ntfy.example/approvals?auth=…redacted…&x=…redacted…" {
		t.Errorf("RedactURL(plain) = %q", got)
	}
}

func TestRedactKnownShapes(t *testing.T) {
	for _, s := range []string{
		"post https://hooks.slack.com/services/T1/B2/abcdefSECRET failed",
		"GET https://ntfy.sh/x?auth=abcdefSECRET",
		"Authorization: Bearer abcdefSECRET",
		"postgres://u:abcdefSECRET@db/x",
		`{"routing_key":"R0abcdefSECRET0000000"}`,
	} {
		if got := RedactKnown(s); strings.Contains(got, "abcdefSECRET") || !strings.Contains(got, "[redacted]") {
			t.Errorf("RedactKnown(%q) = %q", s, got)
		}
	}
	if got := RedactKnown("exec notify.sh: exit status 3; stderr: smtp relay refused"); got != "exec notify.sh: exit status 3; stderr: smtp relay refused" {
		t.Errorf("RedactKnown changed plain text: %q", got)
	}
}
