package model

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func sample() *Proposal {
	return &Proposal{
		ApprovalID: "kq3_Zr-9aB1", CreatedAt: 1780000000.25, ExpiresAt: F64(1780000600.5),
		Status: StatusPending, SessionKey: "agent:main:telegram:dm:42", Requester: "hermes",
		Command: "rm -rf ./build", Cwd: "/srv/app", Backend: "local",
		EnvOverrides: map[string]string{"A": "1", "B": "two"}, RiskLevel: RiskHigh,
		RiskReason: "recursive delete", PolicyDecision: PolicyNeedsApproval, PolicyVersion: "v1",
		RequiresExplicitApproval: true, DefaultDecision: DefaultDeny, DiffText: "-a\n+b\n",
		ExecutionStatus: ExecNotStarted,
	}
}

func TestEncodeWritesFullKeySetInOrder(t *testing.T) {
	b := EncodePayload(sample())
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	if len(m) != len(payloadKeys) {
		t.Fatalf("%d keys, want %d", len(m), len(payloadKeys))
	}
	pos := -1
	for _, k := range payloadKeys {
		i := strings.Index(string(b), `"`+k+`":`)
		if i < 0 || i < pos {
			t.Fatalf("key %s missing or out of order", k)
		}
		pos = i
	}
	for _, k := range []string{"consumed_at", "consumed_by", "diff_summary", "execution_reason", "execution_recorded_at"} {
		if m[k] != nil {
			t.Errorf("%s should be null, got %v", k, m[k])
		}
	}
	if m["display_text"] != "" {
		t.Errorf("display_text should be \"\" (Hermes' default), got %v", m["display_text"])
	}
}

// Tier-2 keys are decoded and validated as Hermes validates them, and
// written only for a text-confirm proposal.
func TestTier2PayloadKeys(t *testing.T) {
	p := sample()
	if strings.Contains(string(EncodePayload(p)), "requires_text_confirm") {
		t.Fatal("tier-2 keys written for an ordinary proposal")
	}
	p.RiskLevel, p.RequiresTextConfirm, p.Nonce, p.Verb, p.Target = RiskTier2, true, "0427", "restart-tier2", "vaultwarden"
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	got, err := DecodePayload(EncodePayload(p))
	if err != nil || !got.RequiresTextConfirm || got.Nonce != "0427" || got.Verb != "restart-tier2" || got.Target != "vaultwarden" {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	if got.Phrase() != "RESTART-TIER2 VAULTWARDEN 0427" || NormalizePhrase("  restart-tier2   Vaultwarden 0427 ") != got.Phrase() {
		t.Fatalf("phrase %q", got.Phrase())
	}
	for _, c := range []struct {
		mutate func(*Proposal)
		want   string
	}{
		{func(p *Proposal) { p.RequiresTextConfirm = false }, "tier2_critical requires requires_text_confirm"},
		{func(p *Proposal) { p.Nonce = "42" }, "nonce must be 4 digits"},
		{func(p *Proposal) { p.Nonce = "12a4" }, "nonce must be 4 digits"},
		{func(p *Proposal) { p.Verb = "" }, "needs a verb"},
		{func(p *Proposal) { p.Target = "" }, "needs a target"},
		{func(p *Proposal) { p.DefaultDecision = DefaultAllow }, "requires default_decision deny"},
	} {
		q := *p
		c.mutate(&q)
		if err := q.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
	if RiskTier2.Rank() <= RiskHigh.Rank() || RiskUnknown.Rank() <= RiskTier2.Rank() || MaxRisk(RiskTier2, RiskHigh) != RiskTier2 {
		t.Fatal("tier2_critical must rank above high and below unknown")
	}
}

func TestRoundTrip(t *testing.T) {
	p := sample()
	p.Command = "printf '\x1b]0;pwned\x07' \xff\xfe\u202e end\n\tline2 \"q\" \\ \u2028"
	p.Cwd = "/tmp/\x00nul"
	got, err := DecodePayload(EncodePayload(p))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, p) {
		t.Fatalf("round trip differs:\n got %#v\nwant %#v", got, p)
	}
}

// What Python's json.dumps(dataclasses.asdict(p)) writes, with its quirks:
// ensure_ascii escapes, integers for whole floats, nulls, unknown keys,
// missing optional keys, surrogateescape'd bytes.
func TestDecodePythonStyle(t *testing.T) {
	raw := `{"approval_id": "x1", "created_at": 1780000000, "expires_at": null, "status": "consumed",
	"consumed_at": null, "consumed_by": null, "session_key": "s", "requester": null,
	"command": "echo caf\u00e9 \ud83d\ude00 \udcff", "cwd": null, "backend": null, "env_overrides": {},
	"risk_level": "medium", "risk_reason": "r", "policy_decision": "needs_approval",
	"requires_explicit_approval": false, "default_decision": "deny", "fork_only_key": [1, {"a": 2}]}`
	p, err := DecodePayload([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if p.Command != "echo café 😀 \xff" {
		t.Fatalf("command %q", p.Command)
	}
	if p.CreatedAt != 1780000000 || p.ExpiresAt != nil || p.RequiresExplicitApproval {
		t.Fatalf("%+v", p)
	}
	if p.ExecutionStatus != ExecNotStarted || p.PolicyVersion != "" || p.DiffText != "" {
		t.Fatalf("defaults: %+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestDecodeReportsEveryBadKey(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`not json`, "not a JSON object"},
		{`[1]`, "not a JSON object"},
		{`null`, "null"},
		{`{"a":1} {"b":2}`, "trailing data"},
		{`{"command": 5, "created_at": "yesterday", "env_overrides": [1], "requires_explicit_approval": "yes"}`,
			"created_at: want a number, got a string; command: want a string, got a number; env_overrides: want an object, got an array; requires_explicit_approval: want a boolean, got a string"},
		{`{"env_overrides": {"A": 1}}`, "env_overrides.A: want a string, got a number"},
		{`{"created_at": 1e999}`, "created_at: number out of range"},
	} {
		_, err := DecodePayload([]byte(tc.raw))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.raw, err, tc.want)
		}
	}
}

func TestValidateReportsAllProblems(t *testing.T) {
	p := &Proposal{RiskLevel: RiskHigh, DefaultDecision: DefaultAllow, PolicyDecision: "maybe"}
	err := p.Validate()
	ve, ok := err.(*ValidationError)
	if !ok {
		t.Fatalf("%T %v", err, err)
	}
	want := []string{"approval_id", "created_at", "session_key", "command", "risk_reason", "policy_decision", "high risk requires default_decision deny"}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing problem %q in %v", w, err)
		}
	}
	if len(ve.Problems) != len(want) {
		t.Errorf("%d problems: %v", len(ve.Problems), ve.Problems)
	}
	p = sample()
	p.RiskLevel = "extreme"
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), `"extreme"`) {
		t.Fatal(err)
	}
	if err := sample().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestRiskRank(t *testing.T) {
	if !(RiskLow.Rank() < RiskMedium.Rank() && RiskMedium.Rank() < RiskHigh.Rank() && RiskHigh.Rank() < RiskUnknown.Rank()) {
		t.Fatal("rank order")
	}
	if RiskLevel("bogus").Rank() != RiskUnknown.Rank() || MaxRisk(RiskHigh, "bogus") != RiskUnknown {
		t.Fatal("an unknown level must rank above high")
	}
	if MaxRisk(RiskLow, RiskMedium) != RiskMedium || MaxRisk(RiskHigh, RiskLow) != RiskHigh {
		t.Fatal("MaxRisk")
	}
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := NewID()
		if len(id) != 12 || id[0] == '-' || strings.Trim(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" || seen[id] {
			t.Fatalf("bad id %q", id)
		}
		seen[id] = true
	}
}

