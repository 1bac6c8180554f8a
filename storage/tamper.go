package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/model"
)

// Payloads are written once. A proposal submitted through approve-tui has
// its payload's SHA-256 in its submit audit event; a payload that differs
// from it was rewritten behind the store's back (audit --verify says so).
// Such a row is marked (Record.Tampered, and Corrupt, so that every path
// that refuses a corrupt row refuses it too): it can be denied, never
// approved, and the approval's transaction checks it again itself. A row
// with no submit event (one Hermes wrote) has nothing to be checked against.

// submitRecord is what the submit event of one row says of its payload.
type submitRecord struct {
	seq    int64
	sha256 string // "" when the row has no submit event naming one
}

// submitKey names one inserted row as read: its id, created_at column
// (a row deleted and submitted again under the same id is another row) and
// payload (a rewritten one is looked up again).
type submitKey struct {
	id      string
	created float64
	payload string
}

// submitCache keeps what the submit events say of rows read already: an
// event, once written, never changes, and a row approve-tui submits is
// inserted in the same transaction as its event (so a row seen without one
// never gets one). Only reads use it; the approval's transaction reads the
// log itself.
type submitCache struct {
	mu sync.Mutex
	m  map[submitKey]submitRecord
}

const submitCacheMax = 16384

func (c *submitCache) get(k submitKey) (submitRecord, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[k]
	return r, ok
}

func (c *submitCache) put(k submitKey, r submitRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= submitCacheMax {
		c.m = map[submitKey]submitRecord{}
	}
	c.m[k] = r
}

// TamperedWords starts Record.Tampered; Record.Corrupt says "tampered: "
// and the same.
const TamperedWords = "payload differs from its submit record"

// submitPayload is the payload SHA-256 a submit event's detail names ("":
// none, or a detail that is not JSON), as encoding/json decoding the detail
// into a struct with that one field says it: read at every decision, so the
// members are scanned without reflection, and any member that scan cannot
// read as encoding/json would (an escape or invalid UTF-8 in the value) is
// left to encoding/json itself.
func submitPayload(detail string) string {
	b := []byte(detail)
	if !json.Valid(b) {
		return ""
	}
	sha, plain := "", true
	err := model.ObjectMembers(b, func(key, raw []byte) {
		// encoding/json: the key matched without regard to case, the last
		// string value kept, null and other types leaving it as it was.
		if !plain || raw[0] != '"' || !bytes.EqualFold(key, payloadSHA256Key) {
			return
		}
		v := raw[1 : len(raw)-1]
		if bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
			plain = false
			return
		}
		sha = string(v)
	})
	if err == nil && plain {
		return sha
	}
	return submitPayloadJSON(b)
}

// selectSubmit is the latest ok submit event of one proposal (the audit
// log's index by approval_id finds it).
const selectSubmit = `SELECT seq, detail FROM approve_tui_audit
	WHERE approval_id = ? AND event = '` + EventSubmit + `' AND outcome = 'ok' ORDER BY seq DESC LIMIT 1`

// payloadSHA256Key is the submit detail's member submitPayload reads.
var payloadSHA256Key = []byte("payload_sha256")

// submitPayloadJSON is submitPayload by encoding/json alone.
func submitPayloadJSON(detail []byte) string {
	var d struct {
		PayloadSHA256 string `json:"payload_sha256"`
	}
	_ = json.Unmarshal(detail, &d)
	return d.PayloadSHA256
}

// readSubmits reads, through q, the latest ok submit event of each of ids.
func readSubmits(ctx context.Context, q querier, ids []string) (map[string]submitRecord, error) {
	out := make(map[string]submitRecord, len(ids))
	err := inLists(ids, func(in string, args []any) error {
		rows, err := q.QueryContext(ctx, `SELECT approval_id, seq, detail FROM approve_tui_audit
			WHERE approval_id IN (`+in+`) AND event = '`+EventSubmit+`' AND outcome = 'ok'
			ORDER BY seq`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, detail string
			var seq int64
			if err := rows.Scan(&id, &seq, &detail); err != nil {
				return err
			}
			out[id] = submitRecord{seq: seq, sha256: submitPayload(detail)}
		}
		return rows.Err()
	})
	return out, err
}

// mark marks rec tampered when its payload is not the one sub records.
func (sub submitRecord) mark(rec *Record) {
	if sub.sha256 == "" || strings.EqualFold(sub.sha256, rec.PayloadSHA256) {
		return
	}
	rec.Tampered = fmt.Sprintf("%s (audit event %d)", TamperedWords, sub.seq)
	if rec.Corrupt == "" {
		rec.Corrupt = "tampered: " + rec.Tampered
	} else {
		rec.Corrupt = "tampered: " + rec.Tampered + "; " + rec.Corrupt
	}
}

// markTampered marks the records read whose payload differs from their
// submit record, reading the log through q (cache: the file's, or nil to
// read every one). A log that does not exist (a file viewed without
// migrating) records nothing to check against.
func (s bound) markTampered(ctx context.Context, q querier, recs []*Record, cache *submitCache) error {
	var need []*Record
	var ids []string
	for _, rec := range recs {
		if rec == nil {
			continue
		}
		if cache != nil {
			if sub, ok := cache.get(submitKey{rec.ApprovalID, rec.CreatedAt, rec.PayloadSHA256}); ok {
				sub.mark(rec)
				continue
			}
		}
		need = append(need, rec)
		ids = append(ids, rec.ApprovalID)
	}
	if len(need) == 0 {
		return nil
	}
	subs, err := readSubmits(ctx, q, ids)
	if err != nil {
		if s.eng.noTable(err) {
			return nil
		}
		return err
	}
	for _, rec := range need {
		sub := subs[rec.ApprovalID]
		if cache != nil {
			cache.put(submitKey{rec.ApprovalID, rec.CreatedAt, rec.PayloadSHA256}, sub)
		}
		sub.mark(rec)
	}
	return nil
}
