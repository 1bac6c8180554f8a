//go:build !unix

package tui

import "os"

// notifyResize: no resize signal here; the size is read once.
func notifyResize(c chan<- os.Signal) {}
