package model

import (
	"crypto/rand"
	"encoding/base64"
)

// NewID returns a fresh approval id: 9 random bytes (72 bits), URL-safe
// base64 without padding, so 12 characters of A-Za-z0-9_-. Hermes uses
// secrets.token_urlsafe(8): 64 bits in 11 characters. The operator retypes
// the id, so it stays short; 72 bits make a guessed or colliding id
// practically impossible. Ids never start with '-', which a command line
// would read as a flag.
func NewID() string {
	for {
		var b [9]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic("approve-tui: no randomness for an approval id: " + err.Error())
		}
		// An id that starts with '-' reads as a flag on a command line.
		if id := base64.RawURLEncoding.EncodeToString(b[:]); id[0] != '-' {
			return id
		}
	}
}

// maxPlainID bounds a plain id: approve-tui's are 12 characters, Hermes'
// 11.
const maxPlainID = 64

// IsPlainID reports whether id is a plain token that may go into a
// command line, a shell completion or a page's "open it" command as is:
// 1 to 64 characters of A-Za-z0-9_-, not starting with '-' (a flag). Ids
// of rows written by another program are free text: anything else is
// shown as data, never offered as a word to run.
func IsPlainID(id string) bool {
	if id == "" || len(id) > maxPlainID || id[0] == '-' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
