package notify

// ntfy: https://docs.ntfy.sh/publish/ (source: docs/publish.md of
// github.com/binwiederhier/ntfy). What we took from it:
//   - "Publish as JSON": PUT/POST the whole message as a JSON object to
//     the server's root URL (not the topic URL); "topic" is the only
//     required field; fields message, title, tags (string array),
//     priority (int 1..5), click (URL), actions (JSON array), markdown.
//     We publish as JSON rather than with X-Title/X-Tags/... headers
//     because the title and message come from agents: in a JSON body no
//     newline or non-ASCII character can break or smuggle a header, and
//     no RFC 2047 encoding is needed.
//   - "Message priority": 5 max/urgent, 4 high, 3 default, 2 low, 1 min.
//   - "Tags & emojis": tags matching an emoji short code (warning,
//     rotating_light, white_check_mark, x, ...) are shown as emojis.
//   - "Action buttons" / "Open website/app": {"action": "view", "label",
//     "url"}; "Click action": click takes a URL. Both only when the open
//     hint is an http(s) URL; an ssh command goes in the message.
//   - "Authentication" / "Access tokens": Authorization: Bearer <token>.
//   - "Picking a topic": topic names are [-_A-Za-z0-9], up to 64
//     characters, and "the topic is essentially a password": errors name
//     the server, not the topic URL.
//   - "Attach local file": a message over 4,096 bytes becomes an
//     attachment, so the message is kept well under that.
//   - Templating ("Message templating") only happens when X-Template or
//     ?template= asks for it; we never do, so "{{" in a command is text.
//
// De-duplication: the publish API documents no idempotency key. (Newer
// servers document "sequence_id" for updating a notification in place;
// we do not send it, as older servers do not know it.) A retry after a
// lost response may therefore show twice.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/approve-tui/approve-tui/model"
)

// ntfyMessage is the JSON publishing body (the fields we use).
type ntfyMessage struct {
	Topic    string       `json:"topic"`
	Message  string       `json:"message"`
	Title    string       `json:"title"`
	Tags     []string     `json:"tags,omitempty"`
	Priority int          `json:"priority"`
	Click    string       `json:"click,omitempty"`
	Actions  []ntfyAction `json:"actions,omitempty"`
}

// ntfyAction is a "view" action button.
type ntfyAction struct {
	Action string `json:"action"`
	Label  string `json:"label"`
	URL    string `json:"url"`
}

// maxNtfyMessageBytes keeps the message under ntfy's 4,096-byte limit.
const maxNtfyMessageBytes = 3500

var ntfyTopicRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[-_A-Za-z0-9]{1,64}$`) })

type ntfySender struct {
	*base
	urlSecret bool
}

func newNtfy(b *base, where string) (Sender, error) {
	s := &ntfySender{base: b, urlSecret: b.ch.URL == "" && b.ch.URLSecret.Set()}
	if !s.urlSecret {
		if _, _, err := splitNtfyURL(b.ch.URL); err != nil {
			return nil, fmt.Errorf("%s: ntfy url: %v", where, err)
		}
	}
	return s, nil
}

// splitNtfyURL turns a topic URL (https://ntfy.sh/mytopic) into the root
// URL JSON is published to and the topic. A query string (e.g. ntfy's
// ?auth=) stays on the root URL.
func splitNtfyURL(raw string) (root, topic string, err error) {
	u, perr := url.Parse(raw)
	if perr != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", "", fmt.Errorf("want an http(s) topic URL like https://ntfy.sh/mytopic")
	}
	p := strings.TrimSuffix(u.Path, "/")
	i := strings.LastIndex(p, "/")
	topic = p[i+1:]
	if !ntfyTopicRE().MatchString(topic) {
		return "", "", fmt.Errorf("the URL's last path segment must be a topic name ([-_A-Za-z0-9], at most 64)")
	}
	u.Path = p[:i+1]
	u.RawPath = ""
	u.Fragment = ""
	return u.String(), topic, nil
}

// ntfyPriority maps risk to ntfy's priority: high, critical and unknown
// are max (5), medium default (3), low low (2); a resolution is low.
func ntfyPriority(ev Event) int {
	if ev.Kind == KindRefused || ev.Kind == KindRanWithoutApproval {
		return 5
	}
	if ev.Kind == KindResolved {
		return 2
	}
	switch {
	case riskRank(ev.Risk) >= riskRank("high"):
		return 5
	case ev.Risk == "medium":
		return 3
	default:
		return 2
	}
}

// ntfyTags are emoji short codes from ntfy's list, then our own tag.
func ntfyTags(ev Event) []string {
	if ev.Kind == KindRefused || ev.Kind == KindRanWithoutApproval {
		return []string{"rotating_light", "approve-tui"}
	}
	if ev.Kind == KindResolved {
		switch ev.Outcome {
		case "approved":
			return []string{"white_check_mark", "approve-tui"}
		case "denied":
			return []string{"x", "approve-tui"}
		default:
			return []string{"hourglass", "approve-tui"}
		}
	}
	switch {
	case riskRank(ev.Risk) >= riskRank("high"):
		return []string{"rotating_light", "warning", "approve-tui"}
	case ev.Risk == "medium":
		return []string{"warning", "approve-tui"}
	default:
		return []string{"bell", "approve-tui"}
	}
}

// ntfyBody builds the JSON publishing body.
func ntfyBody(topic string, ev Event, p pageText) ([]byte, error) {
	msg := p.plain()
	if len(msg) > maxNtfyMessageBytes {
		// Cut at a byte bound; a rune cut in two is dropped.
		msg = strings.ToValidUTF8(msg[:maxNtfyMessageBytes], "") + "…\n" + p.Note
	}
	m := ntfyMessage{
		Topic:    topic,
		Message:  msg,
		Title:    p.Title,
		Tags:     ntfyTags(ev),
		Priority: ntfyPriority(ev),
	}
	if p.OpenURL != "" {
		m.Click = p.OpenURL
		m.Actions = []ntfyAction{{Action: "view", Label: "Open in console", URL: p.OpenURL}}
	}
	return json.Marshal(m)
}

func (s *ntfySender) Send(ctx context.Context, ev Event, _ Delivery) error {
	ev = cleanEvent(ev)
	var sec redactor
	raw := s.ch.URL
	what := "ntfy server"
	if s.urlSecret {
		v, err := s.secret(s.ch.URLSecret, "ntfy topic URL")
		if err != nil {
			return err
		}
		raw = v
		sec.addURL(v)
	}
	root, topic, err := splitNtfyURL(raw)
	if err != nil {
		return s.permanent("ntfy topic URL: %v", err)
	}
	if u, perr := url.Parse(root); perr == nil {
		what = "ntfy server " + model.Sanitize(u.Host, model.Line)
	}
	// The topic is a password on public servers: keep it out of errors.
	sec.add(topic)
	if q, perr := url.Parse(raw); perr == nil {
		for _, vs := range q.Query() {
			sec.add(vs...)
		}
		sec.add(q.RawQuery)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if s.ch.Token.Set() {
		tok, err := s.secret(s.ch.Token, "ntfy token")
		if err != nil {
			return err
		}
		if strings.ContainsAny(tok, "\r\n") {
			return s.permanent("ntfy token: contains a line break")
		}
		sec.add(tok)
		h.Set("Authorization", "Bearer "+tok)
	}
	body, err := ntfyBody(topic, ev, renderText(ev, s.now))
	if err != nil {
		return s.permanent("ntfy: encoding the message failed")
	}
	return s.post(ctx, httpTarget{what: what, url: root, header: h, body: body, secrets: sec})
}
