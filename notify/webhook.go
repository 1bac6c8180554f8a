package notify

// The generic webhook: our own format, so no service documentation rules
// it. It follows the shape receivers know from Stripe's webhook
// signatures (https://stripe.com/docs/webhooks/signatures#verify-manually: a
// "t=TIMESTAMP,v1=SIGNATURE" header, HMAC-SHA256 over "TIMESTAMP.BODY",
// compared in constant time, timestamps outside a tolerance refused as
// replays) and RFC 2104 / FIPS 198-1 for HMAC itself.
//
//	POST <url>
//	Content-Type: application/json
//	User-Agent: approve-tui/VERSION
//	X-Approve-TUI-Event: page | escalation | reminder | resolved
//	X-Approve-TUI-Delivery: <delivery id>           (when the notifier gives one)
//	X-Approve-TUI-Signature: t=<unix>,v1=<hex hmac> (when a secret is set)
//
// The body is WebhookPayload. A receiver de-duplicates on delivery_id
// (the same for every attempt of a delivery, and never the same for two
// deliveries: deliveryIDSafe), verifies with
// VerifyWebhook, and answers 2xx. 408, 429 and 5xx are retried (429 and
// 503 honour Retry-After); other answers, redirects included, are not.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Webhook headers.
const (
	WebhookSignatureHeader = "X-Approve-TUI-Signature"
	WebhookDeliveryHeader  = "X-Approve-TUI-Delivery"
	WebhookEventHeader     = "X-Approve-TUI-Event"
)

// DefaultWebhookTolerance is VerifyWebhook's tolerance when given 0.
const DefaultWebhookTolerance = 5 * time.Minute

// WebhookPayload is the webhook's JSON body (and an exec command's
// stdin). Times are RFC 3339 in UTC, null when unset (expires_at: the
// proposal never expires).
type WebhookPayload struct {
	DeliveryID string `json:"delivery_id"`
	Event      string `json:"event"`
	// Step is the index of the route's step, 0-based: 0 for the page, 1
	// for the first escalation (the summary, the console and config check
	// say "step 1", "step 2": StepNumber). Reminders and resolutions carry
	// 0; a vote, the number of votes.
	Step       int     `json:"step"`
	ApprovalID string  `json:"approval_id"`
	Risk       string  `json:"risk"`
	SessionKey string  `json:"session_key"`
	Requester  string  `json:"requester"`
	CreatedAt  *string `json:"created_at"`
	ExpiresAt  *string `json:"expires_at"`
	At         *string `json:"at"`
	OpenHint   string  `json:"open_hint"`
	// Command is absent when the channel leaves it out; CommandOmitted
	// then is true.
	Command        *string `json:"command,omitempty"`
	CommandOmitted bool    `json:"command_omitted"`
	// Outcome (approved, denied, expired) and Actor ("" for an expiry)
	// are present only in resolutions.
	Outcome *string `json:"outcome,omitempty"`
	Actor   *string `json:"actor,omitempty"`
	// Signers are the principals whose signatures over an approved or
	// denied resolution verified (absent when none did).
	Signers []string `json:"signers,omitempty"`
	// Approvals ("1 of 2 approvals"), Voters and Needed ("one more
	// approver from dba") are present when the policy asks for more than
	// one approver.
	Approvals string   `json:"approvals,omitempty"`
	Voters    []string `json:"voters,omitempty"`
	Needed    string   `json:"needed,omitempty"`
	// Park is present when the proposal's agent stopped waiting and it
	// is parked: its state (parked, reserved, window_over) and the words
	// that say what an approval does now and until when.
	Park *WebhookPark `json:"park,omitempty"`
	// Summary is the page's title; Note says it cannot approve.
	Summary string `json:"summary"`
	Note    string `json:"note"`
}

// WebhookPark is a parked proposal's park as a webhook or exec body
// gives it.
type WebhookPark struct {
	State string `json:"state"`
	Words string `json:"words"`
}

