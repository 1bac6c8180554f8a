package notify

// The words every channel shares, so that a page reads the same on a
// phone, in Slack, in PagerDuty and in a webhook receiver's log: a title,
// labelled fields, the command (cut), how to open the proposal, and the
// sentence that says the message cannot approve.
//
// Every string of an Event is treated as hostile even though its maker
// sanitised it: cleanEvent runs it through model.Sanitize again (a no-op
// on clean text) and bounds it, and each channel then escapes what its
// format treats specially. No documentation page is behind this file; the
// bounds are ours (Slack's 150-character header limit sets the title's).

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
)

// Bounds, in runes.
const (
	// maxTitleRunes fits Slack's header block (150 characters).
	maxTitleRunes = 150
	// maxCommandRunes bounds the command in human-read pages.
	maxCommandRunes = 300
	// maxMachineCommandRunes bounds it in machine-read payloads (webhook,
	// exec), which the maker has cut already.
	maxMachineCommandRunes = 4000
	// maxFieldRunes bounds ids, session keys, requesters, actors, hints.
	maxFieldRunes = 200
	// maxParkRunes bounds the park words (they hold a why another
	// program may have written).
	maxParkRunes = 400
	// maxSessionInTitle keeps the title's session key short.
	maxSessionInTitle = 48
)

// commandOmittedText stands for a command the channel leaves out.
const commandOmittedText = "(command left out by configuration)"

// cleanEvent is ev with every string sanitised again and bounded: single
// lines stay single lines, the command keeps its newlines.
func cleanEvent(ev Event) Event {
	line := func(s string) string { return model.CutRunes(model.Sanitize(s, model.Line), maxFieldRunes) }
	ev.Kind = line(ev.Kind)
	ev.ApprovalID = line(ev.ApprovalID)
	ev.Risk = line(ev.Risk)
	ev.SessionKey = line(ev.SessionKey)
	ev.Requester = line(ev.Requester)
	ev.OpenHint = line(ev.OpenHint)
	if !model.IsPlainID(ev.ApprovalID) {
		// An id that is not a plain token (a row another program wrote)
		// never goes into a command the page tells the operator to run.
		ev.OpenHint = ""
	}
	ev.Outcome = line(ev.Outcome)
	ev.Actor = line(ev.Actor)
	ev.Approvals = line(ev.Approvals)
	ev.Needed = line(ev.Needed)
	ev.ParkState = line(ev.ParkState)
	ev.Park = model.CutRunes(model.Sanitize(ev.Park, model.Line), maxParkRunes)
	ev.Voters = names(ev.Voters, line)
	ev.Signers = names(ev.Signers, line)
	if ev.CommandOmitted {
		ev.Command = ""
	} else {
		ev.Command = model.CutRunes(model.Sanitize(ev.Command, model.Block), maxMachineCommandRunes)
	}
	return ev
}

// maxVoters bounds the voters a page names (a quorum is at most
// policy.MaxApprovals).
const maxVoters = 9

// StepNumber is route step index step (Event.Step: 0 for the first page)
// as people read it: "step 1" is the first page, "step 2" the first
// escalation, as the console and config check count them. Machine-read
// fields (the webhook's and exec's "step", the delivery id, the audit's
// detail) keep the index.
func StepNumber(step int) int { return step + 1 }

// riskLabel is the risk as pages print it.
func riskLabel(risk string) string {
	switch model.RiskLevel(risk) {
	case model.RiskLow:
		return "LOW"
	case model.RiskMedium:
		return "MEDIUM"
	case model.RiskHigh:
		return "HIGH"
	case model.RiskTier2:
		return "CRITICAL"
	default:
		return "UNKNOWN"
	}
}

// riskRank orders risks, unknown highest (it fails closed).
func riskRank(risk string) int { return model.RiskLevel(risk).Rank() }

// eventNow is when the event speaks of: its At, else now.
func eventNow(ev Event, now func() time.Time) time.Time {
	if !ev.At.IsZero() {
		return ev.At
	}
	if now != nil {
		return now()
	}
	return time.Now()
}

