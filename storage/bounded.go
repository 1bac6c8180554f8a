package storage

import (
	"context"
	"strconv"
	"strings"
)

// What a verifier reads of rows the agent's user can write is bounded, in
// the query itself: a row of a gigabyte, or millions of rows, would
// otherwise be read whole into the memory of a hook, and an agent runs the
// command of a hook that was killed for it.
const (
	// MaxStatementBytes is the longest statement approve-tui signs or
	// reads (trust.ParseStatement refuses longer).
	MaxStatementBytes = 4096
	// MaxArmoredBytes bounds an armored signature: an RSA key of 16384
	// bits, the largest x/crypto reads, signs in under 6 KiB.
	MaxArmoredBytes = 64 << 10
	// maxClaimBytes bounds the row's other text columns (ids, event,
	// principal and key claims).
	maxClaimBytes = 1024
	// MaxPolicySourceBytes is the largest policy file policy set accepts
	// (config's limit on any file it reads).
	MaxPolicySourceBytes = 1 << 20
)

// selectSignaturesBounded reads at most ? signatures of one id, each
// column cut one character past its bound, so that a longer value arrives
// longer than any approve-tui wrote, and is refused as malformed.
var selectSignaturesBounded = `SELECT seq, ` + cut("approval_id", maxClaimBytes) + `, ` + cut("event", maxClaimBytes) + `, ` +
	cut("principal", maxClaimBytes) + `, ` + cut("key_fp", maxClaimBytes) + `, ` + cut("statement", MaxStatementBytes) + `, ` +
	cut("signature", MaxArmoredBytes) + `, at
	FROM approve_tui_signatures WHERE approval_id = ? ORDER BY seq LIMIT ?`

func cut(col string, n int) string {
	return "substr(" + col + ", 1, " + strconv.Itoa(n+1) + ")"
}

// SignaturesUpTo is Signatures as a verifier reads them: the first n
// rows of id at most (the caller refuses when it gets n: more than any
// approval or policy history has), each column cut one character past
// the longest approve-tui writes.
func (st *Store) SignaturesUpTo(ctx context.Context, id string, n int) ([]SignatureRecord, error) {
	return readRows(ctx, st, "signatures", scanSignatures, selectSignaturesBounded, id, n)
}

// PolicyTextsBySHA256 are the policy versions whose sha256 column says
// sum (at most n, newest first), their source cut one character past the
// largest policy file: what a verifier that hashes the text itself looks
// for, without reading every version's text. A row whose sha256 column
// lies is not found (the policy then cannot be known: the verifier
// refuses); one whose text is not sum's is the caller's to refuse.
func (st *Store) PolicyTextsBySHA256(ctx context.Context, sum string, n int) ([]PolicyText, error) {
	return readRows(ctx, st, "policy versions", scanPolicyTexts, `SELECT version, sha256, `+cut("source", MaxPolicySourceBytes)+`, set_at, `+cut("set_by", maxClaimBytes)+`
		FROM approve_tui_policy WHERE lower(sha256) = ? ORDER BY version DESC LIMIT ?`, strings.ToLower(sum), n)
}
