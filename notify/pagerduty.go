package notify

// PagerDuty Events API v2. Documentation used:
//   - https://developer.pagerduty.com/docs/events-api-v2/trigger-events/
//     (docs/events-API-v2/02-Trigger-Events.md of PagerDuty/developer-docs):
//     endpoint https://events.pagerduty.com/v2/enqueue; routing_key and
//     event_action (trigger, acknowledge, resolve) required; dedup_key at
//     most 255 characters; payload.summary (required, at most 1024
//     characters), payload.source (required), payload.severity (required:
//     critical, error, warning, info), payload.timestamp, component,
//     group, class, custom_details; client, links. A resolve carries only
//     routing_key, dedup_key and event_action. Events for a dedup_key
//     apply to the open alert with that key: our dedup_key is the
//     approval id, so a retried trigger, an escalation and a reminder
//     land on one alert, and the resolution closes it.
//   - https://developer.pagerduty.com/docs/events-api-v2/overview/
//     ("Response Codes & Retry Logic"): 202 accepted; 400 bad request,
//     do not retry; 429 and 5xx and network errors, retry after some
//     time. Payloads are limited to 512 KB.
//   - https://developer.pagerduty.com/docs/events-api-v2/rate-limits/
//     (05-Rate-Limits.md): on 429 "retrying 3 times with each request
//     being 30 seconds apart": a 429 without Retry-After waits 30 s.
//   - https://support.pagerduty.com/main/docs/dynamic-notifications:
//     severity sets urgency: critical ("a failure in the system's primary
//     application") and error ("fatal to the operation, but not the
//     service or application") are high urgency and escalate; warning
//     ("may indicate that an error will occur if action is not taken")
//     and info ("require no action") are low urgency and do not.
//
// Severity: nothing has failed, an agent's operation is held until a
// human answers, which is PagerDuty's "error". So high and unknown (which
// fails closed) are error; tier2_critical, the highest tier, is critical
// so it sorts first in PagerDuty's lists; medium and low are warning: the
// proposal expires if nobody acts (info would say no action is needed).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/model"
)

// DefaultPagerDutyEventsURL is the Events API v2 endpoint.
const DefaultPagerDutyEventsURL = "https://events.pagerduty.com/v2/enqueue"

// pdEvent is an Events API v2 alert event.
type pdEvent struct {
	RoutingKey  string     `json:"routing_key"`
	EventAction string     `json:"event_action"`
	DedupKey    string     `json:"dedup_key"`
	Payload     *pdPayload `json:"payload,omitempty"`
	Client      string     `json:"client,omitempty"`
	Links       []pdLink   `json:"links,omitempty"`
}

type pdPayload struct {
	Summary       string    `json:"summary"`
	Source        string    `json:"source"`
	Severity      string    `json:"severity"`
	Timestamp     string    `json:"timestamp,omitempty"`
	Component     string    `json:"component,omitempty"`
	Group         string    `json:"group,omitempty"`
	Class         string    `json:"class,omitempty"`
	CustomDetails pdDetails `json:"custom_details"`
}

// pdDetails are the alert's custom_details.
type pdDetails struct {
	ApprovalID string `json:"approval_id"`
	Event      string `json:"event"`
	// Step is the step as people count it (StepNumber: 1 for the first
	// page), as the summary says it: PagerDuty shows the details beside
	// the summary. Only pages and escalations have one.
	Step           int    `json:"step,omitempty"`
	Risk           string `json:"risk"`
	Session        string `json:"session"`
	Requester      string `json:"requester"`
	ExpiresAt      string `json:"expires_at"`
	TimeLeft       string `json:"time_left"`
	OpenHint       string `json:"open_hint"`
	Command        string `json:"command,omitempty"`
	CommandOmitted bool   `json:"command_omitted,omitempty"`
	// Parked says what an approval of a parked proposal does now and
	// until when (absent when it is not parked).
	Parked string `json:"parked,omitempty"`
	Note   string `json:"note"`
}

type pdLink struct {
	Href string `json:"href"`
	Text string `json:"text"`
}

const (
	pdSummaryMax  = 1024
	pdDedupKeyMax = 255
	pdRetryAfter  = 30 * time.Second
)

