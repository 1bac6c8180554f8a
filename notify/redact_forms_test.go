package notify

import (
	"context"
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
)

const formsSecret = "whsec/LEAK+k=y&z!07xyzQ"

// middle is s's middle 12 characters: in every encoded output below they
// come from the secret alone.
func middle(s string) string { return s[len(s)/2-6 : len(s)/2+6] }

// The forms a secret can take in text, each found: split by white space
// or by escaped line breaks, base64 (both alphabets, every alignment,
// wrapped), URL-encoded (each escaping, either case); text without them is
// left as it was.
func TestScrubFindsEncodedForms(t *testing.T) {
	var r redactor
	r.add(formsSecret)
	b64 := func(enc *base64.Encoding, prefix string) string {
		return enc.EncodeToString([]byte(prefix + formsSecret + "-tail"))
	}
	wrapped := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 70) + formsSecret))
	wrapped = wrapped[:76] + "\n" + wrapped[76:]
	for _, text := range []string{
		"got " + formsSecret + " back",
		"got " + formsSecret[:9] + "\n" + formsSecret[9:] + " back",
		"got " + formsSecret[:9] + `\n` + formsSecret[9:] + " back",
		"got " + formsSecret[:5] + `\x0d\n  ` + formsSecret[5:] + " back",
		"got " + strings.Join(strings.Split(formsSecret, ""), " ") + " back",
		"basic " + b64(base64.StdEncoding, "") + " back",
		"basic " + b64(base64.StdEncoding, "u:") + " back",
		"basic " + b64(base64.StdEncoding, "us:") + " back",
		"basic " + b64(base64.URLEncoding, "") + " back",
		"basic " + b64(base64.RawURLEncoding, "ab") + " back",
		"basic " + b64(base64.RawURLEncoding, "a") + " back",
		"mime " + wrapped + " back",
		"q=" + url.QueryEscape(formsSecret) + " back",
		"p=" + url.PathEscape(formsSecret) + " back",
		"q=" + regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(url.QueryEscape(formsSecret), strings.ToLower) + " back",
		"all=" + escapeAll(formsSecret) + " back",
		"all=" + strings.ToLower(escapeAll(formsSecret)) + " back",
		"u=" + escapeUnreserved(formsSecret) + " back",
	} {
		got := r.scrub(text)
		if !strings.Contains(got, "[redacted]") || !strings.HasSuffix(got, " back") {
			t.Errorf("scrub(%q) = %q", text, got)
		}
		for _, part := range []string{formsSecret[:9], formsSecret[9:], "LEAK", middle(b64(base64.StdEncoding, "u:")), "07xyzQ"} {
			if strings.Contains(got, part) {
				t.Errorf("scrub(%q) = %q keeps %q", text, got, part)
			}
		}
	}
	for _, plain := range []string{"exec notify.sh: exit status 3; stderr: smtp relay refused", "", "a b\nc", `x\ny`} {
		if got := r.scrub(plain); got != plain {
			t.Errorf("scrub(%q) = %q", plain, got)
		}
	}
}

// A line of an exec command's output with a piece of a secret (8
// characters or more, as is or encoded) is withheld; lines with the
// public parts of a secret URL (scheme, host, plain words) are kept.
func TestWithholdFragments(t *testing.T) {
	t.Setenv("AT_FRAG_SLACK", "https://hooks.slack.com/services/T0FRAG/B0FRAG/FRAGslackTOKEN01")
	t.Setenv("AT_FRAG_TOKEN", "tk_FRAGntfyTOKEN02")
	cfg := &config.File{Channels: map[string]*config.Channel{
		"chat": {Name: "chat", Type: config.TypeSlack, URLSecret: config.Secret{Env: "AT_FRAG_SLACK"}},
		"push": {Name: "push", Type: config.TypeNtfy, URL: "https://ntfy.example/approvals", Token: config.Secret{Env: "AT_FRAG_TOKEN"}},
	}}
	sec := NewSecrets(cfg, nil)
	in := strings.Join([]string{
		"posting to https://hooks.slack.com/services/ failed",
		"+ first=tk_FRAGnt",
		"+ rest=fyTOKEN02",
		"+ tail=FRAGslackTOK",
		"token in base64: " + base64.StdEncoding.EncodeToString([]byte("tk_FRAGntfyTOKEN02"))[:12],
		"relay refused",
	}, "\n")
	want := strings.Join([]string{
		"posting to https://hooks.slack.com/services/ failed",
		"[line withheld: it holds part of a secret]",
		"[line withheld: it holds part of a secret]",
		"[line withheld: it holds part of a secret]",
		"[line withheld: it holds part of a secret]",
		"relay refused",
	}, "\n")
	if got := sec.WithholdFragments(in); got != want {
		t.Errorf("WithholdFragments:\n%s\nwant:\n%s", got, want)
	}
	var none *Secrets
	if got := none.WithholdFragments(in); got != in {
		t.Errorf("no secrets: %q", got)
	}
}

