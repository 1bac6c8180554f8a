package notify

// Slack incoming webhooks with Block Kit. Documentation used:
//   - https://api.slack.com/messaging/webhooks (docs.slack.dev/messaging/
//     sending-messages-using-incoming-webhooks): POST a JSON payload with
//     Content-type: application/json to the webhook URL; "text" and
//     "blocks"; when blocks are sent, text is the fallback shown in
//     notifications. The URL is a secret: errors say "Slack webhook".
//   - https://api.slack.com/changelog/2016-05-17-changes-to-errors-for-incoming-webhooks:
//     200 "ok" is success; 400 invalid_payload/user_not_found, 403
//     action_prohibited, 404 channel_not_found, 410 channel_is_archived
//     are permanent; 500 rollup_error is not our fault (retried).
//   - https://api.slack.com/docs/rate-limits (now docs.slack.dev/apis/
//     web-api/rate-limits): about one message per second; over it, for
//     incoming webhooks too, Slack answers 429 Too Many Requests with a
//     Retry-After header in seconds, which SendError.RetryAfter carries.
//   - https://docs.slack.dev/reference/block-kit/blocks/header-block:
//     header text is plain_text, at most 150 characters.
//   - https://api.slack.com/reference/block-kit/blocks#section: section
//     text at most 3000 characters; fields at most 10, each at most 2000.
//   - https://docs.slack.dev/reference/block-kit/composition-objects/text-object:
//     type plain_text or mrkdwn; verbatim (mrkdwn only) true stops URLs,
//     channel names and mentions being parsed automatically.
//   - https://api.slack.com/reference/surfaces/formatting#escaping: &, <
//     and > are control characters and must be sent as &amp; &lt; &gt;
//     (so an agent's "<!channel>" arrives as text, not as a mention).
//     mrkdwn has no escape for a backtick, which would end our code block
//     or open a code span: it is sent as U+02CB (ˋ), a look-alike.
//
// De-duplication: incoming webhooks document no idempotency key; a retry
// after a lost response may post twice.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/model"
)

// slackMessage is the incoming webhook payload.
type slackMessage struct {
	Text   string       `json:"text"`
	Blocks []slackBlock `json:"blocks"`
}

// slackBlock is a header, section or context block.
type slackBlock struct {
	Type     string      `json:"type"`
	Text     *slackText  `json:"text,omitempty"`
	Fields   []slackText `json:"fields,omitempty"`
	Elements []slackText `json:"elements,omitempty"`
}

// slackText is a text object.
type slackText struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Verbatim bool   `json:"verbatim,omitempty"`
}

// Slack's limits, in characters.
const (
	slackHeaderMax  = 150
	slackSectionMax = 3000
	slackFieldMax   = 2000
	slackFieldsMax  = 10
)

// slackEscape makes s literal text in mrkdwn: the three control
// characters as entities, backticks as U+02CB.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "`", "\u02cb").Replace(s)
}

// slackEntities escapes only the control characters (plain_text).
func slackEntities(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// fitEscaped escapes s and cuts it so the escaped text has at most max
// characters.
func fitEscaped(s string, max int, esc func(string) string) string {
	out := esc(s)
	for n := utf8.RuneCountInString(s); utf8.RuneCountInString(out) > max && n > 1; {
		n -= utf8.RuneCountInString(out) - max
		if n < 1 {
			n = 1
		}
		out = esc(model.CutRunes(s, n))
	}
	return out
}

func mrkdwn(s string) slackText { return slackText{Type: "mrkdwn", Text: s, Verbatim: true} }

// slackPayload builds the message for a page.
func slackPayload(p pageText) slackMessage {
	m := slackMessage{Text: fitEscaped(p.Title, slackSectionMax, slackEscape)}
	m.Blocks = append(m.Blocks, slackBlock{
		Type: "header",
		Text: &slackText{Type: "plain_text", Text: fitEscaped(p.Title, slackHeaderMax, slackEntities)},
	})
	var fields []slackText
	for _, f := range p.Fields {
		if len(fields) == slackFieldsMax {
			break
		}
		fields = append(fields, mrkdwn(fitEscaped("*"+f.Label+"*\n"+f.Value, slackFieldMax, slackEscape)))
	}
	m.Blocks = append(m.Blocks, slackBlock{Type: "section", Fields: fields})
	if p.ShowCommand {
		var t string
		if p.CommandOmitted {
			t = "_" + commandOmittedText + "_"
		} else {
			t = "```\n" + fitEscaped(p.Command, slackSectionMax-8, slackEscape) + "\n```"
		}
		m.Blocks = append(m.Blocks, slackBlock{Type: "section", Text: &slackText{Type: "mrkdwn", Text: t, Verbatim: true}})
	}
	open := "`" + fitEscaped(p.Open, slackSectionMax-2, slackEscape) + "`"
	if p.OpenURL != "" {
		open = "<" + slackEntities(p.OpenURL) + "|open it in the console>"
	}
	m.Blocks = append(m.Blocks, slackBlock{Type: "context", Elements: []slackText{
		mrkdwn(open),
		mrkdwn(slackEscape(p.Note)),
	}})
	return m
}

type slackSender struct {
	*base
}

func newSlack(b *base, where string) (Sender, error) {
	if b.ch.URL == "" && !b.ch.URLSecret.Set() {
		return nil, fmt.Errorf("%s: slack needs the webhook URL (url_env or url_file)", where)
	}
	if b.ch.URL != "" && !b.ch.URLSecret.Set() && !httpURLOK(b.ch.URL) {
		return nil, fmt.Errorf("%s: url: want an http(s) URL", where)
	}
	return &slackSender{base: b}, nil
}

func (s *slackSender) Send(ctx context.Context, ev Event, _ Delivery) error {
	ev = cleanEvent(ev)
	raw := s.ch.URL
	if s.ch.URLSecret.Set() {
		v, err := s.secret(s.ch.URLSecret, "Slack webhook URL")
		if err != nil {
			return err
		}
		raw = v
	}
	// The webhook URL is the credential, however it was configured.
	var sec redactor
	sec.addURL(raw)
	body, err := json.Marshal(slackPayload(renderText(ev, s.now)))
	if err != nil {
		return s.permanent("Slack: encoding the message failed")
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return s.post(ctx, httpTarget{what: "Slack webhook", url: raw, header: h, body: body, secrets: sec})
}
