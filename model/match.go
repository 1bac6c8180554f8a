package model

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Match names one call an agent may ask for again: the same requester,
// session, exact command bytes and working directory. A proposal parked
// when its waiter stopped is taken again only by a call with the same
// Match (see storage.Park); any other command, session, requester or
// directory is another call.
type Match struct {
	Requester  string
	SessionKey string
	Command    string
	Cwd        string
}

// MatchOf is the Match of proposal p.
func MatchOf(p *Proposal) Match {
	return Match{Requester: p.Requester, SessionKey: p.SessionKey, Command: p.Command, Cwd: p.Cwd}
}

// Key is m's hex SHA-256 over its four fields, each preceded by its length
// in bytes, so that no two different Matches share a key by moving bytes
// from one field to the next. The store keeps and indexes this key only;
// every match is checked again against the proposal's own fields.
func (m Match) Key() string {
	h := sha256.New()
	var n [8]byte
	h.Write([]byte("approve-tui match v1\x00"))
	for _, f := range [...]string{m.Requester, m.SessionKey, m.Command, m.Cwd} {
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}
