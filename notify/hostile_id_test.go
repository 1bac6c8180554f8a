package notify

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
)

// hostileIDs are ids a row written by another program may carry: shell
// substitutions, separators, a flag, line breaks, escape sequences,
// quotes, globs.
var hostileIDs = []string{
	"$(touch /tmp/pwned)",
	"`touch /tmp/pwned`",
	"abc;touch /tmp/pwned",
	"abc&&id",
	"abc|id",
	"abc\ntouch /tmp/pwned",
	"abc\rX",
	"\x1b]0;pwned\x07abc",
	"\x1b[31mred",
	"-rf",
	"--help",
	"'abc'",
	`"abc"`,
	"abc def",
	"abc*",
	"../../etc/passwd",
	"abc>out",
	"ab\u202ecba",
	"abc$HOME",
	strings.Repeat("a", 65),
}

// plainControlID is the one plain id among them: its pages carry the hint.
const plainControlID = "Plain_id-0123"

// allStrings are every string in a JSON document, decoded.
func allStrings(t *testing.T, data []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// hintRE finds the open hint's command and the word where the id goes.
var hintRE = regexp.MustCompile(`approvals\.example open (\S*)`)

// A page for a row whose id is not a plain token carries no command to
// run: through every channel type (real senders to loopback receivers,
// and the exec channel's stdin and environment), the hint appears only
// for the plain id, and every hostile id's page is still sent.
func TestHostileIDsGetNoOpenHint(t *testing.T) {
	r := newRig(t)
	ntfy := newRecorder(t, http.StatusOK)
	slack := newRecorder(t, http.StatusOK)
	slack.set(http.StatusOK, nil, "ok")
	pd := newRecorder(t, http.StatusAccepted)
	hook := newRecorder(t, http.StatusOK)
	dir := t.TempDir()
	outDir := filepath.Join(dir, "out")
	if err := os.Mkdir(outDir, 0o700); err != nil {
		t.Fatal(err)
	}
	sh := script(t, dir, "page.sh", `f=$(mktemp "$1/page.XXXXXX")
cat > "$f.json"
printf '%s' "$APPROVE_TUI_APPROVAL_ID" > "$f.env"
`)
	r.cfg = &config.File{
		Channels: map[string]*config.Channel{
			"push":  {Name: "push", Type: config.TypeNtfy, URL: ntfy.URL + "/approvals", IncludeCommand: true, Timeout: 10 * time.Second},
			"chat":  {Name: "chat", Type: config.TypeSlack, URLSecret: config.Secret{Env: "SLACK_URL"}, IncludeCommand: true, Timeout: 10 * time.Second},
			"pager": {Name: "pager", Type: config.TypePagerDuty, RoutingKey: config.Secret{Env: "PD_KEY"}, EventsURL: pd.URL + "/v2/enqueue", IncludeCommand: true, Timeout: 10 * time.Second},
			"hook":  {Name: "hook", Type: config.TypeWebhook, URL: hook.URL + "/in", SigningSecret: config.Secret{Env: "HOOK_SECRET"}, IncludeCommand: true, Timeout: 10 * time.Second},
			"desk":  {Name: "desk", Type: config.TypeExec, Command: []string{sh, outDir}, IncludeCommand: true, Timeout: 10 * time.Second},
		},
		Routes:   []*config.Route{{Steps: []config.Step{{Notify: []string{"push", "chat", "pager", "hook", "desk"}}}}},
		OpenHint: "ssh -t -p 2222 approvals.example open {id}",
	}
	opts := testOptions(map[string]string{"SLACK_URL": slack.URL + secretSlackPath, "PD_KEY": secretRoutingKey, "HOOK_SECRET": secretSigning})
	opts.Now = nil
	senders := map[string]Sender{}
	for name, ch := range r.cfg.Channels {
		senders[name] = mustSender(t, ch, opts)
	}
	r.n = &Notifier{Store: r.store, Config: r.cfg, Senders: senders, ID: "n1", Actor: model.Actor{Surface: model.SurfaceNotify, Name: "notifier@test"}}
	ids := append([]string{plainControlID}, hostileIDs...)
	for _, id := range ids {
		r.submit(id, "agent:prod:web", "make deploy", time.Hour)
	}
	r.tick()

	var docs [][]string
	for name, srv := range map[string]*recorder{"ntfy": ntfy, "slack": slack, "pagerduty": pd, "webhook": hook} {
		if n := srv.count(); n != len(ids) {
			t.Errorf("%s saw %d pages, want %d (one per id, hostile ones too)", name, n, len(ids))
		}
		srv.mu.Lock()
		for _, req := range srv.reqs {
			docs = append(docs, allStrings(t, req.Body))
		}
		srv.mu.Unlock()
	}
	stdins, _ := filepath.Glob(filepath.Join(outDir, "*.json"))
	if len(stdins) != len(ids) {
		t.Errorf("the exec channel ran %d times, want %d", len(stdins), len(ids))
	}
	var envIDs []string
	for _, f := range stdins {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, allStrings(t, data))
		env, _ := os.ReadFile(strings.TrimSuffix(f, ".json") + ".env")
		envIDs = append(envIDs, string(env))
	}
	sort.Strings(envIDs)
	// $APPROVE_TUI_APPROVAL_ID is the id only when it is plain.
	want := append(make([]string, len(hostileIDs)), plainControlID)
	if strings.Join(envIDs, "|") != strings.Join(want, "|") {
		t.Errorf("APPROVE_TUI_APPROVAL_ID values %q, want the plain id and empty for the others", envIDs)
	}
	hints := 0
	for _, doc := range docs {
		for _, s := range doc {
			for _, m := range hintRE.FindAllStringSubmatch(s, -1) {
				word := strings.Trim(m[1], "`\"'.,;")
				if word != plainControlID {
					t.Errorf("a page tells the operator to run %q (id word %q)", m[0], word)
				}
				hints++
			}
		}
	}
	if hints == 0 {
		t.Error("the plain id's pages carry no open hint: the check above proves nothing")
	}
	for _, doc := range docs {
		for _, s := range doc {
			for _, bad := range []string{"$(touch", "`touch", "\x1b", "\n-rf"} {
				if strings.Contains(s, "open "+bad) {
					t.Errorf("a page holds %q", s)
				}
			}
		}
	}
}

