package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadFileForVerifier and ReadFileOwnedBy read another file the verifier
// relies on under the trust file's rules, up to the size given.
func TestReadFileUnderTrustRules(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(p, []byte("trust: {mode: off}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFileOwnedBy(p, 64, uint32(os.Geteuid())); err != nil || string(b) != "trust: {mode: off}\n" {
		t.Fatalf("owned by: %q %v", b, err)
	}
	if os.Geteuid() == 0 {
		if b, err := ReadFileForVerifier(p, 64); err != nil || len(b) != 19 {
			t.Fatalf("for verifier, as root: %q %v", b, err)
		}
	} else if _, err := ReadFileForVerifier(p, 64); err == nil {
		t.Fatal("for verifier: a file of the user running was read")
	}
	var te *TrustFileError
	if _, err := ReadFileOwnedBy(p, 10, uint32(os.Geteuid())); !errors.As(err, &te) || !strings.Contains(err.Error(), "larger than 10 bytes") {
		t.Errorf("over the limit: %v", err)
	}
	if err := os.Chmod(p, 0o664); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFileOwnedBy(p, 64, uint32(os.Geteuid())); !errors.As(err, &te) || !strings.Contains(err.Error(), "group-writable") {
		t.Errorf("group-writable: %v", err)
	}
}