func FuzzPayloadRoundTrip(f *testing.F) {
	f.Add("rm -rf /", "/srv", "\x1b[2J")
	f.Add("\xff\xfe", "\u202e", "\ud7ff")
	f.Fuzz(func(t *testing.T, cmd, cwd, diff string) {
		p := sample()
		p.Command, p.Cwd, p.DiffText = cmd, cwd, diff
		got, err := DecodePayload(EncodePayload(p))
		if err != nil {
			t.Fatal(err)
		}
		if got.Command != cmd || got.Cwd != cwd || got.DiffText != diff {
			t.Fatalf("bytes changed: %q %q %q", got.Command, got.Cwd, got.DiffText)
		}
	})
}

// The hand-written object scanner accepts exactly the JSON objects that
// encoding/json accepts.
func FuzzScanObjectAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, ` {"a": [1, 2.5e-3, {"b": null}], "c": "\u00e9\"\\"} `,
		`{"a":01}`, `{"a":1,}`, `{"a" 1}`, `[1]`, `{"a":tru}`, `{"a":"x"} x`, `{"a":-}`, `{"a":1.}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := scanObject(data, nil)
		trimmed := strings.TrimLeft(string(data), " \t\r\n")
		valid := json.Valid(data) && strings.HasPrefix(trimmed, "{")
		if (err == nil) != valid {
			t.Fatalf("scanObject err=%v, encoding/json valid object=%v for %q", err, valid, data)
		}
	})
}

// Reading an object's members by key (payloadDecoder.raw: the key
// unescaped, the last of a repeated key, null as absent) finds what
// encoding/json decoding the object into a map finds. Surrogate escapes in
// keys are left out: unquoteJSON keeps lone ones as the bytes they stand
// for, where encoding/json writes U+FFFD.
func FuzzMemberLookupAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"a":null}`, `{"a":null,"a":"x"}`, `{"\u0061":1,"a":2}`, `{"a":2,"\u0061":[1]}`,
		`{"command":"ls","cwd":null,"command":"rm"}`, `{"\n":{"b":1},"\\":"\"","\/":true}`, `{"é":1,"\u00e9":2}`} {
		f.Add([]byte(s))
	}
	surrogate := regexp.MustCompile(`\\u[dD][89a-fA-F]`)
	f.Fuzz(func(t *testing.T, data []byte) {
		members, err := scanObject(data, nil)
		var want map[string]json.RawMessage
		if err != nil || json.Unmarshal(data, &want) != nil || surrogate.Match(data) {
			return
		}
		d := &payloadDecoder{members: members}
		for _, m := range members {
			if !utf8.Valid(m.key) {
				return // encoding/json would have replaced the invalid bytes
			}
		}
		for k, v := range want {
			got, ok := d.raw(k)
			if string(v) == "null" {
				if ok {
					t.Fatalf("%q: key %q is null, read %q", data, k, got)
				}
				continue
			}
			if !ok || string(got) != string(v) {
				t.Fatalf("%q: key %q: read %q (%v), encoding/json %q", data, k, got, ok, v)
			}
		}
		for _, m := range members {
			if _, ok := want[string(m.key)]; !ok {
				t.Fatalf("%q: key %q read, encoding/json has no such key", data, m.key)
			}
		}
	})
}

