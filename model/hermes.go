package model

import (
	"fmt"
	"strconv"
	"strings"
)

// HermesKey is approve-tui's own payload key for what Hermes' approval
// transport said of a request (Proposal.Hermes); Hermes ignores keys it
// does not know.
const HermesKey = "approve_tui_hermes"

// HermesRequest is what Hermes handed its approval transport with a
// command to approve (`approve-tui hook hermes`): its request, as Hermes
// made it, and when Hermes stops waiting. Every string is Hermes' (foreign
// text).
type HermesRequest struct {
	// RequestID and Digest bind the answer to Hermes' request.
	RequestID string
	Digest    string
	// Surface is Hermes' presentation class: cli or gateway.
	Surface string
	// PatternKey and PatternKeys name the patterns Hermes flagged.
	PatternKey  string
	PatternKeys []string
	// TimeoutSeconds is Hermes' approvals.timeout for the request.
	TimeoutSeconds float64
	// Deadline is when Hermes stops waiting and denies (epoch seconds; 0:
	// not known).
	Deadline float64
}

// HermesRedacted says what the command of a Hermes proposal is.
const HermesRedacted = "Hermes' redacted display: Hermes runs its original, secrets unmasked"

// SaysLabel is how a proposal's requester's words are labelled: "Hermes
// says" for Hermes' own description, "agent says" otherwise.
func (p *Proposal) SaysLabel() string {
	if p.Hermes != nil {
		return "Hermes says"
	}
	return "agent says"
}

// Patterns is the pattern keys Hermes flagged, PatternKey first, each once.
func (h *HermesRequest) Patterns() []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range append([]string{h.PatternKey}, h.PatternKeys...) {
		if k != "" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// Words are the request and its patterns in the words every surface
// prints: "request R via S (approvals.timeout 60s)", and the pattern keys
// joined ("" when none). Every string of Hermes' goes through clean, the
// caller's sanitiser (plain, or marking escapes in its own style); an
// empty surface reads "-".
func (h *HermesRequest) Words(clean func(string) string) (request, patterns string) {
	surface := clean(h.Surface)
	if surface == "" {
		surface = "-"
	}
	request = fmt.Sprintf("request %s via %s (approvals.timeout %gs)", clean(h.RequestID), surface, h.TimeoutSeconds)
	pats := h.Patterns()
	for i := range pats {
		pats[i] = clean(pats[i])
	}
	return request, strings.Join(pats, ", ")
}

// hermesObject is h as its payload object.
func hermesObject(h *HermesRequest) *JSONObject {
	o := NewJSONObject().Str("request_id", h.RequestID).Str("digest", h.Digest).Str("surface", h.Surface).
		Str("pattern_key", h.PatternKey).Strs("pattern_keys", h.PatternKeys).Num("timeout_seconds", h.TimeoutSeconds)
	if h.Deadline > 0 {
		o.Num("deadline", h.Deadline)
	}
	// Hermes redacts secrets in what it hands a transport: the command
	// pinned is its display, and Hermes runs its original.
	return o.Bool("redacted", true)
}

// hermes decodes the payload's HermesKey object (nil when absent).
func (d *payloadDecoder) hermes() *HermesRequest {
	sub, ok := d.object(HermesKey)
	if !ok {
		return nil
	}
	h := &HermesRequest{
		RequestID:      sub.str("request_id"),
		Digest:         sub.str("digest"),
		Surface:        sub.str("surface"),
		PatternKey:     sub.str("pattern_key"),
		PatternKeys:    sub.strs("pattern_keys"),
		TimeoutSeconds: sub.numOr("timeout_seconds", 0),
		Deadline:       sub.numOr("deadline", 0),
	}
	for _, p := range sub.problems {
		d.problems = append(d.problems, HermesKey+"."+p)
	}
	return h
}

// strs decodes an array of strings.
func (d *payloadDecoder) strs(key string) []string {
	v, ok := d.raw(key)
	if !ok {
		return nil
	}
	if v[0] != '[' {
		d.bad(key, "an array", v)
		return nil
	}
	// Wrap the array as an object's members to reuse the scanner: each
	// element becomes the value of an index key.
	elems, err := arrayElements(v)
	if err != nil {
		d.problems = append(d.problems, key+": malformed array")
		return nil
	}
	out := make([]string, 0, len(elems))
	for i, e := range elems {
		if len(e) == 0 || e[0] != '"' {
			d.bad(key+"["+strconv.Itoa(i)+"]", "a string", e)
			continue
		}
		s, err := unquoteJSON(e)
		if err != nil {
			d.problems = append(d.problems, key+"["+strconv.Itoa(i)+"]: malformed string")
			continue
		}
		out = append(out, s)
	}
	return out
}
