// Package serve is approve-tui over SSH: the console for each PTY session,
// a few read-only subcommands (and deny) for sessions without one, with
// every person identified by their public key and given a role (approver or
// watcher) that the store enforces, whatever the UI does. It sits beside
// the local console and the headless driver over the same tui model and
// storage.
package serve

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// Role is what a key may do.
type Role string

// Roles.
const (
	RoleApprover Role = "approver"
	RoleWatcher  Role = "watcher"
)

// Person is one key of the access files.
type Person struct {
	Name        string // the key's comment
	Fingerprint string // SHA256:…, as ssh-keygen -lf prints it
	Role        Role
}

// access holds the two authorized_keys files, re-read when they change.
type access struct {
	approvers, watchers string

	mu     sync.RWMutex
	byFP   map[string]Person
	stamps [2]fileStamp
}

type fileStamp struct {
	mod  time.Time
	size int64
	ok   bool
}

func stampOf(path string) fileStamp {
	if path == "" {
		return fileStamp{}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size(), ok: true}
}

func newAccess(approvers, watchers string) (*access, error) {
	a := &access{approvers: approvers, watchers: watchers}
	if err := a.load(); err != nil {
		return nil, err
	}
	return a, nil
}

// load reads both files. A key in both is a watcher (the lesser right).
func (a *access) load() error {
	m := map[string]Person{}
	for _, f := range []struct {
		path string
		role Role
	}{{a.approvers, RoleApprover}, {a.watchers, RoleWatcher}} {
		if f.path == "" {
			continue
		}
		ps, err := readAuthorizedKeys(f.path)
		if err != nil {
			return err
		}
		for _, p := range ps {
			p.Role = f.role
			if old, ok := m[p.Fingerprint]; ok && old.Role == RoleWatcher {
				continue
			}
			m[p.Fingerprint] = p
		}
	}
	a.mu.Lock()
	a.byFP = m
	a.stamps = [2]fileStamp{stampOf(a.approvers), stampOf(a.watchers)}
	a.mu.Unlock()
	return nil
}

// reloadIfChanged re-reads the files when either changed; it reports
// whether it did. A file that fails to parse keeps the last good set (and
// the error is returned, to be logged).
func (a *access) reloadIfChanged() (bool, error) {
	now := [2]fileStamp{stampOf(a.approvers), stampOf(a.watchers)}
	a.mu.RLock()
	same := now == a.stamps
	a.mu.RUnlock()
	if same {
		return false, nil
	}
	if err := a.load(); err != nil {
		a.mu.Lock()
		a.stamps = now // do not retry a broken file every second
		a.mu.Unlock()
		return false, err
	}
	return true, nil
}

// lookup finds the person a key belongs to.
func (a *access) lookup(key gossh.PublicKey) (Person, bool) {
	return a.byFingerprint(gossh.FingerprintSHA256(key))
}

// byFingerprint finds the person of a key fingerprint (SHA256:…).
func (a *access) byFingerprint(fp string) (Person, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	p, ok := a.byFP[fp]
	return p, ok
}

func (a *access) count() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return len(a.byFP)
}

// readAuthorizedKeys parses an OpenSSH authorized_keys file: one key per
// line, options allowed (and ignored), # comments and blank lines skipped.
// A key without a comment is named by its fingerprint.
func readAuthorizedKeys(path string) ([]Person, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("access file: %w", err)
	}
	var out []Person
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, comment, _, _, err := gossh.ParseAuthorizedKey([]byte(line))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: not an authorized_keys line: %v", path, n, err)
		}
		fp := gossh.FingerprintSHA256(key)
		name := strings.TrimSpace(comment)
		if name == "" {
			name = fp
		}
		out = append(out, Person{Name: name, Fingerprint: fp})
	}
	return out, sc.Err()
}
