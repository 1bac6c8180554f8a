package storage

import (
	"strings"
	"testing"
)

// submitPayloadCases are submit details, the ones approve-tui writes and
// ones a hostile writer of the audit table might leave.
var submitPayloadCases = []string{
	`{"payload_sha256":"` + strings.Repeat("ab", 32) + `","risk":"high","session":"s"}`,
	`{"risk":"high","payload_sha256":"` + strings.Repeat("AB", 32) + `","policy_version":3,"submitter_person":"alice"}`,
	`{"PAYLOAD_SHA256":"upper"}`,
	`{"Payload_Sha256":"mixed","payload_sha256":"later"}`,
	`{"payload_sha256":"first","payload_sha256":null}`,
	`{"payload_sha256":"first","payload_sha256":7}`,
	`{"payload_sha256":"first","payload_sha256":{"x":1}}`,
	`{"payload_sha256":"esc\u0061ped"}`,
	`{"payload_sha256":"\udc80"}`,
	"{\"payload_sha256\":\"bad\xffutf8\"}",
	`{"payload\u005fsha256":"escaped key"}`,
	`{"payload_ſha256":"long s"}`,
	`{"nested":{"payload_sha256":"inner"}}`,
	`  { "payload_sha256" : "spaced" }  `,
	`{"payload_sha256":""}`,
	`{"payload_sha256":"x"} trailing`,
	`{"payload_sha256":"x",}`,
	`["payload_sha256","x"]`,
	`"payload_sha256"`,
	`null`,
	`{}`,
	``,
	`{"payload_sha256":"x"`,
	`{"a":tru}`,
}

// submitPayload reads a detail as encoding/json does.
func TestSubmitPayloadAsEncodingJSON(t *testing.T) {
	for _, d := range submitPayloadCases {
		if got, want := submitPayload(d), submitPayloadJSON([]byte(d)); got != want {
			t.Errorf("submitPayload(%q) = %q, encoding/json says %q", d, got, want)
		}
	}
}

func FuzzSubmitPayload(f *testing.F) {
	for _, d := range submitPayloadCases {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, d string) {
		if got, want := submitPayload(d), submitPayloadJSON([]byte(d)); got != want {
			t.Errorf("submitPayload(%q) = %q, encoding/json says %q", d, got, want)
		}
	})
}
