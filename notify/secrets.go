package notify

// Every secret a configuration names, so that what one channel says
// (its errors, an exec command's output) never carries another channel's
// secret, and an exec channel's command never sees one.
//
// Secrets are resolved each time they are asked for (a rotated secret is
// picked up, an unset one is skipped): environment look-ups and a few
// small file reads.

import (
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/approve-tui/approve-tui/config"
)

// Secrets are a configuration's secrets: every channel's token, routing
// key, signing secret and secret URL, and the secret parts of its plain
// URLs (a query string's values such as ntfy's ?auth=, an ntfy topic).
type Secrets struct {
	cfg     *config.File
	resolve Resolver

	// The last resolution, kept for a second (secrets are asked for at
	// every log line and delivery; a rotated one is seen within it).
	mu     sync.Mutex
	at     time.Time
	whole  []string
	parts  redactor
	cached bool
}

// cacheFor is how long a resolution of the secrets is kept.
const cacheFor = time.Second

// NewSecrets are cfg's secrets, read through resolve (ResolveSecret when
// nil).
func NewSecrets(cfg *config.File, resolve Resolver) *Secrets {
	if resolve == nil {
		resolve = ResolveSecret
	}
	return &Secrets{cfg: cfg, resolve: resolve}
}

// values are the resolved secrets: whole values, and for URLs the parts
// that carry the credential.
func (s *Secrets) values() ([]string, redactor) {
	if s == nil || s.cfg == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := time.Now(); !s.cached || now.Sub(s.at) >= cacheFor || now.Before(s.at) {
		s.whole, s.parts = s.resolveAll()
		s.at, s.cached = now, true
	}
	return s.whole, s.parts
}

// resolveAll resolves every secret now.
func (s *Secrets) resolveAll() (whole []string, parts redactor) {
	for _, name := range s.cfg.ChannelNames() {
		ch := s.cfg.Channels[name]
		for _, ns := range ch.Secrets() {
			v, err := s.resolve(ns.Secret)
			if err != nil || strings.TrimSpace(v) == "" {
				continue
			}
			whole = append(whole, v)
			if ns.Role == "url" {
				parts.addURL(v)
			} else {
				parts.add(v, url.QueryEscape(v))
			}
		}
		for _, raw := range []string{ch.URL, ch.EventsURL} {
			if raw == "" {
				continue
			}
			// The path of a URL written in the file is no secret (an
			// ntfy sender keeps its own topic out of its errors).
			parts.addPlainURL(raw)
		}
	}
	// Longest first, so that a value is replaced whole before a part of it.
	sort.SliceStable(parts, func(i, j int) bool { return len(parts[i]) > len(parts[j]) })
	return whole, parts
}

// Redact replaces every configured secret in text with [redacted], and
// what looks like a secret (RedactKnown).
func (s *Secrets) Redact(text string) string {
	if text == "" {
		return text
	}
	if s != nil {
		_, parts := s.values()
		text = parts.scrub(text)
	}
	return RedactKnown(text)
}

// RedactConfigured replaces every configured secret in text with
// [redacted], and nothing else: for text whose URLs are redacted already
// (config check's).
func (s *Secrets) RedactConfigured(text string) string {
	if s == nil || text == "" {
		return text
	}
	_, parts := s.values()
	return parts.scrub(text)
}

// EnvNames are the environment variables the configuration names as
// secrets (token_env, url_env...), of every channel.
func (s *Secrets) EnvNames() map[string]bool {
	out := map[string]bool{}
	if s == nil || s.cfg == nil {
		return out
	}
	for _, ch := range s.cfg.Channels {
		for _, ns := range ch.Secrets() {
			if ns.Secret.Env != "" {
				out[ns.Secret.Env] = true
			}
		}
	}
	return out
}

// Environ is environ (NAME=VALUE pairs) without what may hold a secret:
//   - the variables any channel names as a secret (token_env, url_env,
//     routing_key_env, secret_env): an exec channel has no secret of its
//     own, so it gets none of them;
//   - any variable whose value holds a configured secret's value (the
//     same secret under another name, or read from a *_file);
//   - PGPASSWORD, and any variable whose value is a URL with a password
//     (a database URL such as APPROVE_TUI_DB=postgres://u:pw@host/db).
//
// Everything else is kept (PATH, HOME, LANG, DISPLAY, DBUS_SESSION_BUS_
// ADDRESS...: what a notification script needs to run).
func (s *Secrets) Environ(environ []string) []string {
	names := s.EnvNames()
	whole, _ := s.values()
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if names[name] || name == "PGPASSWORD" || urlWithPassword(val) {
			continue
		}
		drop := false
		for _, w := range whole {
			if len(w) >= 4 && strings.Contains(val, w) {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// urlWithPassword reports whether v is a URL whose user info has a
// password.
func urlWithPassword(v string) bool {
	if !strings.Contains(v, "://") || !strings.Contains(v, "@") {
		return false
	}
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || u.User == nil {
		return false
	}
	_, ok := u.User.Password()
	return ok
}

// execEnviron is the environment of an exec channel's command: ours,
// scrubbed of every configured secret (Secrets.Environ), with the
// event's variables last (the last duplicate wins).
func execEnviron(sec *Secrets, vars ...string) []string {
	env := os.Environ()
	if sec != nil {
		env = sec.Environ(env)
	} else {
		env = (&Secrets{}).Environ(env)
	}
	return append(env, vars...)
}

// knownSecretShapes are secrets recognised by their shape whatever the
// configuration says (a row another notifier wrote, a secret since
// rotated): Slack incoming-webhook paths, credentials in a query string,
// authorization headers, a URL's password, a PagerDuty routing key named
// as such.
var knownSecretShapes = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(hooks\.slack\.com/(?:services|workflows|triggers)/)[^\s"'<>,;]+`), "${1}[redacted]"},
	{regexp.MustCompile(`(?i)([?&](?:auth|token|access_token|api_key|apikey|key|secret|sig|signature|password|routing_key)=)[^&\s"'<>,;]+`), "${1}[redacted]"},
	{regexp.MustCompile(`(?i)\b((?:authorization|proxy-authorization)\s*[:=]\s*)(?:(?:bearer|basic|token)\s+)?[^\s"']+`), "${1}[redacted]"},
	{regexp.MustCompile(`(?i)\b((?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,}`), "${1}[redacted]"},
	{regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@"']*:)[^@\s/"']+@`), "${1}[redacted]@"},
	{regexp.MustCompile(`(?i)("?(?:routing_key|integration_key)"?\s*[:=]\s*"?)[A-Za-z0-9]{16,}`), "${1}[redacted]"},
	{regexp.MustCompile(`(?i)(X-Approve-TUI-Signature\s*[:=]\s*)[^\s"']+`), "${1}[redacted]"},
}

// RedactKnown replaces the secrets text holds by their shape
// (knownSecretShapes): for text from elsewhere, such as the errors stored
// by a notifier whose configuration this process has not read.
func RedactKnown(text string) string {
	for _, k := range knownSecretShapes {
		text = k.re.ReplaceAllString(text, k.with)
	}
	return text
}