// pdSeverity maps risk to a severity (see the file's comment).
func pdSeverity(risk string) string {
	switch model.RiskLevel(risk) {
	case model.RiskTier2:
		return "critical"
	case model.RiskHigh:
		return "error"
	case model.RiskMedium, model.RiskLow:
		return "warning"
	default:
		return "error"
	}
}

// cutBytes cuts s to at most n bytes at a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// pdBody builds the event for a cleaned Event.
func pdBody(key string, ev Event, p pageText, at time.Time) pdEvent {
	e := pdEvent{RoutingKey: key, DedupKey: cutBytes(ev.ApprovalID, pdDedupKeyMax)}
	if ev.Kind == KindRefused {
		// An incident of its own: the approval's resolution must not
		// close it.
		e.DedupKey = cutBytes(ev.ApprovalID+"/refused", pdDedupKeyMax)
	}
	if ev.Kind == KindRanWithoutApproval {
		e.DedupKey = cutBytes(ev.ApprovalID+"/ran_without_approval", pdDedupKeyMax)
	}
	if ev.Kind == KindResolved {
		e.EventAction = "resolve"
		return e
	}
	e.EventAction = "trigger"
	e.Client = "approve-tui"
	exp := "never"
	if !ev.ExpiresAt.IsZero() {
		exp = ev.ExpiresAt.UTC().Format(time.RFC3339)
	}
	d := pdDetails{
		ApprovalID: ev.ApprovalID,
		Event:      ev.Kind,
		Risk:       ev.Risk,
		Session:    ev.SessionKey,
		Requester:  ev.Requester,
		ExpiresAt:  exp,
		TimeLeft:   timeLeftText(ev, at),
		OpenHint:   p.Open,
		Note:       p.Note,
		Parked:     ev.Park,
	}
	if ev.Kind == KindPage || ev.Kind == KindEscalation {
		d.Step = StepNumber(ev.Step)
	}
	if ev.CommandOmitted {
		d.CommandOmitted = true
	} else {
		d.Command = p.Command
	}
	e.Payload = &pdPayload{
		Summary:       model.CutRunes(p.Title, pdSummaryMax),
		Source:        "approve-tui",
		Severity:      pdSeverity(ev.Risk),
		Component:     ev.SessionKey,
		Group:         ev.Requester,
		Class:         "approval " + ev.Kind,
		CustomDetails: d,
	}
	if !ev.At.IsZero() {
		e.Payload.Timestamp = ev.At.UTC().Format(time.RFC3339)
	}
	if p.OpenURL != "" {
		e.Links = []pdLink{{Href: p.OpenURL, Text: "Open in the approve-tui console"}}
	}
	return e
}

type pagerDutySender struct {
	*base
	url string
}

func newPagerDuty(b *base, where string) (Sender, error) {
	if !b.ch.RoutingKey.Set() {
		return nil, fmt.Errorf("%s: pagerduty needs routing_key_env or routing_key_file", where)
	}
	u := b.ch.EventsURL
	if u == "" {
		u = DefaultPagerDutyEventsURL
	}
	if !httpURLOK(u) {
		return nil, fmt.Errorf("%s: events_url: want an http(s) URL", where)
	}
	return &pagerDutySender{base: b, url: u}, nil
}

func (s *pagerDutySender) Send(ctx context.Context, ev Event, _ Delivery) error {
	ev = cleanEvent(ev)
	if ev.ApprovalID == "" {
		return s.permanent("PagerDuty: event has no approval id to use as dedup_key")
	}
	key, serr := s.secret(s.ch.RoutingKey, "PagerDuty routing key")
	if serr != nil {
		return serr
	}
	var sec redactor
	sec.add(key, url.QueryEscape(key))
	body, err := json.Marshal(pdBody(key, ev, renderText(ev, s.now), eventNow(ev, s.now)))
	if err != nil {
		return s.permanent("PagerDuty: encoding the event failed")
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return s.post(ctx, httpTarget{
		what:              "PagerDuty Events API at " + safeURL(s.url),
		url:               s.url,
		header:            h,
		body:              body,
		secrets:           sec,
		defaultRetryAfter: pdRetryAfter,
	})
}
