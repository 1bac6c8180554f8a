package serve

import (
	"crypto/ed25519"
	"crypto/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/sshtest"

	"github.com/charmbracelet/ssh"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/approve-tui/approve-tui/trust"
	"github.com/approve-tui/approve-tui/tui"
)

// BenchmarkForwardedAgentSign is what an approve in an SSH session waits
// for before it goes to the store: a channel opened to the client's
// forwarded agent over the session's connection, the agent's keys listed
// and the one the trust file knows chosen, a statement signed through it.
// The client is Go's SSH client forwarding a real ssh-agent; one session
// runs every round.
func BenchmarkForwardedAgentSign(b *testing.B) {
	for _, tool := range []string{"ssh-keygen", "ssh-agent", "ssh-add"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("%s is not installed (package openssh-client)", tool)
		}
	}
	dir := b.TempDir()
	key := sshtest.Keygen(b, filepath.Join(dir, "alice"), "ed25519", "alice")
	tp := filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(tp, []byte("alice "+sshtest.PublicLine(b, key)+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	signers, err := trust.LoadTrustFile(tp)
	if err != nil {
		b.Fatal(err)
	}
	ts := &trust.Settings{Mode: trust.ModeRequired, Path: tp, Signers: signers, Store: "bench"}
	sock := sshtest.Agent(b, key)
	stmt, err := trust.Statement{Store: "bench", Decision: trust.DecisionApprove, ApprovalID: "Ab3_x-9QzL0k", PayloadSHA256: strings.Repeat("ab", 32),
		Risk: trust.RiskHigh, Principal: "alice", Time: time.Now().UTC()}.Encode()
	if err != nil {
		b.Fatal(err)
	}

	_, hostPriv, _ := ed25519.GenerateKey(rand.Reader)
	host, _ := gossh.NewSignerFromKey(hostPriv)
	n := b.N
	times := make([]time.Duration, 0, n)
	done := make(chan error, 1)
	srv := &ssh.Server{
		PublicKeyHandler: func(ssh.Context, ssh.PublicKey) bool { return true },
		Handler: func(sess ssh.Session) {
			for i := 0; i < n; i++ {
				start := time.Now()
				ag, closer, err := forwardedAgent(sess)
				if err != nil {
					done <- err
					return
				}
				s, err := tui.ChooseAgentKey(ag, ts)
				if err == nil {
					_, err = s.Sign(stmt)
				}
				closer.Close()
				if err != nil {
					done <- err
					return
				}
				times = append(times, time.Since(start))
			}
			done <- nil
		},
	}
	srv.AddHostKey(host)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Close()

	_, clientPriv, _ := ed25519.GenerateKey(rand.Reader)
	client, _ := gossh.NewSignerFromKey(clientPriv)
	c, err := gossh.Dial("tcp", l.Addr().String(), &gossh.ClientConfig{User: "alice", Auth: []gossh.AuthMethod{gossh.PublicKeys(client)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := agent.ForwardToRemote(c, sock); err != nil {
		b.Fatal(err)
	}
	sess, err := c.NewSession()
	if err != nil {
		b.Fatal(err)
	}
	if err := agent.RequestAgentForwarding(sess); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	if err := sess.Shell(); err != nil {
		b.Fatal(err)
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
}