// timeLeftText: "2m (expires 2026-01-02T15:04:05Z)", "expired", "no expiry".
func timeLeftText(ev Event, at time.Time) string {
	left, ok := ev.TimeLeft(at)
	if !ok {
		return "no expiry"
	}
	exp := ev.ExpiresAt.UTC().Format(time.RFC3339)
	if left <= 0 {
		return "expired (" + exp + ")"
	}
	return human.Left(left) + " (expires " + exp + ")"
}

// isOpenURL reports whether the open hint is a web address a client can
// open (an ssh command is not).
func isOpenURL(hint string) bool {
	if hint == "" || strings.ContainsAny(hint, " \t\r\n\"'<>|\\`") {
		return false
	}
	u, err := url.Parse(hint)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil
}

// textField is one labelled value of a page.
type textField struct {
	Label, Value string
}

// pageText is an event in words.
type pageText struct {
	Title string
	// Risk is riskLabel's.
	Risk   string
	Fields []textField
	// Command is cut to maxCommandRunes; "" when omitted or resolved.
	Command        string
	CommandOmitted bool
	// ShowCommand: the page has a command section (not resolutions).
	ShowCommand bool
	// Open says how to open the proposal; OpenURL is the hint when it is
	// a web address.
	Open    string
	OpenURL string
	// Note says the message cannot approve.
	Note string
}

// Title is the one-line summary of ev (at most 150 runes).
func Title(ev Event) string { return titleOf(cleanEvent(ev)) }

// Body is ev in plain text lines: fields, command, how to open it, and
// the sentence saying the message cannot approve. now is used only when
// ev has no At.
func Body(ev Event, now time.Time) string {
	return renderText(cleanEvent(ev), func() time.Time { return now }).plain()
}

// titleOf builds the title of a cleaned event.
func titleOf(ev Event) string {
	id := ev.ApprovalID
	if id == "" {
		id = "(no id)"
	}
	where := id
	if s := model.CutRunes(ev.SessionKey, maxSessionInTitle); s != "" {
		where += " (" + s + ")"
	}
	waiting := riskLabel(ev.Risk) + " approval waiting: " + where
	switch ev.ParkState {
	case "parked", "reserved":
		// Its agent stopped waiting: an approval reaches the call asked
		// again.
		waiting = riskLabel(ev.Risk) + " approval parked: " + where
	case "window_over":
		waiting = riskLabel(ev.Risk) + " parked approval, window over: " + where
	}
	var t string
	switch ev.Kind {
	case KindEscalation:
		t = fmt.Sprintf("ESCALATION (step %d): %s", StepNumber(ev.Step), waiting)
	case KindReminder:
		left, ok := ev.TimeLeft(ev.At)
		switch {
		case !ok:
			t = "reminder: still waiting: " + waiting
		case ev.At.IsZero():
			t = "reminder: expires " + ev.ExpiresAt.UTC().Format(time.RFC3339) + ": " + waiting
		case left <= 0:
			t = "reminder: expiring now: " + waiting
		default:
			t = "reminder: expires in " + human.Left(left) + ": " + waiting
		}
	case KindVote:
		t = "another approver needed (" + ev.Approvals + "): " + waiting
	case KindRefused:
		t = "REFUSED AT EXECUTION: " + where + " was approved, but its approval's signatures do not hold: not run"
	case KindRanWithoutApproval:
		t = "RAN WITHOUT APPROVAL: " + where + ": its agent reported running the command, which nobody approved"
	case KindResolved:
		switch ev.Outcome {
		case "expired":
			t = "expired unanswered: " + where
		case "":
			t = "resolved: " + where
		default:
			t = "resolved: " + ev.Outcome
			if ev.Actor != "" {
				t += " by " + ev.Actor
			}
			t += ": " + where
		}
	default:
		t = waiting
	}
	return model.CutRunes(t, maxTitleRunes)
}

