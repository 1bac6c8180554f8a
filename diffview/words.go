package diffview

import (
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// span is a byte range [from, to) of a sanitised line.
type span struct{ from, to int }

const (
	// maxTokens and wordBudget bound the word diff's work: longer lines,
	// and pairs beyond the budget (the product of the lengths in tokens of
	// what differs, summed over a diff), show as whole-line changes.
	maxTokens  = 2000
	wordBudget = 10_000_000
	// minSimilarity is how much (by Dice coefficient over non-space runes) a
	// pair must share for its words to be highlighted; below it the lines
	// are unrelated and shown as whole-line changes.
	minSimilarity = 0.5
)

// newWordDiffer returns the diff engine used for word highlights.
func newWordDiffer() *diffmatchpatch.DiffMatchPatch {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 50 * time.Millisecond
	return dmp
}

// wordChanges compares a removed line a with its paired added line b
// (both sanitised) token by token, and returns the byte ranges of each that
// changed. Both are nil when the lines are identical or too different to
// pair word by word, or when the work would exceed what is left of budget.
func wordChanges(dmp *diffmatchpatch.DiffMatchPatch, a, b string, budget *int) (ca, cb []span) {
	ta, tb := tokenize(a), tokenize(b)
	if ta == nil || tb == nil || len(ta) > maxTokens || len(tb) > maxTokens {
		return nil, nil
	}
	p := 0 // the diff's cost is in the middle, between common ends
	for p < min(len(ta), len(tb)) && ta[p] == tb[p] {
		p++
	}
	s := 0
	for s < min(len(ta), len(tb))-p && ta[len(ta)-1-s] == tb[len(tb)-1-s] {
		s++
	}
	cost := (len(ta) - p - s) * (len(tb) - p - s)
	if cost > *budget {
		return nil, nil
	}
	*budget -= cost
	// Each distinct token becomes one rune (from a private-use plane), so
	// the character diff below is a token diff.
	ids := map[string]rune{}
	var byID []string
	encode := func(toks []string) []rune {
		rs := make([]rune, len(toks))
		for i, t := range toks {
			id, ok := ids[t]
			if !ok {
				id = rune(0xF0000 + len(byID))
				ids[t] = id
				byID = append(byID, t)
			}
			rs[i] = id
		}
		return rs
	}
	ra, rb := encode(ta), encode(tb)
	diffs := dmp.DiffCleanupSemantic(dmp.DiffMainRunes(ra, rb, false))

	var ia, ib, same int
	for _, d := range diffs {
		n := 0
		for _, id := range d.Text {
			n += len(byID[id-0xF0000])
		}
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			same += visible(a[ia : ia+n])
			ia, ib = ia+n, ib+n
		case diffmatchpatch.DiffDelete:
			ca = append(ca, span{ia, ia + n})
			ia += n
		case diffmatchpatch.DiffInsert:
			cb = append(cb, span{ib, ib + n})
			ib += n
		}
	}
	total := visible(a) + visible(b)
	if ca == nil && cb == nil || float64(2*same) < minSimilarity*float64(total) {
		return nil, nil
	}
	return ca, cb
}

// tokenize splits s into words (letters, digits, underscores), runs of
// spaces, and single other characters (wide ones included: CJK scripts do
// not space their words), always at grapheme boundaries so that a highlight
// never splits a character. It returns nil for "".
func tokenize(s string) []string {
	var toks []string
	start, prev := 0, 0 // prev: class of the token being built
	for i := 0; i < len(s); {
		end, w := nextCluster(s, i)
		r, _ := utf8.DecodeRuneInString(s[i:])
		c := 3 // other: a token of its own
		switch {
		case w > 1:
		case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			c = 1
		case unicode.IsSpace(r):
			c = 2
		}
		if i > start && (c != prev || c == 3) {
			toks = append(toks, s[start:i])
			start = i
		}
		prev, i = c, end
	}
	if start < len(s) {
		toks = append(toks, s[start:])
	}
	return toks
}

// visible counts the runes of s that are not spaces.
func visible(s string) int {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}
