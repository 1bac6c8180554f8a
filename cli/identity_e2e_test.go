package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// Who decides is the OS's answer (the real uid's user; sudo's user only
// for real root, when SUDO_UID and SUDO_USER agree) or the SSH key the
// server verified: never a host name or anything else the environment
// sets. The real binary, run as several OS users on one store.

// osUser is an account of this machine the test runs the binary as.
type osUser struct {
	name     string
	uid, gid uint32
}

func lookupOSUser(t *testing.T, name string) osUser {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("the OS user %s is needed (Debian has it): %v", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return osUser{name: name, uid: uint32(uid), gid: uint32(gid)}
}

// identityRig is the binary and a store every OS user may write.
type identityRig struct {
	t        *testing.T
	dir, bin string
	db       string
}

func newIdentityRig(t *testing.T) *identityRig {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("runs the binary as other OS users: needs root (CI runs as root)")
	}
	dir := t.TempDir()
	// Every user reaches the binary and the store.
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	r := &identityRig{t: t, dir: dir, bin: buildBinary(t, dir), db: filepath.Join(dir, "state.db")}
	if code, out := r.run(nil, nil, "init"); code != 0 {
		t.Fatalf("init: %d %s", code, out)
	}
	if err := os.Chmod(r.db, 0o666); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("policy:\n  - match: {risk: high}\n    approvals: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := r.run(nil, nil, "policy", "set", policy); code != 0 {
		t.Fatalf("policy set: %d %s", code, out)
	}
	return r
}

// run runs the binary on the store with env (and nothing else of the
// test's environment but PATH), as cred (nil: root) or through wrap (a
// command line that runs the binary, e.g. setpriv), and returns its exit
// code and output.
func (r *identityRig) run(cred *osUser, env []string, args ...string) (int, string) {
	return r.runVia(cred, nil, env, args...)
}

func (r *identityRig) runVia(cred *osUser, wrap []string, env []string, args ...string) (int, string) {
	r.t.Helper()
	argv := append(append(append([]string{}, wrap...), r.bin, "--db", r.db), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.dir, "TERM=dumb"}, env...)
	cmd.Dir = r.dir
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: cred.uid, Gid: cred.gid, NoSetGroups: true}}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		r.t.Fatalf("%v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// submit submits a high-risk command as cred with env; it returns the id.
func (r *identityRig) submit(cred *osUser, env []string, command string) string {
	r.t.Helper()
	code, out := r.run(cred, env, "submit", "--ttl", "1h", "--risk", "high", "--requester", "ci-bot", "--", command)
	if code != 0 {
		r.t.Fatalf("submit: %d %s", code, out)
	}
	return strings.TrimSpace(out)
}

func (r *identityRig) approve(cred *osUser, wrap, env []string, id string) (int, string) {
	r.t.Helper()
	return r.runVia(cred, wrap, env, "approve", "--confirm", id, "--", id)
}

// votes reads id's votes from the store.
func (r *identityRig) votes(id string) []storage.Vote {
	r.t.Helper()
	return readStore(r.t, r.db, func(ctx context.Context, s *storage.Store) ([]storage.Vote, error) { return s.Votes(ctx, id) })
}

func (r *identityRig) record(id string) *storage.Record {
	r.t.Helper()
	return readStore(r.t, r.db, func(ctx context.Context, s *storage.Store) (*storage.Record, error) { return s.Get(ctx, id) })
}

// An agent's host name that says "(as carol)" neither lets the agent
// approve its own proposal nor refuses carol.
func TestIdentityHostNameClaimsNobody(t *testing.T) {
	r := newIdentityRig(t)
	agent, carol := lookupOSUser(t, "nobody"), lookupOSUser(t, "daemon")
	hostile := []string{model.EnvHost + "=vm (as " + carol.name + ")"}
	id := r.submit(&agent, hostile, "systemctl stop postgresql")

	code, out := r.approve(&agent, nil, hostile, id)
	if code != ExitError || !strings.Contains(out, "nobody approves a proposal of their own agent") {
		t.Fatalf("the agent approving its own proposal: %d %s", code, out)
	}
	if vs := r.votes(id); len(vs) != 0 {
		t.Fatalf("the agent's own vote was recorded: %+v", vs)
	}
	code, out = r.approve(&carol, nil, []string{model.EnvHost + "=ops-1"}, id)
	if code != ExitVoted {
		t.Fatalf("%s was refused: %d %s", carol.name, code, out)
	}
	if vs := r.votes(id); len(vs) != 1 || vs[0].Person != carol.name || vs[0].Key != "" {
		t.Fatalf("votes %+v", vs)
	}
	if code, out := r.approve(nil, nil, nil, id); code != 0 {
		t.Fatalf("root completing it: %d %s", code, out)
	}
	if got := r.record(id); got.Status != model.StatusConsumed || strings.Contains(got.ConsumedBy, "(as") {
		t.Fatalf("consumed: %s by %q", got.Status, got.ConsumedBy)
	}
	// The host name is shown, made plain: nothing in it reads as a note.
	if rec := r.record(id); rec.Origin != agent.name+"@vm-as-"+carol.name {
		t.Fatalf("origin %q: the host name is not kept plain", rec.Origin)
	}
}

// A host name carrying another person's key fingerprint records no key:
// the person whose key it is still counts, over the path an SSH session
// decides through.
func TestIdentityHostNameCarriesNoKey(t *testing.T) {
	r := newIdentityRig(t)
	agent, voter := lookupOSUser(t, "nobody"), lookupOSUser(t, "daemon")
	key := filepath.Join(r.dir, "bob")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "bob@desk", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	fpOut, err := exec.Command("ssh-keygen", "-lf", key+".pub").Output()
	if err != nil {
		t.Fatal(err)
	}
	fp := strings.Fields(string(fpOut))[1]
	if !strings.HasPrefix(fp, "SHA256:") {
		t.Fatalf("fingerprint %q", fp)
	}
	id := r.submit(&agent, nil, "systemctl stop postgresql")
	code, out := r.approve(&voter, nil, []string{model.EnvHost + "=vm (" + fp + ")"}, id)
	if code != ExitVoted {
		t.Fatalf("the local vote: %d %s", code, out)
	}
	vs := r.votes(id)
	if len(vs) != 1 || vs[0].Key != "" || vs[0].Person != voter.name || strings.Contains(vs[0].Actor, "(") {
		t.Fatalf("the local vote recorded %+v", vs)
	}
	// Bob, by the key the server verified, is another person.
	bob := model.Actor{Surface: model.SurfaceSSH, Name: "bob@desk (" + fp + ")", Person: "bob", Key: fp}
	var stdout, stderr bytes.Buffer
	if code := ExecuteAs(context.Background(), []string{"approve", "--confirm", id, "--", id}, r.db, bob, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("bob: %d %s %s", code, stdout.String(), stderr.String())
	}
	if got := r.record(id); got.Status != model.StatusConsumed {
		t.Fatalf("after bob: %s", got.Status)
	}
}

// SUDO_UID and SUDO_USER name the person only for a process whose real
// uid is root, and only when they agree on an existing user.
func TestIdentitySudoOnlyForRealRoot(t *testing.T) {
	r := newIdentityRig(t)
	submitter, nobody, daemon := lookupOSUser(t, "bin"), lookupOSUser(t, "nobody"), lookupOSUser(t, "daemon")
	sudo := func(uid uint32, name string) []string {
		return []string{"SUDO_UID=" + strconv.Itoa(int(uid)), "SUDO_USER=" + name, "SUDO_GID=" + strconv.Itoa(int(uid))}
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatalf("setpriv (util-linux) is needed to run a process whose real uid is not its effective one: %v", err)
	}
	for _, tc := range []struct {
		name string
		cred *osUser
		wrap []string
		env  []string
		want string
	}{
		{"root-under-sudo", nil, nil, sudo(daemon.uid, daemon.name), daemon.name},
		{"root-sudo-user-disagrees", nil, nil, sudo(daemon.uid, "bin"), "root"},
		{"root-sudo-user-alone", nil, nil, []string{"SUDO_USER=" + daemon.name}, "root"},
		{"root-sudo-uid-unknown", nil, nil, sudo(4242424, "ghost"), "root"},
		{"not-root", &nobody, nil, sudo(daemon.uid, daemon.name), nobody.name},
		{"effective-root-real-nobody", nil, []string{"setpriv", "--ruid=" + strconv.Itoa(int(nobody.uid)), "--euid=0",
			"--rgid=" + strconv.Itoa(int(nobody.gid)), "--egid=0", "--clear-groups"}, sudo(daemon.uid, daemon.name), nobody.name},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := r.submit(&submitter, nil, "systemctl stop postgresql")
			code, out := r.approve(tc.cred, tc.wrap, tc.env, id)
			if code != ExitVoted {
				t.Fatalf("the vote: %d %s", code, out)
			}
			if vs := r.votes(id); len(vs) != 1 || vs[0].Person != tc.want {
				t.Fatalf("counted as %+v, want %s", vs, tc.want)
			}
		})
	}
}

