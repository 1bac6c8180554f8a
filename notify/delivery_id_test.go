package notify

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/config"
)

// Ids that the old mapping (anything but printable ASCII to '_') made
// equal, and others as tricky: each gets its own delivery id.
var trickyDeliveryIDs = []string{
	"hm-abc123:page:0:hook", "a b", "a_b", "a%20b", "a%b", "a%25b", "a\x00b", "a\nb", "a\tb", "aé", "a\xe9",
	strings.Repeat("x", 199), strings.Repeat("x", 200), strings.Repeat("x", 201),
	strings.Repeat("x", 300) + "1", strings.Repeat("x", 300) + "2", strings.Repeat(" ", 80), strings.Repeat(" ", 81),
}

// The mapping is one to one, keeps printable ASCII ids as they are, and
// stays within 200 bytes of printable ASCII; a plain id made to look like
// a cut one is not a cut one.
func TestDeliveryIDSafeIsInjective(t *testing.T) {
	seen := map[string]string{}
	ids := append([]string(nil), trickyDeliveryIDs...)
	// A plain id written as the cut form of a long one.
	long := strings.Repeat("y", 100) + strings.Repeat(" ", 60)
	ids = append(ids, long, deliveryIDSafe(long))
	for _, id := range ids {
		got := deliveryIDSafe(id)
		if prev, ok := seen[got]; ok {
			t.Errorf("%q and %q both map to %q", prev, id, got)
		}
		seen[got] = id
		if len(got) > 200 || headerSafe(got) != got {
			t.Errorf("%q maps to %q: not printable ASCII within 200 bytes", id, got)
		}
	}
	for _, plain := range []string{"hm-abc123:page:0:hook", "a_b", "x:y/z+q=1", strings.Repeat("x", 200)} {
		if got := deliveryIDSafe(plain); got != plain {
			t.Errorf("plain %q became %q", plain, got)
		}
	}
	if got := deliveryIDSafe("a b"); got != "a%20b" {
		t.Errorf("a b: %q", got)
	}
	if got := deliveryIDSafe("a%b"); got != "a%25b" {
		t.Errorf("a%%b: %q", got)
	}
}

// Through a real receiver on loopback: the webhook's header and body, and
// an exec command's stdin and environment, carry distinct ids for "a b"
// and "a_b", the same at every attempt.
func TestDeliveryIDsDistinctAtReceivers(t *testing.T) {
	rec := newRecorder(t, 200)
	hook := mustSender(t, &config.Channel{Name: "hook", Type: config.TypeWebhook, URL: rec.URL + "/in"}, testOptions(nil))
	dir := t.TempDir()
	out := filepath.Join(dir, "ids")
	sh := script(t, dir, "ids.sh", `body=$(cat)
printf '%s\n%s\n' "$APPROVE_TUI_DELIVERY_ID" "$body" >> "`+out+`"
`)
	desk := mustSender(t, &config.Channel{Name: "desk", Type: config.TypeExec, Command: []string{sh}}, testOptions(nil))
	for _, id := range []string{"a b", "a_b", "a b"} {
		for _, s := range []Sender{hook, desk} {
			if err := s.Send(context.Background(), baseEvent(), Delivery{ID: id, Attempt: 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got []string
	rec.mu.Lock()
	for _, r := range rec.reqs {
		var w struct {
			DeliveryID string `json:"delivery_id"`
		}
		if err := json.Unmarshal(r.Body, &w); err != nil {
			t.Fatal(err)
		}
		if h := r.Header.Get(WebhookDeliveryHeader); h != w.DeliveryID {
			t.Errorf("header %q, body %q", h, w.DeliveryID)
		}
		got = append(got, w.DeliveryID)
	}
	rec.mu.Unlock()
	if strings.Join(got, "|") != "a%20b|a_b|a%20b" {
		t.Errorf("webhook delivery ids: %q", got)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 6 {
		t.Fatalf("exec saw %q", lines)
	}
	for i, want := range []string{"a%20b", "a_b", "a%20b"} {
		var w struct {
			DeliveryID string `json:"delivery_id"`
		}
		if lines[2*i] != want || json.Unmarshal([]byte(lines[2*i+1]), &w) != nil || w.DeliveryID != want {
			t.Errorf("exec %d: env %q, stdin %q; want %q", i, lines[2*i], lines[2*i+1], want)
		}
	}
}
