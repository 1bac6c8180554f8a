package trust

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPolicyMemoryRefusesRollback(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "approve-tui", "policies.json")
	t0 := time.Date(2026, 12, 5, 7, 0, 0, 0, time.UTC)
	lax := &PolicySeen{SHA256: strings.Repeat("1a", 32), SignedBy: "carol", SignedAt: t0}
	strict := &PolicySeen{SHA256: strings.Repeat("2b", 32), SignedBy: "carol", SignedAt: t0.Add(time.Minute)}
	other := &PolicySeen{SHA256: strings.Repeat("3c", 32), SignedBy: "carol", SignedAt: t0.Add(time.Minute)}
	must(t, CheckPolicyMemory(path, "sqlite:/a.db", nil)) // nothing seen, nothing signed: fine, nothing written
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file was written with nothing to remember: %v", err)
	}
	must(t, CheckPolicyMemory(path, "sqlite:/a.db", lax))
	must(t, CheckPolicyMemory(path, "sqlite:/a.db", strict))
	must(t, CheckPolicyMemory(path, "sqlite:/a.db", strict))
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("memory file: %v %v", fi, err)
	}
	for name, now := range map[string]*PolicySeen{"older": lax, "none": nil, "another at the same second": other} {
		err := CheckPolicyMemory(path, "sqlite:/a.db", now)
		var rb *RollbackError
		if !errors.As(err, &rb) || !strings.Contains(err.Error(), "went back from "+strict.SHA256[:12]+" signed by carol") ||
			!strings.Contains(err.Error(), "rows were deleted; nothing is signed; a policy signer must set the policy again") {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// Another store is remembered apart.
	must(t, CheckPolicyMemory(path, "sqlite:/b.db", lax))
	if err := CheckPolicyMemory(path, "sqlite:/b.db", nil); err == nil {
		t.Fatal("store b went back to no signed policy: accepted")
	}
	must(t, CheckPolicyMemory(path, "sqlite:/a.db", strict))
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if n := e.Name(); n != "policies.json" && n != "policies.json.lock" {
			t.Fatalf("temporary files left: %v", entries)
		}
	}
}

func TestPolicyMemoryBadFile(t *testing.T) {
	dir := t.TempDir()
	now := &PolicySeen{SHA256: strings.Repeat("1a", 32), SignedBy: "carol", SignedAt: time.Now()}
	for name, text := range map[string]string{
		"not JSON":      "{\"format\":1,\"stores\":{",
		"other format":  `{"format":2,"stores":{}}`,
		"unknown field": `{"format":1,"stores":{},"x":1}`,
		"bad entry":     `{"format":1,"stores":{"s":{"policy_sha256":"zz","signed_by":"carol","signed_at":"2026-12-05T07:00:00Z"}}}`,
		"trailing text": `{"format":1,"stores":{}} x`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		must(t, os.WriteFile(p, []byte(text), 0o600))
		err := CheckPolicyMemory(p, "s", now)
		if err == nil || !strings.Contains(err.Error(), "is corrupt") || !strings.Contains(err.Error(), "it is not reset") {
			t.Fatalf("%s: %v", name, err)
		}
		if b, _ := os.ReadFile(p); string(b) != text {
			t.Fatalf("%s: the corrupt file was changed to %q", name, b)
		}
	}
	// A directory nobody can create files in, root included.
	err := CheckPolicyMemory("/proc/self/policies.json", "s", now)
	if err == nil || !strings.Contains(err.Error(), "cannot be written") || !strings.Contains(err.Error(), "nothing is signed") {
		t.Fatalf("unwritable: %v", err)
	}
	// A file where its directory should be: it cannot be read.
	blocker := filepath.Join(dir, "blocker")
	must(t, os.WriteFile(blocker, nil, 0o600))
	if err := CheckPolicyMemory(filepath.Join(blocker, "policies.json"), "s", now); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Fatalf("under a file: %v", err)
	}
	// A directory where the file should be: it cannot be read.
	must(t, os.Mkdir(filepath.Join(dir, "isdir"), 0o700))
	if err := CheckPolicyMemory(filepath.Join(dir, "isdir"), "s", now); err == nil {
		t.Fatal("a directory as the memory file: accepted")
	}
	if err := CheckPolicyMemory("", "s", now); err == nil {
		t.Fatal("no file named: accepted")
	}
}

// Surfaces that remember policies at once, each for its own store, lose
// none of them: the file is read, changed and written under a lock.
func TestPolicyMemoryConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "policies.json")
	at := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			store := fmt.Sprintf("store-%02d", i)
			errs <- CheckPolicyMemory(path, store, &PolicySeen{SHA256: strings.Repeat("a", 64), SignedBy: "carol", SignedAt: at})
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	m, err := readMemory(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Stores) != n {
		t.Fatalf("%d of %d stores remembered", len(m.Stores), n)
	}
}