// headerSafe keeps printable ASCII (at most 200 bytes): what a header
// value can carry as is.
func headerSafe(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s) && len(b) < 200; i++ {
		if c := s[i]; c >= 0x21 && c <= 0x7e {
			b = append(b, c)
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
}

// maxDeliveryID bounds a delivery id as sent (a header's value).
const maxDeliveryID = 200

// deliveryIDSafe is a delivery id as sent (delivery_id,
// X-Approve-TUI-Delivery, APPROVE_TUI_DELIVERY_ID): printable ASCII but
// '%' as it is, any other byte (and '%') percent-encoded as %XX, so that
// two ids never share one (receivers de-duplicate on it: "a b" is
// "a%20b", "a_b" stays "a_b"). An encoded id longer than 200 bytes is cut
// and ends with "%~" and 32 hex digits of its SHA-256: a plain id never
// holds "%~", and two long ids share the form only if their hashes do.
func deliveryIDSafe(id string) string {
	const hexUpper = "0123456789ABCDEF"
	b := make([]byte, 0, len(id))
	for i := 0; i < len(id); i++ {
		if c := id[i]; c >= 0x21 && c <= 0x7e && c != '%' {
			b = append(b, c)
		} else {
			b = append(b, '%', hexUpper[c>>4], hexUpper[c&15])
		}
	}
	if len(b) <= maxDeliveryID {
		return string(b)
	}
	sum := sha256.Sum256([]byte(id))
	tail := "%~" + hex.EncodeToString(sum[:16])
	return string(b[:maxDeliveryID-len(tail)]) + tail
}

func rfc3339OrNil(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

// webhookBody is the JSON body for ev (cleaned here).
func webhookBody(ev Event, d Delivery) ([]byte, error) {
	ev = cleanEvent(ev)
	p := renderText(ev, nil)
	w := WebhookPayload{
		DeliveryID:     deliveryIDSafe(d.ID),
		Event:          ev.Kind,
		Step:           ev.Step,
		ApprovalID:     ev.ApprovalID,
		Risk:           ev.Risk,
		SessionKey:     ev.SessionKey,
		Requester:      ev.Requester,
		CreatedAt:      rfc3339OrNil(ev.CreatedAt),
		ExpiresAt:      rfc3339OrNil(ev.ExpiresAt),
		At:             rfc3339OrNil(ev.At),
		OpenHint:       ev.OpenHint,
		CommandOmitted: ev.CommandOmitted,
		Summary:        p.Title,
		Note:           p.Note,
		Approvals:      ev.Approvals,
		Voters:         ev.Voters,
		Needed:         ev.Needed,
	}
	if !ev.CommandOmitted {
		c := ev.Command
		w.Command = &c
	}
	if ev.ParkState != "" && ev.Kind != KindResolved && ev.Kind != KindRefused && ev.Kind != KindRanWithoutApproval {
		w.Park = &WebhookPark{State: ev.ParkState, Words: ev.Park}
	}
	if ev.Kind == KindResolved || ev.Kind == KindRefused || ev.Kind == KindRanWithoutApproval {
		o, a := ev.Outcome, ev.Actor
		w.Outcome, w.Actor = &o, &a
		w.Signers = ev.Signers
	}
	return json.Marshal(w)
}

// SignWebhook is the X-Approve-TUI-Signature value for body at t.
func SignWebhook(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(webhookMAC(secret, ts, body))
}

func webhookMAC(secret []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return m.Sum(nil)
}

// VerifyWebhook errors.
var (
	ErrWebhookNoSignature  = errors.New("webhook: no signature")
	ErrWebhookBadSignature = errors.New("webhook: signature does not match")
	ErrWebhookStale        = errors.New("webhook: timestamp outside the tolerance")
)

// VerifyWebhook checks an X-Approve-TUI-Signature header against body:
// one t=UNIX and one or more v1=HEX (several v1 allow a key rotation),
// each v1 compared in constant time with the HMAC-SHA256 of
// "UNIX.BODY" under secret; a timestamp more than tolerance away from
// now (either way) is refused as a replay (tolerance 0: 5 minutes).
func VerifyWebhook(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if len(secret) == 0 {
		return errors.New("webhook: empty secret")
	}
	if tolerance <= 0 {
		tolerance = DefaultWebhookTolerance
	}
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			if ts != "" {
				return fmt.Errorf("%w: two timestamps", ErrWebhookBadSignature)
			}
			ts = v
		case "v1":
			if sig, err := hex.DecodeString(v); err == nil && len(sig) == sha256.Size {
				sigs = append(sigs, sig)
			}
		}
	}
	if ts == "" || len(sigs) == 0 {
		return ErrWebhookNoSignature
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || unix <= 0 {
		return fmt.Errorf("%w: bad timestamp", ErrWebhookBadSignature)
	}
	want := webhookMAC(secret, ts, body)
	match := 0
	for _, sig := range sigs {
		match |= boolInt(hmac.Equal(sig, want))
	}
	if match == 0 {
		return ErrWebhookBadSignature
	}
	skew := now.Sub(time.Unix(unix, 0))
	if skew < 0 {
		skew = -skew
	}
	if skew > tolerance {
		return ErrWebhookStale
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

type webhookSender struct {
	*base
}

func newWebhook(b *base, where string) (Sender, error) {
	if b.ch.URL == "" && !b.ch.URLSecret.Set() {
		return nil, fmt.Errorf("%s: webhook needs url (or url_env / url_file)", where)
	}
	if b.ch.URL != "" && !httpURLOK(b.ch.URL) {
		return nil, fmt.Errorf("%s: url: want an http(s) URL", where)
	}
	return &webhookSender{base: b}, nil
}

func (s *webhookSender) Send(ctx context.Context, ev Event, d Delivery) error {
	var sec redactor
	raw, what := s.ch.URL, "webhook "+safeURL(s.ch.URL)
	if s.ch.URLSecret.Set() {
		v, err := s.secret(s.ch.URLSecret, "webhook URL")
		if err != nil {
			return err
		}
		raw, what = v, "webhook (URL from secret)"
		sec.addURL(v)
	} else if i := strings.IndexByte(raw, '?'); i >= 0 {
		// The query string may carry a token: keep it out of errors.
		sec.add(raw[i+1:])
	}
	body, err := webhookBody(ev, d)
	if err != nil {
		return s.permanent("webhook: encoding the event failed")
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(WebhookEventHeader, headerSafe(cleanEvent(ev).Kind))
	if id := deliveryIDSafe(d.ID); id != "" {
		h.Set(WebhookDeliveryHeader, id)
	}
	if s.ch.SigningSecret.Set() {
		key, serr := s.secret(s.ch.SigningSecret, "webhook signing secret")
		if serr != nil {
			return serr
		}
		sec.add(key)
		h.Set(WebhookSignatureHeader, SignWebhook([]byte(key), s.now(), body))
	}
	return s.post(ctx, httpTarget{what: what, url: raw, header: h, body: body, secrets: sec})
}
