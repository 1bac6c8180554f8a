package trust

import (
	"sort"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/sshtest"
)

// reportPercentiles adds p50 and p99 of the per-operation times.
func reportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(q float64) float64 {
		i := int(q * float64(len(d)-1))
		return float64(d[i].Microseconds())
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// BenchmarkVerifyTwoEd25519 is what a hook or run pays: two ed25519
// signatures checked against a trust file already loaded.
func BenchmarkVerifyTwoEd25519(b *testing.B) { benchVerifyTwo(b, false) }

// BenchmarkVerifyTwoEd25519Load also loads the trust file (its path and
// permission checks and its parse) on every round, as a new hook process
// does.
func BenchmarkVerifyTwoEd25519Load(b *testing.B) { benchVerifyTwo(b, true) }

func benchVerifyTwo(b *testing.B, load bool) {
	needSSHKeygen(b)
	dir := b.TempDir()
	alice := genKey(b, dir, "ed25519", "alice")
	bob := genKey(b, dir, "ed25519", "bob")
	trustPath := writeTrust(b, dir, "alice "+sshtest.PublicLine(b, alice)+"\nbob "+sshtest.PublicLine(b, bob)+"\n")
	as, err := LoadTrustFile(trustPath)
	if err != nil {
		b.Fatal(err)
	}
	type signed struct{ sig, stmt []byte }
	var sigs []signed
	st := sampleStatement("alice")
	for _, k := range []struct{ key, principal string }{{alice, "alice"}, {bob, "bob"}} {
		s, err := KeyFileSigner(k.key)
		if err != nil {
			b.Fatal(err)
		}
		st.Principal = k.principal
		stmt := mustEncode(b, st)
		sig, err := s.Sign(stmt)
		if err != nil {
			b.Fatal(err)
		}
		sigs = append(sigs, signed{sig, stmt})
	}
	want := expectOf(st)
	now := time.Now()
	timeEach(b, func() {
		if load {
			if as, err = LoadTrustFile(trustPath); err != nil {
				b.Fatal(err)
			}
		}
		var got []Verified
		for _, s := range sigs {
			v, err := Verify(s.sig, s.stmt, as, want, now)
			if err != nil {
				b.Fatal(err)
			}
			got = append(got, v)
		}
		if _, ok := Quorum(got, 2, "agent", as); !ok {
			b.Fatal("no quorum")
		}
	})
}

// BenchmarkSignAgent signs one statement through a real local ssh-agent
// holding an ed25519 key, connection already open.
func BenchmarkSignAgent(b *testing.B) {
	sock, stmt := aliceInAgent(b)
	s, err := DialAgent(sock, "")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	timeEach(b, func() {
		if _, err := s.Sign(stmt); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkSignAgentDial is the same with a new agent connection per
// signature, as a one-shot approve command pays.
func BenchmarkSignAgentDial(b *testing.B) {
	sock, stmt := aliceInAgent(b)
	timeEach(b, func() {
		s, err := DialAgent(sock, "")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Sign(stmt); err != nil {
			b.Fatal(err)
		}
		s.Close()
	})
}

// aliceInAgent starts a real ssh-agent holding alice's new ed25519 key and
// returns its socket and a statement for her to sign.
func aliceInAgent(b *testing.B) (sock string, stmt []byte) {
	needSSHKeygen(b)
	alice := genKey(b, b.TempDir(), "ed25519", "alice")
	return sshtest.Agent(b, alice), mustEncode(b, sampleStatement("alice"))
}

// timeEach runs op b.N times and reports the percentiles of its times;
// the set-up before it is not counted.
func timeEach(b *testing.B, op func()) {
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		op()
		times = append(times, time.Since(t0))
	}
	b.StopTimer()
	reportPercentiles(b, times)
}
