package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// PayloadError says why a payload_json could not be decoded; it lists every
// problem found.
type PayloadError struct {
	Problems []string
}

func (e *PayloadError) Error() string {
	return "corrupt payload: " + strings.Join(e.Problems, "; ")
}

// payloadKeys is the full key set, in the order of Hermes' dataclass fields.
var payloadKeys = []string{
	"approval_id", "created_at", "expires_at", "status", "consumed_at", "consumed_by",
	"session_key", "requester", "command", "cwd", "backend", "env_overrides",
	"risk_level", "risk_reason", "policy_decision", "policy_version",
	"requires_explicit_approval", "default_decision", "diff_text", "diff_summary",
	"display_text", "execution_status", "execution_reason", "execution_recorded_at",
}

// ContextKey is approve-tui's own payload key for the requester's words
// (Proposal.RequesterContext).
const ContextKey = "approve_tui_context"

// OriginKey is approve-tui's own payload key for the submitting process's
// user and host (Proposal.Origin).
const OriginKey = "approve_tui_origin"

// PayloadKeys returns the full key set of payload_json, in Hermes' order.
func PayloadKeys() []string { return append([]string(nil), payloadKeys...) }

// DecodePayload reads a payload_json as Python's json.dumps writes it.
// Unknown keys are ignored, missing or null optional keys take their
// defaults, and strings keep their exact bytes (see jsonstr.go). A payload
// that is not a JSON object, or whose keys have the wrong JSON types, is
// reported as a *PayloadError naming every bad key. The result is not
// validated: call Validate.
func DecodePayload(raw []byte) (*Proposal, error) {
	// Room for every key a payload this project writes has.
	members, err := scanObject(raw, make([]jsonMember, 0, 32))
	if err != nil {
		if err == errTrailing {
			return nil, &PayloadError{Problems: []string{err.Error()}}
		}
		if len(bytes.TrimSpace(raw)) == 4 && string(bytes.TrimSpace(raw)) == "null" {
			return nil, &PayloadError{Problems: []string{"payload is null, not a JSON object"}}
		}
		return nil, &PayloadError{Problems: []string{"not a JSON object: " + describeJSONError(raw)}}
	}
	d := payloadDecoder{members: members}
	p := &Proposal{
		ApprovalID:               d.str("approval_id"),
		CreatedAt:                d.numOr("created_at", 0),
		ExpiresAt:                d.num("expires_at"),
		Status:                   Status(d.strOr("status", string(StatusPending))),
		ConsumedAt:               d.num("consumed_at"),
		ConsumedBy:               d.str("consumed_by"),
		SessionKey:               d.str("session_key"),
		Requester:                d.str("requester"),
		Command:                  d.str("command"),
		Cwd:                      d.str("cwd"),
		Backend:                  d.str("backend"),
		EnvOverrides:             d.strMap("env_overrides"),
		RiskLevel:                RiskLevel(d.str("risk_level")),
		RiskReason:               d.str("risk_reason"),
		PolicyDecision:           d.strOr("policy_decision", PolicyNeedsApproval),
		PolicyVersion:            d.str("policy_version"),
		RequiresExplicitApproval: d.boolOr("requires_explicit_approval", true),
		DefaultDecision:          d.strOr("default_decision", DefaultDeny),
		DiffText:                 d.str("diff_text"),
		DiffSummary:              d.str("diff_summary"),
		DisplayText:              d.str("display_text"),
		ExecutionStatus:          ExecutionStatus(d.strOr("execution_status", string(ExecNotStarted))),
		ExecutionReason:          d.str("execution_reason"),
		ExecutionRecordedAt:      d.num("execution_recorded_at"),
		RequesterContext:         d.str(ContextKey),
		Origin:                   d.str(OriginKey),
		Hermes:                   d.hermes(),
		Impact:                   d.impact(),
		RequiresTextConfirm:      d.boolOr("requires_text_confirm", false),
		Nonce:                    d.str("nonce"),
		Verb:                     d.str("verb"),
		Target:                   d.str("target"),
	}
	if len(d.problems) > 0 {
		return p, &PayloadError{Problems: d.problems}
	}
	return p, nil
}

func cleanJSONErr(err error) string {
	s := err.Error()
	return strings.TrimPrefix(s, "json: ")
}

// describeJSONError asks encoding/json (slow path, errors only) for a
// precise syntax message.
func describeJSONError(raw []byte) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return cleanJSONErr(err)
	}
	return "malformed JSON"
}

// payloadDecoder reads an object's members by key; a repeated key's last
// member is the one read, as in Python (and encoding/json).
type payloadDecoder struct {
	members  []jsonMember
	problems []string
}

func (d *payloadDecoder) bad(key, want string, raw []byte) {
	got := "invalid value"
	if len(raw) > 0 {
		switch raw[0] {
		case '"':
			got = "a string"
		case '{':
			got = "an object"
		case '[':
			got = "an array"
		case 't', 'f':
			got = "a boolean"
		default:
			got = "a number"
		}
	}
	d.problems = append(d.problems, fmt.Sprintf("%s: want %s, got %s", key, want, got))
}

