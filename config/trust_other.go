//go:build !unix

package config

import "os"

// fileOwner: no uid on this system.
func fileOwner(os.FileInfo) (int, bool) { return 0, false }