// A one-person policy set mid-vote lowers nothing, through the binary:
// the voter's second approval is refused, explain says what it is held to,
// and a second person completes it.
func TestQuorumLoweredMidVoteByTheBinary(t *testing.T) {
	r := newIdentityRig(t)
	agent, alice := lookupOSUser(t, "nobody"), lookupOSUser(t, "daemon")
	id := r.submit(&agent, nil, "systemctl stop postgresql")
	if code, out := r.approve(&alice, nil, nil, id); code != ExitVoted {
		t.Fatalf("the first vote: %d %s", code, out)
	}
	lowered := filepath.Join(r.dir, "one.yaml")
	if err := os.WriteFile(lowered, []byte("policy: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := r.run(nil, nil, "policy", "set", lowered); code != 0 {
		t.Fatalf("policy set: %d %s", code, out)
	}
	code, out := r.approve(&alice, nil, nil, id)
	if code != ExitError || !strings.Contains(out, "voted already") {
		t.Fatalf("the same person after lowering: %d %s", code, out)
	}
	if got := r.record(id); got.Status != model.StatusPending {
		t.Fatalf("consumed by one person: %s by %q", got.Status, got.ConsumedBy)
	}
	if code, out := r.run(nil, nil, "policy", "explain", id); code != 0 || !strings.Contains(out, "held to policy v1 ") ||
		!strings.Contains(out, "1 of 2 approvals by v1 ") {
		t.Fatalf("explain: %d %s", code, out)
	}
	if code, out := r.approve(nil, nil, nil, id); code != 0 {
		t.Fatalf("a second person: %d %s", code, out)
	}
	if got := r.record(id); got.Status != model.StatusConsumed || !strings.Contains(got.ConsumedBy, "daemon@") || !strings.Contains(got.ConsumedBy, "root@") {
		t.Fatalf("after the second person: %s by %q", got.Status, got.ConsumedBy)
	}
}