// The break as found: an exec channel's script reads another channel's
// secret and prints it split across lines, base64- and URL-encoded and
// spaced out; the stored last_error and the log hold none of it, and say
// what else the script said.
func TestExecOutputRedactedInEveryForm(t *testing.T) {
	r := newRig(t)
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "hook-secret")
	if err := os.WriteFile(secretFile, []byte(formsSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sh := script(t, dir, "encode.sh", `set -x
cat >/dev/null
s=$(cat "$1")
first=$(printf '%s' "$s" | cut -c1-9)
rest=$(printf '%s' "$s" | cut -c10-)
printf 'split: %s\n%s\n' "$first" "$rest" >&2
printf 'user:%s' "$s" | base64 -w0 >&2; echo >&2
printf 'ab%s' "$s" | base64 -w0 | tr '+/' '-_' >&2; echo >&2
printf '%s%s' "$(head -c 70 /dev/zero | tr '\0' x)" "$s" | base64 >&2
printf '%s' "$s" | od -An -v -tx1 | tr -d ' \n' | sed 's/../%&/g' >&2; echo >&2
printf '%s' "$s" | sed 's/./& /g' >&2
echo "relay refused: ok-marker" >&2
exit 2
`)
	hook := newRecorder(t, 200)
	r.cfg = &config.File{
		Channels: map[string]*config.Channel{
			"hook": {Name: "hook", Type: config.TypeWebhook, URL: hook.URL + "/in", SigningSecret: config.Secret{File: secretFile}, Timeout: 10 * time.Second},
			"desk": {Name: "desk", Type: config.TypeExec, Command: []string{sh, secretFile}, Timeout: 10 * time.Second},
		},
		Routes: []*config.Route{{Steps: []config.Step{{Notify: []string{"desk"}}}}},
	}
	logs := &lockedLines{}
	sec := NewSecrets(r.cfg, nil)
	senders := map[string]Sender{}
	for name, ch := range r.cfg.Channels {
		senders[name] = mustSender(t, ch, Options{Version: "1.2.3", Secrets: sec})
	}
	r.n = &Notifier{Store: r.store, Config: r.cfg, Senders: senders, Secrets: sec, ID: "n1", Logf: logs.logf,
		Actor: model.Actor{Surface: model.SurfaceNotify, Name: "notifier@test"}}
	r.submit("hm-forms1", "agent:prod:web", "make deploy", time.Hour)
	r.tick()
	ds, err := r.store.DeliveriesOf(context.Background(), "hm-forms1")
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries %+v %v", ds, err)
	}
	lastErr := ds[0].LastError
	if !strings.Contains(lastErr, "relay refused: ok-marker") || !strings.Contains(lastErr, "[line withheld: it holds part of a secret]") || !strings.Contains(lastErr, "+ exit 2") {
		t.Fatalf("last_error does not show the script's words with the secret redacted: %q", lastErr)
	}
	outputs := []string{
		base64.StdEncoding.EncodeToString([]byte("user:" + formsSecret)),
		base64.RawURLEncoding.EncodeToString([]byte("ab" + formsSecret)),
		base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 70) + formsSecret))[76:],
		strings.ToLower(escapeAll(formsSecret)),
	}
	for where, text := range map[string]string{"last_error": lastErr, "the log": logs.String()} {
		for _, part := range []string{formsSecret, formsSecret[:9], formsSecret[9:], "LEAK", "07xyzQ"} {
			if strings.Contains(text, part) {
				t.Errorf("%s holds %q: %q", where, part, text)
			}
		}
		for _, o := range outputs {
			if strings.Contains(text, middle(o)) {
				t.Errorf("%s holds the encoded secret %q: %q", where, o, text)
			}
		}
	}
}
