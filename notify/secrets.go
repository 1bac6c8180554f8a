package notify

// Every secret a configuration names, so that what one channel says
// (its errors, an exec command's output) never carries another channel's
// secret, and an exec channel's command never sees one.
//
// Secrets are resolved each time they are asked for (a rotated secret is
// picked up, an unset one is skipped): environment look-ups and a few
// small file reads.

import (
	"encoding/base64"
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
	parts  redactor
	cores  []string
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

// values are the resolved secrets: what Redact replaces (each value and,
// for URLs, the parts that carry the credential, in every encoded form),
// and the cores WithholdFragments looks for pieces of (urlCores).
func (s *Secrets) values() (redactor, []string) {
	if s == nil || s.cfg == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := time.Now(); !s.cached || now.Sub(s.at) >= cacheFor || now.Before(s.at) {
		s.parts, s.cores = s.resolveAll()
		s.at, s.cached = now, true
	}
	return s.parts, s.cores
}

// resolveAll resolves every secret now.
func (s *Secrets) resolveAll() (parts redactor, cores []string) {
	for _, name := range s.cfg.ChannelNames() {
		ch := s.cfg.Channels[name]
		for _, ns := range ch.Secrets() {
			v, err := s.resolve(ns.Secret)
			if err != nil || strings.TrimSpace(v) == "" {
				continue
			}
			if ns.Role == "url" {
				parts.addURL(v)
				cores = append(cores, urlCores(v, true)...)
			} else {
				parts.add(v, url.QueryEscape(v))
				cores = append(cores, v)
			}
		}
		for _, raw := range []string{ch.URL, ch.EventsURL} {
			if raw == "" {
				continue
			}
			// The path of a URL written in the file is no secret (an
			// ntfy sender keeps its own topic out of its errors).
			parts.addPlainURL(raw)
			cores = append(cores, urlCores(raw, false)...)
		}
	}
	// Longest first, so that a value is replaced whole before a part of it.
	sort.SliceStable(parts, func(i, j int) bool { return len(parts[i]) > len(parts[j]) })
	return parts, cores
}

// Redact replaces every configured secret in text with [redacted], in
// every form encodedForms names and with white space or escaped line
// breaks inside it ignored (scrubForms), and what looks like a secret
// (RedactKnown).
func (s *Secrets) Redact(text string) string {
	if text == "" {
		return text
	}
	if s != nil {
		parts, _ := s.values()
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
	parts, _ := s.values()
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
//   - any variable whose value holds a configured secret's value, or a
//     part of a secret URL, in any form Redact finds (the same secret
//     under another name, read from a *_file, base64- or URL-encoded);
//   - PGPASSWORD, and any variable whose value is a URL with a password
//     (a database URL such as APPROVE_TUI_DB=postgres://u:pw@host/db).
//
// Everything else is kept (PATH, HOME, LANG, DISPLAY, DBUS_SESSION_BUS_
// ADDRESS...: what a notification script needs to run).
func (s *Secrets) Environ(environ []string) []string {
	names := s.EnvNames()
	parts, _ := s.values()
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if names[name] || name == "PGPASSWORD" || urlWithPassword(val) {
			continue
		}
		// The value holds a secret in any of the forms Redact finds.
		if parts.scrub(val) != val {
			continue
		}
		out = append(out, kv)
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
// as such. Compiled at first use: most processes never redact.
var knownSecretShapes = sync.OnceValue(func() []secretShape {
	return []secretShape{
		{regexp.MustCompile(`(hooks\.slack\.com/(?:services|workflows|triggers)/)[^\s"'<>,;]+`), "${1}[redacted]"},
		{regexp.MustCompile(`(?i)([?&](?:auth|token|access_token|api_key|apikey|key|secret|sig|signature|password|routing_key)=)[^&\s"'<>,;]+`), "${1}[redacted]"},
		{regexp.MustCompile(`(?i)\b((?:authorization|proxy-authorization)\s*[:=]\s*)(?:(?:bearer|basic|token)\s+)?[^\s"']+`), "${1}[redacted]"},
		{regexp.MustCompile(`(?i)\b((?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,}`), "${1}[redacted]"},
		{regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@"']*:)[^@\s/"']+@`), "${1}[redacted]@"},
		{regexp.MustCompile(`(?i)("?(?:routing_key|integration_key)"?\s*[:=]\s*"?)[A-Za-z0-9]{16,}`), "${1}[redacted]"},
		{regexp.MustCompile(`(?i)(X-Approve-TUI-Signature\s*[:=]\s*)[^\s"']+`), "${1}[redacted]"},
	}
})

type secretShape struct {
	re   *regexp.Regexp
	with string
}

// RedactKnown replaces the secrets text holds by their shape
// (knownSecretShapes): for text from elsewhere, such as the errors stored
// by a notifier whose configuration this process has not read.
func RedactKnown(text string) string {
	for _, k := range knownSecretShapes() {
		text = k.re.ReplaceAllString(text, k.with)
	}
	return text
}

// How a secret is found in text (an exec command's output, a receiver's
// answer, an error): not only its value as is, but
//   - its URL-encoded forms (query and path escaping; every byte but
//     RFC 3986's unreserved ones escaped; every byte escaped; hex digits
//     in either case),
//   - its base64 forms, standard and URL alphabets, at each of the three
//     alignments it can have inside a longer encoded text (the part of
//     the encoding that depends on the secret alone: "user:SECRET" or a
//     whole header base64-encoded still shows it),
//   - and any of these with white space or escaped line breaks (\n, \t,
//     \x0d, as model.Sanitize writes them) inserted anywhere: text and
//     forms are compared with those taken out, and what matched is
//     replaced from its first character to its last, breaks included.

// minEncodedForm is the shortest derived (encoded) form kept: shorter
// ones would match ordinary text.
const minEncodedForm = 8

// encodedForms are v and the forms of it that text may carry.
func encodedForms(v string) []string {
	out := []string{v}
	seen := map[string]bool{v: true}
	addForm := func(f string) {
		if len(f) >= minEncodedForm && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, e := range []string{url.QueryEscape(v), url.PathEscape(v), escapeUnreserved(v), escapeAll(v)} {
		addForm(e)
		addForm(lowerHexEscapes(e))
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := 0; k < 3; k++ {
			b := append(make([]byte, k, k+len(v)), v...)
			e := enc.EncodeToString(b)
			// Characters that carry bits of the k bytes before, or of
			// the bytes after, depend on the text around: left out.
			lead, end := (8*k+5)/6, 8*len(b)/6
			if end > lead {
				addForm(e[lead:end])
			}
		}
	}
	return out
}

// escapeUnreserved percent-encodes every byte of s but RFC 3986's
// unreserved characters (ALPHA DIGIT - . _ ~), in upper-case hex.
func escapeUnreserved(s string) string {
	const hexUpper = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexUpper[c>>4])
		b.WriteByte(hexUpper[c&15])
	}
	return b.String()
}

// escapeAll percent-encodes every byte of s, in upper-case hex.
func escapeAll(s string) string {
	const hexUpper = "0123456789ABCDEF"
	b := make([]byte, 0, 3*len(s))
	for i := 0; i < len(s); i++ {
		b = append(b, '%', hexUpper[s[i]>>4], hexUpper[s[i]&15])
	}
	return string(b)
}

// lowerHexEscapes is s with the hex digits of its %XX escapes in lower
// case.
func lowerHexEscapes(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			for j := i + 1; j <= i+2; j++ {
				if b[j] >= 'A' && b[j] <= 'F' {
					b[j] += 'a' - 'A'
				}
			}
			i += 2
		}
	}
	return string(b)
}

// breakEscapes are the escaped forms of white space model.Sanitize writes
// on one line; they are skipped like white space when matching.
var breakEscapes = []string{`\n`, `\t`, `\r`, `\x0d`, `\x0a`, `\x09`, `\x0b`, `\x0c`}

// squeeze is s without white space and breakEscapes, and for each byte
// kept its offset in s.
func squeeze(s string) (string, []int) {
	var b strings.Builder
	idx := make([]int, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
			i++
			continue
		}
		if c == '\\' {
			skip := 0
			for _, e := range breakEscapes {
				if strings.HasPrefix(s[i:], e) {
					skip = len(e)
					break
				}
			}
			if skip > 0 {
				i += skip
				continue
			}
		}
		b.WriteByte(c)
		idx = append(idx, i)
		i++
	}
	return b.String(), idx
}

// scrubForms replaces in s every occurrence of each form, white space and
// escaped breaks inside it ignored (squeeze), by [redacted].
func scrubForms(s string, forms []string) string {
	if s == "" || len(forms) == 0 {
		return s
	}
	sq, idx := squeeze(s)
	type span struct{ from, to int } // byte offsets in s, to exclusive
	var spans []span
	for _, f := range forms {
		fs, _ := squeeze(f)
		if len(fs) < 4 {
			continue
		}
		for off := 0; off+len(fs) <= len(sq); {
			i := strings.Index(sq[off:], fs)
			if i < 0 {
				break
			}
			a, z := off+i, off+i+len(fs)-1
			spans = append(spans, span{idx[a], idx[z] + 1})
			off = a + 1
		}
	}
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	var b strings.Builder
	at := 0
	for i := 0; i < len(spans); {
		from, to := spans[i].from, spans[i].to
		for i++; i < len(spans) && spans[i].from <= to; i++ {
			to = max(to, spans[i].to)
		}
		b.WriteString(s[at:from])
		b.WriteString("[redacted]")
		at = to
	}
	b.WriteString(s[at:])
	return b.String()
}

// urlCores are the parts of a URL that are the secret: its password and
// query values, and, for a URL that is itself the secret, its path
// segments that look like a credential (tokenLike). The scheme, host and
// plain words are no secret: a fragment of them is no sign of one.
func urlCores(raw string, secretPath bool) []string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil
	}
	var out []string
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	for _, vs := range u.Query() {
		out = append(out, vs...)
	}
	if secretPath {
		for _, seg := range strings.Split(strings.Trim(u.Path, "/"), "/") {
			if len(seg) >= 6 && tokenLike(seg) {
				out = append(out, seg)
			}
		}
	}
	return out
}

