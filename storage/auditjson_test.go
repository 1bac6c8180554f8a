package storage

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// The golden event: its detail as json.Marshal wrote it and its hash as the
// chain computed it before the detail and the hash were written by hand
// (both recorded from that code).
const (
	goldenDetail = `{"command_sha256":"ab\u003c\u003e\u0026\u2028\u0001\ufffd\"\\\n","expires_at":1764543123.25,"n":3,"pinned_risk":"medium","read":true,"risk":"high","tiny":1e-7}`
	goldenHash   = "615c4fe8211af3924440f23b4f1183e89cf4dfaf10599020f53b280bb83f3ee7"
)

func goldenEvent(t *testing.T) AuditEvent {
	d, err := encodeDetail(map[string]any{"risk": "high", "pinned_risk": "medium", "command_sha256": "ab<>&\u2028\x01\xff\"\\\n",
		"read": true, "expires_at": 1764543123.25, "tiny": 1e-7, "n": 3})
	if err != nil {
		t.Fatal(err)
	}
	return AuditEvent{Seq: 42, At: 1764543123.123456, ApprovalID: "b0000001-abcdefgh", Event: "approve", Outcome: "ok",
		Actor: "alice@host", Surface: "cli", DetailRaw: d, PrevHash: genesisHash}
}

func TestAuditEventGoldenBytes(t *testing.T) {
	e := goldenEvent(t)
	if e.DetailRaw != goldenDetail {
		t.Fatalf("detail\n%s\nwant\n%s", e.DetailRaw, goldenDetail)
	}
	if h := eventHash(&e); h != goldenHash {
		t.Fatalf("hash %s, want %s", h, goldenHash)
	}
}

