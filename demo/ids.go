package demo

import (
	"encoding/base64"
	"math/rand/v2"
)

// Independent random streams drawn from one seed, so that adding an entry to
// one catalogue does not change what the other draws.
const (
	streamSeed  = 0x5eed_0001 // ids of the seeded proposals
	streamAgent = 0x5eed_0002 // the simulated agent: order, ids, gaps
)

func newRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream))
}

// drawID returns n random bytes from r in URL-safe base64 without padding:
// 9 bytes give 12 characters like model.NewID, 8 bytes give 11 like Hermes'
// secrets.token_urlsafe(8). Like model.NewID it never starts with '-', which
// a command line would read as a flag.
func drawID(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if id := base64.RawURLEncoding.EncodeToString(b); id[0] != '-' {
			return id
		}
	}
}