// fragmentLen is the length of the shortest piece of a secret a line of
// an exec command's output is withheld for.
const fragmentLen = 8

// WithholdFragments is an exec command's output with every line that
// holds a piece of a configured secret (fragmentLen characters or more of
// its value, or of an encoded form: encodedForms) replaced by "[line
// withheld: it holds part of a secret]". A script that traces itself
// (set -x) prints a secret cut into pieces (first=${s%…}, rest=…) that no
// whole-value match finds; its lines go. Shorter pieces are left to the
// whole-form redaction (Redact), which also joins pieces split across
// lines.
func (s *Secrets) WithholdFragments(text string) string {
	if s == nil || text == "" {
		return text
	}
	_, cores := s.values()
	var pieces []string
	for _, c := range cores {
		for _, f := range encodedForms(c) {
			if len(f) < fragmentLen {
				if len(f) >= 4 {
					pieces = append(pieces, f)
				}
				continue
			}
			for i := 0; i+fragmentLen <= len(f); i++ {
				pieces = append(pieces, f[i:i+fragmentLen])
			}
		}
	}
	if len(pieces) == 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		sq, _ := squeeze(l)
		for _, p := range pieces {
			if strings.Contains(sq, p) {
				lines[i] = "[line withheld: it holds part of a secret]"
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}