// --json output and stored payloads escape what a terminal would act on or
// hide, and read back to the same bytes.
func TestQuoteJSONEscapesInvisibleCharacters(t *testing.T) {
	in := "a\u0085b\u009bc\u202ed\u200be\u2028f\U000E0041g\u00adh é✔"
	q := quoteJSON(in)
	for _, raw := range []string{"\u0085", "\u009b", "\u202e", "\u200b", "\u2028", "\U000E0041", "\u00ad"} {
		if strings.Contains(q, raw) {
			t.Fatalf("%q left raw in %s", raw, q)
		}
	}
	want := `"a\u0085b\u009bc\u202ed\u200be\u2028f\udb40\udc41g\u00adh é✔"`
	if q != want {
		t.Fatalf("got %s, want %s", q, want)
	}
	back, err := unquoteJSON([]byte(q))
	if err != nil || back != in {
		t.Fatalf("round trip: %q %v", back, err)
	}
}

// Every kind of impact target survives the payload byte for byte: files,
// a block device, a forced push, a branch deletion, a terraform plan.
func TestImpactRoundTrip(t *testing.T) {
	p := sample()
	p.Impact = &Impact{Summary: "deletes 3 directories; wipes /dev/loop0 (…)", Entries: 12, Bytes: 1 << 30, Complete: false,
		Unknown: []string{"$(cat list.txt)"}, At: 1764650000.25, Targets: []ImpactTarget{
			{Path: "/srv/app/releases/2024-11-01", Op: "delete", Exists: true, Entries: 12, Files: 10, Dirs: 2, Bytes: 4096,
				NewestMtime: 1764640000.5, Mounts: []string{}, LiveLinks: []string{"/srv/app/current"}, Complete: true, Outside: true},
			{Path: "/dev/loop0", Op: OpWipe, Exists: true, Bytes: 1 << 30, Device: "loop0", Note: "block device loop0, 1.0 GiB",
				Mounts: []string{"/mnt/data"}, LiveLinks: []string{}, Complete: true, Details: []string{"loop device backed by /tmp/d.img"}},
			{Path: "origin/main", Op: OpForcePush, Exists: true, Commits: 2, Mounts: []string{}, LiveLinks: []string{}, Complete: true,
				Details: []string{"abc1234 2026-11-30 bob: fix \x1b[31m", "def5678 2026-11-29 alice: more"}},
			{Path: "spike", Op: OpDeleteBranch, Exists: true, Mounts: []string{}, LiveLinks: []string{}, Complete: true},
			{Path: "/srv/tf/prod.tfplan", Op: OpApply, Exists: true, Creates: 1, Updates: 2, Destroys: 3, Mounts: []string{},
				LiveLinks: []string{}, Complete: true, Details: []string{"destroy aws_db_instance.main"}},
		}}
	got, err := DecodePayload(EncodePayload(p))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Impact, p.Impact) {
		t.Fatalf("round trip differs:\n got %#v\nwant %#v", got.Impact, p.Impact)
	}
	// A file target carries no keys of the other kinds; a branch its
	// commits even when none are dropped.
	raw := string(EncodePayload(p))
	if strings.Count(raw, `"commits"`) != 2 || strings.Count(raw, `"destroys"`) != 1 || strings.Count(raw, `"device"`) != 1 {
		t.Errorf("keys per kind: %s", raw)
	}
}
