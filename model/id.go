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
