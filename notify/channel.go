package notify

// Channels: one Sender per configured channel, each turning an Event into
// the payload its service documents (ntfy.go, slack.go, pagerduty.go,
// webhook.go, exec.go) and sending it once. Retrying is the notifier's
// job: a failed Send returns a *SendError saying whether another attempt
// can help and, when the service said so, how long to wait first.
//
// Documentation used for the error classes shared by the HTTP channels:
//   - https://developer.pagerduty.com/docs/events-api-v2/overview/
//     ("Response Codes & Retry Logic": 429, 5xx and network errors are
//     retried, other 4xx are not) — the rule every HTTP channel follows.
//   - https://api.slack.com/changelog/2016-05-17-changes-to-errors-for-incoming-webhooks
//     (Slack's 400/403/404/410 are the request's fault, 500 is not).
//   - https://api.slack.com/docs/rate-limits (429 with a Retry-After
//     header in seconds, incoming webhooks included).
//   - RFC 9110 §10.2.3: Retry-After is delay-seconds or an HTTP-date.
//
// Secrets never reach an error message: a secret URL is named by what it
// is ("Slack webhook"), a non-secret URL loses its query string and user
// info, and every message is scrubbed of the secret values a sender
// resolved before it leaves this package.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
)

// Sender delivers events to one channel.
type Sender interface {
	// Send delivers ev once; d identifies the delivery (the same for every
	// attempt of it). A failure is a *SendError.
	Send(ctx context.Context, ev Event, d Delivery) error
	// Name is the channel's name in the configuration file.
	Name() string
}

// Delivery identifies one delivery of one event to one channel. ID is
// stable across attempts (the notifier makes it from the approval id, the
// kind, the step and the channel) so that receivers can de-duplicate a
// retry that reached them twice; Attempt counts from 1.
//
// Who uses ID: the webhook sends it (X-Approve-TUI-Delivery, delivery_id)
// and so does exec (stdin, APPROVE_TUI_DELIVERY_ID). PagerDuty
// de-duplicates on its own dedup_key, the approval id. ntfy and Slack
// incoming webhooks document no idempotency key, so a retry after a lost
// response can show twice there.
type Delivery struct {
	ID      string
	Attempt int
}

// Resolver reads a secret named in the configuration.
type Resolver func(config.Secret) (string, error)

// Options are what every sender shares.
type Options struct {
	// Client sends the HTTP channels' requests. Default: a client with
	// the channel's Timeout (10 s when zero) that does not follow
	// redirects (a redirected POST would go elsewhere as a GET).
	Client *http.Client
	// Version makes the User-Agent, "approve-tui/VERSION" ("dev" when
	// empty).
	Version string
	// Resolve reads secrets (token, routing key, signing secret, secret
	// URL) when a delivery needs them. Default: ResolveSecret.
	Resolve Resolver
	// Now is the clock (default time.Now): the webhook signature's
	// timestamp, and "time left" when an Event has no At.
	Now func() time.Time
	// Secrets are every channel's secrets (NewSecrets of the whole
	// configuration): an exec channel's command runs without any
	// (Secrets.Environ), and its output loses the lines holding a piece
	// of one (Secrets.WithholdFragments). nil: an exec command's
	// environment loses only PGPASSWORD and URLs with a password. A
	// Sender's errors are redacted with its own secrets; the Notifier
	// redacts what it logs and stores with every channel's.
	Secrets *Secrets
}

// DefaultTimeout bounds one delivery when the channel sets no timeout.
const DefaultTimeout = 10 * time.Second

