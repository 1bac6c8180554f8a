package policy

import (
	"slices"
	"strings"
)

// The rules of who may vote on a proposal and which votes count. They are
// pure: the store applies them inside the transaction that approves (a
// rule checked anywhere else decides nothing), and every surface that says
// where a proposal stands reads them from here, so that what it says is
// what the store will do.

// Requesters are the people a proposal's approval may not come from, in
// lower case and each once: the person its requester names (the text
// before the first @), the person whose agent submitted it (submitter, as
// the store recorded the submitting actor's structured person; "" when
// unknown) and the person its origin names (older versions wrote the
// submitting OS user there). These names only ever refuse someone: no
// approval is counted on their word.
func Requesters(requester, submitter, origin string) []string {
	var out []string
	add := func(who string) {
		if who = strings.ToLower(who); who != "" && !slices.Contains(out, who) {
			out = append(out, who)
		}
	}
	add(Person(requester))
	add(submitter)
	add(Person(origin))
	return out
}

// RequesterWords names who asked for a proposal, as a refusal says it:
// "requester alice@laptop", or "requester agent:ci, submitted by bob" when
// the person whose agent submitted it (submitter, else its origin) is not
// the requester.
func RequesterWords(requester, submitter, origin string) string {
	by := origin
	if submitter != "" && !SamePerson(origin, submitter) {
		by = submitter
	}
	if by != "" && by != requester {
		return "requester " + requester + ", submitted by " + by
	}
	return "requester " + requester
}

// RequesterOf is who among requesters me is ("" when none): that person
// may not approve the proposal (self-approval).
func RequesterOf(requesters []string, me Voter) string {
	for _, who := range requesters {
		if SamePerson(who, me.Person) {
			return who
		}
	}
	return ""
}

// VoteOf is the index of me's vote among cast (-1: none), by name or by
// key, as the quorum tells one person from another: a person counts once.
func VoteOf(cast []Voter, me Voter) int {
	for i, v := range cast {
		if me.Same(v) {
			return i
		}
	}
	return -1
}

// Counts reports whether a vote still counts toward a proposal's quorum:
// it has not ended (ended ""), it was cast on the payload as it is now
// (castOn is the SHA-256 the voter read, payload the proposal's now), and
// the proposal is still open. Where signatures are required, the store
// also asks that a verified signature of the voter stands behind it.
func Counts(ended, castOn, payload string, open bool) bool {
	return ended == "" && castOn == payload && open
}

// Refusal is why an approval cannot count as a vote (Eligible: it can).
type Refusal int

// Refusals, in the order Eligibility checks them.
const (
	Eligible Refusal = iota
	// NoPerson: the actor names no person approve-tui established.
	NoPerson
	// OwnProposal: the voter is one of the proposal's requesters.
	OwnProposal
	// VotedAlready: the voter (by name or by key) has a vote that counts.
	VotedAlready
	// WouldNotCount: the quorum is not met and the vote would not bring
	// it closer (the places left are kept for a group the voter is not
	// in).
	WouldNotCount
)

// Eligibility says whether me's approval may count as a vote on a
// proposal whose requesters are requesters and whose counting votes are
// cast; helps is whether me's vote brings an unmet requirement closer
// (Policy.Helps) and met whether every requirement is met already. at is
// the index, in requesters (OwnProposal) or in cast (VotedAlready), of
// what refuses it.
func Eligibility(me Voter, requesters []string, cast []Voter, helps, met bool) (r Refusal, at int) {
	if me.Person == "" {
		return NoPerson, -1
	}
	for i, who := range requesters {
		if SamePerson(who, me.Person) {
			return OwnProposal, i
		}
	}
	if i := VoteOf(cast, me); i >= 0 {
		return VotedAlready, i
	}
	if !helps && !met {
		return WouldNotCount, -1
	}
	return Eligible, -1
}