// raw returns the key's raw value, and false when it is missing or null.
func (d *payloadDecoder) raw(key string) ([]byte, bool) {
	for i := len(d.members) - 1; i >= 0; i-- {
		if m := &d.members[i]; string(m.key) == key {
			if string(m.raw) == "null" {
				return nil, false
			}
			return m.raw, true
		}
	}
	return nil, false
}

func (d *payloadDecoder) str(key string) string { return d.strOr(key, "") }

func (d *payloadDecoder) strOr(key, def string) string {
	v, ok := d.raw(key)
	if !ok {
		return def
	}
	if v[0] != '"' {
		d.bad(key, "a string", v)
		return def
	}
	s, err := unquoteJSON(v)
	if err != nil {
		d.problems = append(d.problems, key+": malformed string")
		return def
	}
	return s
}

func (d *payloadDecoder) num(key string) *float64 {
	v, ok := d.raw(key)
	if !ok {
		return nil
	}
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		d.bad(key, "a number", v)
		return nil
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsInf(f, 0) {
		d.problems = append(d.problems, key+": number out of range")
		return nil
	}
	return &f
}

func (d *payloadDecoder) numOr(key string, def float64) float64 {
	if f := d.num(key); f != nil {
		return *f
	}
	return def
}

func (d *payloadDecoder) boolOr(key string, def bool) bool {
	v, ok := d.raw(key)
	if !ok {
		return def
	}
	switch string(v) {
	case "true":
		return true
	case "false":
		return false
	}
	d.bad(key, "a boolean", v)
	return def
}

func (d *payloadDecoder) strMap(key string) map[string]string {
	v, ok := d.raw(key)
	if !ok {
		return nil
	}
	if v[0] != '{' {
		d.bad(key, "an object", v)
		return nil
	}
	members, _, err := objectMembers(v, 0, nil)
	if err != nil {
		d.problems = append(d.problems, key+": malformed object")
		return nil
	}
	m := make(map[string][]byte, len(members))
	for _, mem := range members {
		m[string(mem.key)] = mem.raw
	}
	out := make(map[string]string, len(m))
	for k, rv := range m {
		if len(rv) == 0 || rv[0] != '"' {
			d.bad(key+"."+k, "a string", rv)
			continue
		}
		s, err := unquoteJSON(rv)
		if err != nil {
			d.problems = append(d.problems, key+"."+k+": malformed string")
			continue
		}
		out[k] = s
	}
	return out
}

// EncodePayload writes the full key set of SPEC §2 in Hermes' field order,
// with null for empty optional strings and unset times, so that Python's
// json.loads and DecodePayload both read it back exactly.
func EncodePayload(p *Proposal) []byte {
	return []byte(PayloadObject(p).String())
}

// PayloadObject is the payload as a JSONObject, for writers that add keys
// after the SPEC §2 set.
func PayloadObject(p *Proposal) *JSONObject {
	o := NewJSONObject().
		Str("approval_id", p.ApprovalID).
		Num("created_at", p.CreatedAt).
		OptNum("expires_at", p.ExpiresAt).
		Str("status", string(orStatus(p.Status))).
		OptNum("consumed_at", p.ConsumedAt).
		OptStr("consumed_by", p.ConsumedBy).
		Str("session_key", p.SessionKey).
		OptStr("requester", p.Requester).
		Str("command", p.Command).
		OptStr("cwd", p.Cwd).
		OptStr("backend", p.Backend).
		StrMap("env_overrides", p.EnvOverrides).
		Str("risk_level", string(p.RiskLevel)).
		Str("risk_reason", p.RiskReason).
		Str("policy_decision", p.PolicyDecision).
		OptStr("policy_version", p.PolicyVersion).
		Bool("requires_explicit_approval", p.RequiresExplicitApproval).
		Str("default_decision", p.DefaultDecision).
		OptStr("diff_text", p.DiffText).
		OptStr("diff_summary", p.DiffSummary).
		Str("display_text", p.DisplayText). // Hermes' default is "", not null
		Str("execution_status", string(orExec(p.ExecutionStatus))).
		OptStr("execution_reason", p.ExecutionReason).
		OptNum("execution_recorded_at", p.ExecutionRecordedAt)
	if p.RequesterContext != "" {
		o.Str(ContextKey, p.RequesterContext)
	}
	if p.Origin != "" {
		o.Str(OriginKey, p.Origin)
	}
	if p.Impact != nil {
		o.Obj(ImpactKey, impactObject(p.Impact))
	}
	if p.Hermes != nil {
		o.Obj(HermesKey, hermesObject(p.Hermes))
	}
	if p.RequiresTextConfirm {
		// Hermes' tier-2 keys, only where they mean something: readers
		// of the first revision drop keys they do not know.
		o.Bool("requires_text_confirm", true).Str("nonce", p.Nonce).Str("verb", p.Verb).Str("target", p.Target)
	}
	return o
}

func orStatus(s Status) Status {
	if s == "" {
		return StatusPending
	}
	return s
}

func orExec(e ExecutionStatus) ExecutionStatus {
	if e == "" {
		return ExecNotStarted
	}
	return e
}

// QuoteJSON exposes the exact-bytes string codec for other encoders (the
// CLI's --json output) so that every JSON the project writes keeps agent
// bytes the same way.
func QuoteJSON(s string) string { return quoteJSON(s) }
