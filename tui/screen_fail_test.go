package tui

import (
	"testing"
	"time"
)

// A frame that could not be written is not on screen: the same frame
// again is written again, and counts as read only once it was.
func TestFailedFrameIsNotOnScreen(t *testing.T) {
	s := newScreen(failingWriter{})
	a := shown{1, 0, 3}
	s.frame(frameOf("a\nb\nc"), 20, 3, &a)
	time.Sleep(3 * frameGap)
	s.frame(frameOf("a\nb\nc"), 20, 3, &a)
	time.Sleep(3 * frameGap)
	if w := s.takeWritten(); len(w) != 0 {
		t.Fatalf("a frame never written counts as on screen: %v", w)
	}
}
