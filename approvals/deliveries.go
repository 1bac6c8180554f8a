package approvals

import (
	"fmt"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// Page is how one delivery of a page about a proposal stands, in words:
// Mark ("✓" sent, "✗" failed, "" otherwise) and Text, for a surface to
// style by State (storage.Delivery*).
type Page struct {
	State      string
	Mark, Text string
}

// PageWords says who was paged (a channel, an escalation step, a reminder
// or a resolution) and how the delivery stands: sent (when), failed (why),
// not sent, sending, or waiting to be tried again (why). Errors from the
// channel are cut to 60 characters; everything is sanitised.
func PageWords(dl storage.Delivery, now time.Time) Page {
	what := line(dl.Channel)
	switch dl.Kind {
	case "escalation":
		what += fmt.Sprintf(" (step %d)", dl.Step+1)
	case "reminder", "resolved":
		what += " (" + dl.Kind + ")"
	}
	why := func() string { return model.CutRunes(line(dl.LastError), 60) }
	switch dl.State {
	case storage.DeliveryDelivered:
		at := ""
		if dl.DoneAt != nil {
			at = " " + rel(*dl.DoneAt, now, Console)
		}
		return Page{dl.State, "✓", what + at}
	case storage.DeliveryFailed:
		return Page{dl.State, "✗", what + " failed: " + why()}
	case storage.DeliveryCancelled:
		return Page{dl.State, "", what + " not sent"}
	}
	if dl.LastError != "" {
		return Page{dl.State, "", fmt.Sprintf("%s retrying (%d tries): %s", what, dl.Attempts, why())}
	}
	return Page{dl.State, "", what + " sending"}
}