// NewSender returns the sender for ch, checking that the channel has what
// its type needs. Secrets are not read here: they are read at each Send,
// so a rotated secret is picked up and an unset one fails that delivery.
func NewSender(ch *config.Channel, opts Options) (Sender, error) {
	if ch == nil {
		return nil, errors.New("notify: nil channel")
	}
	b := &base{ch: ch, timeout: ch.Timeout, ua: "approve-tui/dev"}
	if b.timeout <= 0 {
		b.timeout = DefaultTimeout
	}
	if v := strings.TrimSpace(opts.Version); v != "" {
		b.ua = "approve-tui/" + model.Sanitize(v, model.Line)
	}
	b.client = opts.Client
	if b.client == nil {
		b.client = &http.Client{
			Timeout: b.timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	b.resolve = opts.Resolve
	if b.resolve == nil {
		b.resolve = ResolveSecret
	}
	b.now = opts.Now
	if b.now == nil {
		b.now = time.Now
	}
	where := fmt.Sprintf("notify: channel %q", ch.Name)
	if ch.Line > 0 {
		where += fmt.Sprintf(" (line %d)", ch.Line)
	}
	b.secrets = opts.Secrets
	switch ch.Type {
	case config.TypeNtfy:
		return newNtfy(b, where)
	case config.TypeSlack:
		return newSlack(b, where)
	case config.TypePagerDuty:
		return newPagerDuty(b, where)
	case config.TypeWebhook:
		return newWebhook(b, where)
	case config.TypeExec:
		return newExec(b, where)
	default:
		return nil, fmt.Errorf("%s: unknown type %q", where, model.Sanitize(ch.Type, model.Line))
	}
}

// ResolveSecret is the default Resolver: the configuration's own
// (config.Secret.Resolve: the environment variable, else the file).
func ResolveSecret(s config.Secret) (string, error) { return s.Resolve() }

// SendError is a failed delivery.
type SendError struct {
	// Channel is the channel's name.
	Channel string
	// Status is the HTTP status the service answered (0: none, e.g. a
	// network error, a timeout, or an exec channel).
	Status int
	// Retryable: another attempt may succeed (network errors, timeouts,
	// HTTP 408, 429 and 5xx, an exec command's non-zero exit). Other 4xx,
	// bad configuration and unreadable secrets are permanent.
	Retryable bool
	// RetryAfter is how long the service asked to wait (Retry-After), 0
	// when it did not say.
	RetryAfter time.Duration
	// Err says what happened; it never holds a secret.
	Err error
}

func (e *SendError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "notify: channel %q: ", e.Channel)
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("delivery failed")
	}
	if e.Retryable {
		b.WriteString(" (retryable")
		if e.RetryAfter > 0 {
			fmt.Fprintf(&b, ", retry after %s", e.RetryAfter)
		}
		b.WriteString(")")
	} else {
		b.WriteString(" (permanent)")
	}
	return b.String()
}

func (e *SendError) Unwrap() error { return e.Err }

// base is what every sender holds.
type base struct {
	ch      *config.Channel
	client  *http.Client
	resolve Resolver
	now     func() time.Time
	timeout time.Duration
	ua      string
	secrets *Secrets
}

func (b *base) Name() string { return b.ch.Name }

// permanent and retryable make SendErrors whose text is already safe.
func (b *base) permanent(format string, args ...any) *SendError {
	return &SendError{Channel: b.ch.Name, Err: fmt.Errorf(format, args...)}
}

// secret reads a secret; what names it in errors ("ntfy token").
func (b *base) secret(s config.Secret, what string) (string, *SendError) {
	v, err := b.resolve(s)
	if err != nil {
		// The resolver's message names the variable or file, not the
		// value; scrub it anyway in case a resolver quotes what it read.
		msg := err.Error()
		if v != "" {
			msg = strings.ReplaceAll(msg, v, "[redacted]")
		}
		return "", b.permanent("%s: %s", what, model.Sanitize(msg, model.Line))
	}
	if v == "" {
		return "", b.permanent("%s: empty secret", what)
	}
	return v, nil
}

// redactor replaces secret values in error text.
type redactor []string

func (r *redactor) add(vals ...string) {
	for _, v := range vals {
		if len(v) >= 4 {
			*r = append(*r, encodedForms(v)...)
		}
	}
}