// renderText puts a cleaned event into words.
func renderText(ev Event, now func() time.Time) pageText {
	p := pageText{Title: titleOf(ev), Risk: riskLabel(ev.Risk)}
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	p.Fields = append(p.Fields,
		textField{"Risk", p.Risk},
		textField{"Approval", dash(ev.ApprovalID)},
		textField{"Session", dash(ev.SessionKey)},
		textField{"Requester", dash(ev.Requester)},
	)
	if ev.Kind == KindResolved {
		outcome := dash(ev.Outcome)
		if ev.Outcome == "expired" {
			outcome = "expired unanswered"
		} else if ev.Actor != "" {
			outcome += " by " + ev.Actor
		}
		p.Fields = append(p.Fields, textField{"Outcome", outcome})
		switch {
		case len(ev.Signers) > 0:
			p.Fields = append(p.Fields, textField{"Signed by", strings.Join(ev.Signers, ", ")})
		case ev.Unsigned:
			p.Fields = append(p.Fields, textField{"Signed by", "nobody: no signature verifies"})
		}
	} else if ev.Kind == KindRefused || ev.Kind == KindRanWithoutApproval {
		outcome := dash(ev.Outcome)
		switch {
		case ev.Kind == KindRanWithoutApproval && ev.Actor != "":
			outcome += "; denied by " + ev.Actor + ", and run all the same"
		case ev.Kind == KindRanWithoutApproval:
			outcome += "; its agent did not wait for a decision"
		case ev.Actor != "":
			outcome += "; the store says approved by " + ev.Actor + ", which no valid signature backs"
		}
		p.Fields = append(p.Fields, textField{"Outcome", outcome})
		p.ShowCommand = true
		p.CommandOmitted = ev.CommandOmitted
		if !ev.CommandOmitted {
			p.Command = model.CutRunes(ev.Command, maxCommandRunes)
		}
	} else {
		p.Fields = append(p.Fields, textField{"Time left", timeLeftText(ev, eventNow(ev, now))})
		if ev.Park != "" {
			p.Fields = append(p.Fields, textField{"Parked", ev.Park})
		}
		if ev.Kind == KindEscalation {
			p.Fields = append(p.Fields, textField{"Step", fmt.Sprint(StepNumber(ev.Step))})
		}
		if ev.Approvals != "" {
			a := ev.Approvals
			if len(ev.Voters) > 0 {
				a += " (" + strings.Join(ev.Voters, ", ") + ")"
			}
			p.Fields = append(p.Fields, textField{"Approvals", a})
			if ev.Needed != "" {
				p.Fields = append(p.Fields, textField{"Still needed", ev.Needed})
			}
		}
		p.ShowCommand = true
		p.CommandOmitted = ev.CommandOmitted
		if !ev.CommandOmitted {
			p.Command = model.CutRunes(ev.Command, maxCommandRunes)
		}
	}
	id := ev.ApprovalID
	if id == "" {
		id = "(no id)"
	}
	if !model.IsPlainID(ev.ApprovalID) {
		p.Open = "open it in the approve-tui console: its id is not a plain token (A-Za-z0-9_-), so no command is given for it; find it in the console's list"
		p.Note = "This message cannot approve: the decision is made in the console."
		return p
	}
	if ev.OpenHint != "" {
		p.Open = "open it: " + ev.OpenHint
		if isOpenURL(ev.OpenHint) {
			p.OpenURL = ev.OpenHint
		}
	} else {
		p.Open = "open it in the approve-tui console: " + id
	}
	p.Note = "This message cannot approve: the decision is made in the console, by typing the id " + id + "."
	return p
}

// plain is the page as plain text lines.
func (p pageText) plain() string {
	var b strings.Builder
	for _, f := range p.Fields {
		b.WriteString(f.Label + ": " + f.Value + "\n")
	}
	if p.ShowCommand {
		if p.CommandOmitted {
			b.WriteString("Command: " + commandOmittedText + "\n")
		} else {
			b.WriteString("Command:\n" + p.Command + "\n")
		}
	}
	b.WriteString(p.Open + "\n")
	b.WriteString(p.Note)
	return b.String()
}

// names are at most maxVoters of list, each made one field by line.
func names(list []string, line func(string) string) []string {
	list = list[:min(len(list), maxVoters)]
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = line(v)
	}
	return out
}
