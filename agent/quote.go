package agent

import (
	"errors"
	"fmt"
	"strings"
)

// A proposal pins its command as one string. The runner's argv mode
// (`approve-tui run -- CMD ARGS...`) runs an argument vector without a
// shell, so it pins the vector as a POSIX shell command line that means
// exactly that vector: QuoteArgs writes it, SplitQuoted reads it back, and
// only the canonical form QuoteArgs writes is accepted, so that equal
// command bytes mean equal argument vectors.

// safeWordByte reports whether b may appear unquoted in a word: no POSIX
// shell gives any of these a meaning of its own (no globbing, expansion,
// redirection, comment or separator). '=' is safe except in the first word,
// where the shell would read NAME=value as an assignment.
func safeWordByte(b byte, first bool) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	switch b {
	case '_', '-', '.', '/', ':', ',', '+', '@', '%':
		return true
	case '=':
		return !first
	}
	return false
}

// quoteWord writes one word: as is when every byte is safe, else in single
// quotes, each single quote written as the four bytes ' \ ' ' (close,
// escaped quote, reopen). The empty word is a pair of single quotes.
func quoteWord(b *strings.Builder, w string, first bool) {
	safe := w != ""
	for i := 0; i < len(w) && safe; i++ {
		safe = safeWordByte(w[i], first)
	}
	if safe {
		b.WriteString(w)
		return
	}
	b.WriteByte('\'')
	b.WriteString(strings.ReplaceAll(w, "'", `'\''`))
	b.WriteByte('\'')
}

// QuoteArgs joins argv into one POSIX shell command line that a shell would
// split back into exactly argv: words joined by single spaces, each one as
// is when it holds only bytes no shell treats specially, else single-quoted
// (which keeps every byte literally, newlines and invalid UTF-8 included).
func QuoteArgs(argv []string) string {
	var b strings.Builder
	for i, w := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		quoteWord(&b, w, i == 0)
	}
	return b.String()
}

// ErrNotCanonical: a command line is not one that QuoteArgs writes.
var ErrNotCanonical = errors.New("not a command line that approve-tui run writes")

// SplitQuoted is the inverse of QuoteArgs: it splits a command line that
// QuoteArgs wrote back into its words. Anything else (other quoting, shell
// syntax, doubled spaces) is refused with ErrNotCanonical: it would not mean
// one argument vector for certain.
func SplitQuoted(line string) ([]string, error) {
	if line == "" {
		return nil, fmt.Errorf("%w: empty", ErrNotCanonical)
	}
	var words []string
	var cur strings.Builder
	inWord := false
	i := 0
	for i < len(line) {
		c := line[i]
		switch {
		case c == ' ':
			if !inWord {
				return nil, fmt.Errorf("%w: a space at byte %d does not end a word", ErrNotCanonical, i)
			}
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
			i++
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("%w: unterminated quote at byte %d", ErrNotCanonical, i)
			}
			cur.WriteString(line[i+1 : i+1+end])
			inWord = true
			i += end + 2
		case c == '\\' && i+1 < len(line) && line[i+1] == '\'':
			cur.WriteByte('\'')
			inWord = true
			i += 2
		case safeWordByte(c, false):
			cur.WriteByte(c)
			inWord = true
			i++
		default:
			return nil, fmt.Errorf("%w: byte %q at %d is special to a shell", ErrNotCanonical, c, i)
		}
	}
	if !inWord {
		return nil, fmt.Errorf("%w: it ends with a space", ErrNotCanonical)
	}
	words = append(words, cur.String())
	if QuoteArgs(words) != line {
		return nil, fmt.Errorf("%w: quoted differently", ErrNotCanonical)
	}
	return words, nil
}
