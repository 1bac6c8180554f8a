package trust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

func sanitize(s string) string { return model.Sanitize(s, model.Line) }

// Policy memory: the operator's side keeps, in a file of its own, the
// newest signed policy it has seen in force for each store. The agent's
// user can delete the store's policy rows and so bring an older signed
// policy (or none) back; an operator surface that remembers the newer one
// refuses to sign an approval against the older. The caller names the
// file; this package reads no environment.

// PolicySeen is a signed policy found in force for a store: the SHA-256
// of its file, its signer and the statement's time.
type PolicySeen struct {
	SHA256   string    `json:"policy_sha256"`
	SignedBy string    `json:"signed_by"`
	SignedAt time.Time `json:"signed_at"`
}

func (p *PolicySeen) words() string {
	if p == nil {
		return "no signed policy"
	}
	return fmt.Sprintf("%s signed by %s at %s", p.SHA256[:min(12, len(p.SHA256))], p.SignedBy, p.SignedAt.UTC().Format(time.RFC3339))
}

// RollbackError is a store whose signed policy in force is older than one
// this operator's surface saw in force before.
type RollbackError struct {
	Store      string
	Seen, Now  *PolicySeen
	MemoryFile string
}

func (e *RollbackError) Error() string {
	return sanitize(fmt.Sprintf("the store's policy went back from %s to %s: rows were deleted; nothing is signed; a policy signer must set the policy again (remembered in %s)",
		e.Seen.words(), e.Now.words(), e.MemoryFile))
}

// memoryFile is the file's form.
type memoryFile struct {
	Format int                    `json:"format"`
	Stores map[string]*PolicySeen `json:"stores"`
}

const memoryFormat = 1

// maxMemoryFile bounds what is read of the file.
const maxMemoryFile = 4 << 20

// CheckPolicyMemory compares now, the signed policy the store holds in
// force (nil: none is signed), with what the memory file at path
// remembers for store. It refuses with a *RollbackError when now is older
// than the one remembered (or none, or another file signed at the same
// second); else it remembers now when it is newer, writing the file
// atomically (a temporary file renamed over it, mode 0600). A file that
// cannot be read or is not what this package writes is an error, never
// reset.
func CheckPolicyMemory(path, store string, now *PolicySeen) error {
	if path == "" {
		return errors.New("no policy memory file is named: the newest policy seen cannot be kept, so nothing is signed")
	}
	if _, err := readMemory(path); err != nil {
		return err // said as it is, before anything is made
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("the policy memory %s cannot be written (%s): nothing is signed until it can be", sanitize(path), sanitize(err.Error()))
	}
	unlock, err := lockMemory(path)
	if err != nil {
		return err
	}
	defer unlock()
	m, err := readMemory(path)
	if err != nil {
		return err
	}
	seen := m.Stores[store]
	if seen != nil {
		back := now == nil || now.SignedAt.Before(seen.SignedAt) ||
			now.SignedAt.Equal(seen.SignedAt) && now.SHA256 != seen.SHA256
		if back {
			return &RollbackError{Store: store, Seen: seen, Now: now, MemoryFile: path}
		}
		if now.SHA256 == seen.SHA256 && now.SignedAt.Equal(seen.SignedAt) {
			return nil
		}
	}
	if now == nil {
		return nil
	}
	c := *now
	c.SignedAt = c.SignedAt.UTC()
	m.Stores[store] = &c
	return writeMemory(path, m)
}

func readMemory(path string) (*memoryFile, error) {
	m := &memoryFile{Format: memoryFormat, Stores: map[string]*PolicySeen{}}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the policy memory %s cannot be read: %s", sanitize(path), sanitize(err.Error()))
	}
	defer f.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(io.LimitReader(f, maxMemoryFile+1)); err != nil {
		return nil, fmt.Errorf("the policy memory %s cannot be read: %s", sanitize(path), sanitize(err.Error()))
	}
	corrupt := func(why string) error {
		return fmt.Errorf("the policy memory %s is corrupt (%s): it is not reset, since it is what tells a rolled-back policy; move it aside only if you know the store's policy is the newest a policy signer set", sanitize(path), sanitize(why))
	}
	if b.Len() > maxMemoryFile {
		return nil, corrupt(fmt.Sprintf("larger than %d bytes", maxMemoryFile))
	}
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(m); err != nil {
		return nil, corrupt(err.Error())
	}
	if dec.More() {
		return nil, corrupt("text after the JSON object")
	}
	if m.Format != memoryFormat {
		return nil, corrupt(fmt.Sprintf("format %d, not %d", m.Format, memoryFormat))
	}
	if m.Stores == nil {
		m.Stores = map[string]*PolicySeen{}
	}
	for k, p := range m.Stores {
		if p == nil || checkHex("policy_sha256", p.SHA256) != nil || p.SignedAt.IsZero() {
			return nil, corrupt(fmt.Sprintf("the entry for %q is not a signed policy", clip(k)))
		}
	}
	return m, nil
}

func writeMemory(path string, m *memoryFile) error {
	fail := func(err error) error {
		return fmt.Errorf("the policy memory %s cannot be written (%s): nothing is signed until it can be", sanitize(path), sanitize(err.Error()))
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fail(err)
	}
	b = append(b, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(err)
	}
	tmp, err := os.CreateTemp(dir, ".policies-*.json")
	if err != nil {
		return fail(err)
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fail(err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fail(err)
	}
	return nil
}