// What each channel renders for a hostile id: no command, a sentence
// saying why; the plain id keeps its hint.
func TestHintWithheldForHostileIDs(t *testing.T) {
	for _, id := range hostileIDs {
		ev := baseEvent()
		ev.ApprovalID = id
		ev.OpenHint = "ssh -t -p 2222 approvals.example open " + id
		body := Body(ev, testNow)
		if strings.Contains(body, "approvals.example open") {
			t.Errorf("id %q: the page gives the hint:\n%s", id, body)
		}
		if !strings.Contains(body, "not a plain token") {
			t.Errorf("id %q: the page does not say why no command is given:\n%s", id, body)
		}
		if data, err := webhookBody(ev, Delivery{ID: "d"}); err != nil || strings.Contains(string(data), "approvals.example open") {
			t.Errorf("id %q: the webhook body gives the hint: %s", id, data)
		}
	}
	ev := baseEvent()
	if body := Body(ev, testNow); !strings.Contains(body, "open it: ssh -t -p 2222 approvals.example open hm-abc123") {
		t.Errorf("a plain id lost its hint:\n%s", body)
	}
}

func TestIsPlainID(t *testing.T) {
	for _, id := range []string{"hm-abc123", "a", "Plain_id-0123", model.NewID(), strings.Repeat("a", 64), "abc-"} {
		if !model.IsPlainID(id) {
			t.Errorf("IsPlainID(%q) = false", id)
		}
	}
	for _, id := range append([]string{""}, hostileIDs...) {
		if model.IsPlainID(id) {
			t.Errorf("IsPlainID(%q) = true", id)
		}
	}
}
