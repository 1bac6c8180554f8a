package cli

import (
	"bytes"
	"io"

	"github.com/approve-tui/approve-tui/model"
)

// guardWriter is what every subcommand writes its text through: whole lines
// go out through model.TerminalSafe, so that no escape sequence, control,
// bidi or invisible character from the file reaches the terminal raw, even
// where a message forgot to sanitise a string it quotes. Text that was
// sanitised passes unchanged. A line not ended yet waits for its end, or for
// Flush (before a prompt, and when the command returns).
//
// The console (its own terminal protocol), run (the command's own output)
// and the agent hooks (their agent's protocol, exact bytes) write raw.
//
// With width set (the terminal's, when the stream is one), each line of
// prose is wrapped to it at spaces (wrapProse); lines written while
// verbatim is set (a command, a diff, a file) go out as they are.
type guardWriter struct {
	w        io.Writer
	buf      []byte
	width    int
	verbatim bool
}

// setVerbatim turns wrapping off (on) for the lines completed next.
func (g *guardWriter) setVerbatim(v bool) { g.verbatim = v }

// verbatim writes what f writes to w unwrapped, when w wraps.
func verbatim(w io.Writer, f func()) {
	g, ok := w.(*guardWriter)
	if ok {
		g.setVerbatim(true)
		defer g.setVerbatim(false)
	}
	f()
}

func (g *guardWriter) Write(p []byte) (int, error) {
	g.buf = append(g.buf, p...)
	i := bytes.LastIndexByte(g.buf, '\n')
	if i < 0 {
		return len(p), nil
	}
	out := model.TerminalSafe(string(g.buf[:i+1]))
	if g.width > 0 && !g.verbatim {
		out = wrapProse(out, g.width)
	}
	g.buf = append(g.buf[:0], g.buf[i+1:]...)
	if _, err := io.WriteString(g.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is left of an unfinished line.
func (g *guardWriter) Flush() error {
	if len(g.buf) == 0 {
		return nil
	}
	out := model.TerminalSafe(string(g.buf))
	g.buf = g.buf[:0]
	_, err := io.WriteString(g.w, out)
	return err
}