// streamedEventHash is the chain's hash as first written: each field
// streamed into the hash.
func streamedEventHash(e *AuditEvent) string {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(strconv.FormatInt(e.Seq, 10))
	field(strconv.FormatFloat(e.At, 'g', -1, 64))
	for _, s := range []string{e.ApprovalID, e.Event, e.Outcome, e.Reason, e.Actor, e.Surface, e.DetailRaw, e.PrevHash} {
		field(s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// randText is a string of random bytes, mostly from the awkward ones.
func randText(r *rand.Rand, n int) string {
	alphabet := []string{"a", "Z", "0", " ", "\"", "\\", "<", ">", "&", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
		"é", "€", "\u2028", "\u2029", "\U0001F600", "\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "/", "'"}
	b := make([]byte, 0, n*2)
	for i := 0; i < n; i++ {
		if r.IntN(4) == 0 {
			b = append(b, byte(r.IntN(256)))
		} else {
			b = append(b, alphabet[r.IntN(len(alphabet))]...)
		}
	}
	return string(b)
}

func TestEncodeDetailIsJSONMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1764543123.123456, 1e20, 1e21, 123456789e13, 1e-6, 9.99e-7, 1e-7,
		-1e-7, 5e-324, math.MaxFloat64, -math.MaxFloat64, 1e100, 1.5e-10, 3}
	check := func(d map[string]any) {
		t.Helper()
		want, werr := json.Marshal(d)
		got, gerr := encodeDetail(d)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%#v: error %v, json.Marshal's %v", d, gerr, werr)
		}
		if werr == nil && len(d) > 0 && got != string(want) {
			t.Fatalf("%#v:\n got %s\nwant %s", d, got, want)
		}
	}
	for i := 0; i < 5000; i++ {
		d := map[string]any{}
		for k := r.IntN(6); k >= 0; k-- {
			key := randText(r, r.IntN(6))
			switch r.IntN(6) {
			case 0:
				d[key] = r.IntN(2) == 0
			case 1:
				d[key] = floats[r.IntN(len(floats))]
			case 2:
				d[key] = r.NormFloat64() * math.Pow(10, float64(r.IntN(60)-30))
			case 3:
				d[key] = r.Int64() - r.Int64()
			default:
				d[key] = randText(r, r.IntN(40))
			}
		}
		check(d)
	}
	// What the hand-written form leaves to json.Marshal.
	check(map[string]any{"risk": model.RiskHigh, "n": 1})
	check(map[string]any{"list": []string{"a", "<b>"}, "ok": true})
	check(map[string]any{"nested": map[string]any{"x": 1.5}})
	check(map[string]any{"nil": nil})
	check(map[string]any{"n": 7, "m": int64(-7), "u": uint8(3), "f": float32(0.1)})
	if _, err := encodeDetail(map[string]any{"bad": math.NaN()}); err == nil {
		t.Fatal("NaN encoded")
	}
	if _, err := encodeDetail(map[string]any{"bad": math.Inf(1), "ok": "x"}); err == nil {
		t.Fatal("Inf encoded")
	}
	if d, err := encodeDetail(nil); d != "" || err != nil {
		t.Fatalf("empty detail: %q %v", d, err)
	}
}

func TestEventHashIsTheStreamedHash(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 3000; i++ {
		e := AuditEvent{Seq: r.Int64N(1 << 40), At: r.Float64() * 2e9, ApprovalID: randText(r, r.IntN(30)),
			Event: randText(r, 8), Outcome: randText(r, 3), Reason: randText(r, r.IntN(20)), Actor: randText(r, 12),
			Surface: randText(r, 4), DetailRaw: randText(r, r.IntN(2000)), PrevHash: randText(r, 64)}
		if i%50 == 0 {
			e.At = float64(r.Int64N(1e10)) // whole seconds
		}
		if got, want := eventHash(&e), streamedEventHash(&e); got != want {
			t.Fatalf("event %+v: hash %s, streamed %s", e, got, want)
		}
	}
}

// A log whose first events were written by the former encoder (json.Marshal
// detail, streamed hash) and whose later ones by this one verifies as one
// chain, and an edit of either kind of event is still found.
func TestAuditChainOfOldAndNewEvents(t *testing.T) {
	s, c := newStore(t)
	mustSubmit(t, s, proposal("chain0001", "ls /srv", model.RiskLow, c.Now(), 0))
	db := rawDB(t, s.Path())
	var head string
	if err := db.QueryRow(`SELECT value FROM approve_tui_meta WHERE key = 'audit_head'`).Scan(&head); err != nil {
		t.Fatal(err)
	}
	seq, prev, err := parseHead(head)
	if err != nil {
		t.Fatal(err)
	}
	// Two events as the former code wrote them.
	for i, d := range []map[string]any{
		{"what": "x<y & \"z\"\n", "risk": "high", "read": true},
		{"expires_at": 1764543123.5, "terminal_reason": "\u2028\xff"},
	} {
		raw, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		seq++
		e := AuditEvent{Seq: seq, At: model.Epoch(c.Now()) + float64(i), ApprovalID: "chain0001", Event: EventSession,
			Outcome: OutcomeOK, Reason: "start", Actor: "old@host", Surface: "cli", DetailRaw: string(raw), PrevHash: prev}
		e.Hash = streamedEventHash(&e)
		mustExec(t, db, `INSERT INTO approve_tui_audit (seq, at, approval_id, event, outcome, reason, actor, surface, detail, prev_hash, hash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.Seq, e.At, e.ApprovalID, e.Event, e.Outcome, e.Reason, e.Actor, e.Surface,
			e.DetailRaw, e.PrevHash, e.Hash)
		prev = e.Hash
	}
	mustExec(t, db, `UPDATE approve_tui_meta SET value = ? WHERE key = 'audit_head'`, strconv.FormatInt(seq, 10)+":"+prev)
	// New events follow.
	if err := s.RecordSession(ctx, alice, "start", map[string]any{"tty": "<pts/1>", "n": 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consume(ctx, "chain0001", "chain0001", alice); err != nil {
		t.Fatal(err)
	}
	res, err := s.VerifyAudit(ctx)
	if err != nil || !res.OK || res.Events != seq+2 {
		t.Fatalf("verify: %+v %v", res, err)
	}
	evs, err := s.Audit(ctx, AuditQuery{Limit: 1})
	if err != nil || len(evs) != 1 || evs[0].Detail["payload_sha256"] == nil {
		t.Fatalf("last event: %+v %v", evs, err)
	}
	// Edits are still found, in an old event and in a new one.
	for _, at := range []int64{seq, seq + 1} {
		n := strconv.FormatInt(at, 10)
		mustExec(t, db, `UPDATE approve_tui_audit SET detail = replace(detail, '"', '  ') WHERE seq = `+n)
		res, err := s.VerifyAudit(ctx)
		if err != nil || res.OK || res.BrokenSeq != at {
			t.Fatalf("edit of event %d: %+v %v", at, res, err)
		}
		mustExec(t, db, `UPDATE approve_tui_audit SET detail = replace(detail, '  ', '"') WHERE seq = `+n)
	}
	if res, err := s.VerifyAudit(ctx); err != nil || !res.OK {
		t.Fatalf("restored: %+v %v", res, err)
	}
}