// addURL adds a secret URL and the parts of it that carry the secret
// (path segments, query values, user info) in raw and decoded forms.
func (r *redactor) addURL(raw string) {
	r.add(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	r.add(u.String(), u.RawQuery, u.EscapedPath(), u.Path, u.Host+u.EscapedPath())
	if u.User != nil {
		r.add(u.User.String(), u.User.Username())
		if p, ok := u.User.Password(); ok {
			r.add(p)
		}
	}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i, seg := range segs {
		// Token-like segments, and the last one (Slack's token, an ntfy
		// topic); a plain word such as "services" is no credential.
		if len(seg) >= 6 && (i == len(segs)-1 || tokenLike(seg)) {
			r.add(seg, url.PathEscape(seg))
		}
	}
	for _, vs := range u.Query() {
		r.add(vs...)
	}
}

// addPlainURL adds the secret parts of a URL written in the file: its
// query string and values (ntfy's ?auth=, a token a webhook URL carries)
// and user info.
func (r *redactor) addPlainURL(raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	if u.RawQuery != "" {
		r.add(u.RawQuery)
		for _, vs := range u.Query() {
			for _, v := range vs {
				r.add(v, url.QueryEscape(v))
			}
		}
	}
	if u.User != nil {
		r.add(u.User.String())
		if p, ok := u.User.Password(); ok {
			r.add(p)
		}
	}
}

// tokenLike reports whether a path segment looks like a credential: it
// has a digit or an upper-case letter, not only lower-case letters.
func tokenLike(seg string) bool {
	return strings.ContainsAny(seg, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

func (r redactor) scrub(s string) string { return scrubForms(s, r) }

// httpURLOK reports whether raw is an absolute http(s) URL.
func httpURLOK(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// safeURL is a non-secret URL as errors may show it: no user info, no
// query, no fragment.
func safeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(invalid URL)"
	}
	v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	return model.Sanitize(v.String(), model.Line)
}

// httpTarget says where a request goes and how to speak of it.
type httpTarget struct {
	// what names the endpoint in errors ("Slack webhook").
	what    string
	url     string
	header  http.Header
	body    []byte
	secrets redactor
	// ok reports whether a status is success (default: 2xx).
	ok func(int) bool
	// defaultRetryAfter is used for a 429 without Retry-After.
	defaultRetryAfter time.Duration
}

// maxErrorBody is how much of a failed response's body an error quotes.
const maxErrorBody = 200

// post sends t as a POST within the channel's timeout and classifies the
// outcome.
func (b *base) post(ctx context.Context, t httpTarget) error {
	if !httpURLOK(t.url) {
		// url.Parse errors quote the URL: say nothing of it.
		return b.permanent("%s: invalid URL (want http or https)", t.what)
	}
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(t.body))
	if err != nil {
		// url.Parse errors quote the URL: say nothing of it.
		return b.permanent("%s: invalid URL", t.what)
	}
	for k, vs := range t.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("User-Agent", b.ua)
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return &SendError{
			Channel:   b.ch.Name,
			Retryable: true,
			Err:       transportError(ctx, t.what, err, t.secrets),
		}
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody+1))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	ok := t.ok
	if ok == nil {
		ok = func(s int) bool { return s >= 200 && s < 300 }
	}
	if ok(resp.StatusCode) {
		return nil
	}
	se := &SendError{Channel: b.ch.Name, Status: resp.StatusCode}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		se.Retryable = true
		se.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), b.now())
		if se.RetryAfter == 0 {
			se.RetryAfter = t.defaultRetryAfter
		}
	case resp.StatusCode >= 500, resp.StatusCode == http.StatusRequestTimeout:
		se.Retryable = true
		se.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), b.now())
	}
	msg := fmt.Sprintf("%s answered %d %s", t.what, resp.StatusCode, http.StatusText(resp.StatusCode))
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		msg += " (redirect not followed)"
	}
	if s := quoteBody(snippet); s != "" {
		msg += ": " + s
	}
	se.Err = errors.New(t.secrets.scrub(msg))
	return se
}

// quoteBody is the start of a response body, safe to print on one line.
func quoteBody(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	cut := false
	if len(s) > maxErrorBody {
		s, cut = s[:maxErrorBody], true
	}
	s = model.Sanitize(strings.ToValidUTF8(s, "?"), model.Line)
	if cut {
		s += "…"
	}
	return s
}

// transportError describes a failed request without the URL (a
// *url.Error quotes it, and it may hold a token). Timeouts and
// cancellations wrap the context errors so errors.Is still works.
func transportError(ctx context.Context, what string, err error, secrets redactor) error {
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
		return fmt.Errorf("%s: request canceled: %w", what, context.Canceled)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%s: request timed out: %w", what, context.DeadlineExceeded)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%s: request timed out: %w", what, context.DeadlineExceeded)
	}
	inner := err
	var ue *url.Error
	if errors.As(err, &ue) {
		inner = ue.Err
	}
	msg := model.Sanitize(secrets.scrub(inner.Error()), model.Line)
	return fmt.Errorf("%s: request failed: %s", what, msg)
}

// parseRetryAfter reads Retry-After: delay-seconds or an HTTP-date
// (RFC 9110 §10.2.3). 0 when absent, unreadable or in the past.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n > int64(24*time.Hour/time.Second) {
			n = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d.Round(time.Second)
		}
	}
	return 0
}
