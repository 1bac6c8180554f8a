package policy

import (
	"slices"
	"testing"
)

func TestRequesters(t *testing.T) {
	for _, c := range []struct {
		requester, submitter, origin string
		want                         []string
	}{
		{"Alice@laptop", "", "", []string{"alice"}},
		{"alice@laptop", "alice", "alice@laptop", []string{"alice"}},
		{"agent:ci", "bob", "carol@host", []string{"agent:ci", "bob", "carol"}},
		{"", "", "", nil},
		{"  @ops:example.org ", "", "", []string{"@ops:example.org"}},
	} {
		if got := Requesters(c.requester, c.submitter, c.origin); !slices.Equal(got, c.want) {
			t.Errorf("Requesters(%q, %q, %q) = %q, want %q", c.requester, c.submitter, c.origin, got, c.want)
		}
	}
}

func TestRequesterWords(t *testing.T) {
	for _, c := range []struct{ requester, submitter, origin, want string }{
		{"alice@laptop", "", "alice@laptop", "requester alice@laptop"},
		{"agent:ci", "", "bob@host", "requester agent:ci, submitted by bob@host"},
		// The submitter's recorded person names who submitted when the
		// origin says someone else.
		{"agent:ci", "carol", "bob@host", "requester agent:ci, submitted by carol"},
		{"agent:ci", "bob", "bob@host", "requester agent:ci, submitted by bob@host"},
		{"alice", "", "", "requester alice"},
	} {
		if got := RequesterWords(c.requester, c.submitter, c.origin); got != c.want {
			t.Errorf("RequesterWords(%q, %q, %q) = %q, want %q", c.requester, c.submitter, c.origin, got, c.want)
		}
	}
}

func TestRequesterOfAndVoteOf(t *testing.T) {
	reqs := []string{"agent:ci", "bob"}
	if got := RequesterOf(reqs, Voter{Person: "bob"}); got != "bob" {
		t.Errorf("RequesterOf bob = %q", got)
	}
	if got := RequesterOf(reqs, Voter{Person: ""}); got != "" {
		t.Errorf("nobody is a requester, got %q", got)
	}
	cast := []Voter{{Person: "alice", Key: "SHA256:a"}, {Person: "carol"}}
	for _, c := range []struct {
		me   Voter
		want int
	}{
		{Voter{Person: "alice"}, 0},
		{Voter{Person: "mallory", Key: "SHA256:a"}, 0}, // the same key under another name
		{Voter{Person: "carol", Key: "SHA256:c"}, 1},
		{Voter{Person: "dave"}, -1},
		{Voter{}, -1},
	} {
		if got := VoteOf(cast, c.me); got != c.want {
			t.Errorf("VoteOf(%+v) = %d, want %d", c.me, got, c.want)
		}
	}
}

func TestCounts(t *testing.T) {
	for _, c := range []struct {
		ended, castOn, payload string
		open, want             bool
	}{
		{"", "aa", "aa", true, true},
		{"consumed", "aa", "aa", true, false},
		{"", "aa", "bb", true, false},
		{"", "aa", "aa", false, false},
	} {
		if got := Counts(c.ended, c.castOn, c.payload, c.open); got != c.want {
			t.Errorf("Counts(%q, %q, %q, %v) = %v", c.ended, c.castOn, c.payload, c.open, got)
		}
	}
}

func TestEligibility(t *testing.T) {
	reqs := []string{"agent:ci", "bob"}
	cast := []Voter{{Person: "alice", Key: "SHA256:a"}}
	for _, c := range []struct {
		name      string
		me        Voter
		helps     bool
		met       bool
		want      Refusal
		wantIndex int
	}{
		{"nobody", Voter{Key: "SHA256:z"}, true, false, NoPerson, -1},
		{"own proposal first", Voter{Person: "bob", Key: "SHA256:a"}, true, false, OwnProposal, 1},
		{"voted by name", Voter{Person: "alice"}, true, false, VotedAlready, 0},
		{"voted by key", Voter{Person: "eve", Key: "SHA256:a"}, true, false, VotedAlready, 0},
		{"would not count", Voter{Person: "dave"}, false, false, WouldNotCount, -1},
		{"met: any other person completes it", Voter{Person: "dave"}, false, true, Eligible, -1},
		{"helps", Voter{Person: "dave"}, true, false, Eligible, -1},
	} {
		r, at := Eligibility(c.me, reqs, cast, c.helps, c.met)
		if r != c.want || at != c.wantIndex {
			t.Errorf("%s: Eligibility = %d, %d; want %d, %d", c.name, r, at, c.want, c.wantIndex)
		}
	}
}
