package risk

import "sync"

// analyses keeps analyses between judgements: a long line's findings,
// maps of places and catalogue results are grown once and then reused,
// not allocated again (and collected) for every judgement.
var analyses = sync.Pool{New: func() any { return new(analysis) }}

// maxPooledFindings bounds the findings slice an analysis keeps in the
// pool (a 1 MB line's would hold megabytes for nothing).
const maxPooledFindings = 1 << 14

// newAnalysis returns a zeroed analysis with the buffers of one used
// before, emptied.
func newAnalysis() *analysis {
	a := analyses.Get().(*analysis)
	a.reset()
	return a
}

// release empties a (nothing it held stays reachable through the pool)
// and puts it back. What a judgement returns must not point into what
// release keeps: the findings are copied out by value, the effects and
// the slab of words (which findings' Words point into) are not kept.
func release(a *analysis) {
	a.reset()
	if cap(a.findings) > maxPooledFindings {
		a.findings = nil
	}
	analyses.Put(a)
}

// reset zeroes every field of a, keeping only the emptied buffers that
// nothing outside the analysis holds.
func (a *analysis) reset() {
	clear(a.findings[:cap(a.findings)])
	clear(a.downloads[:cap(a.downloads)])
	clear(a.decodes[:cap(a.decodes)])
	clear(a.secretRead[:cap(a.secretRead)])
	clear(a.egressCmd[:cap(a.egressCmd)])
	clear(a.opaque[:cap(a.opaque)])
	clear(a.roots)
	clear(a.placed)
	clear(a.rated)
	clear(a.wordIndex)
	clear(a.lookupMemo.names)
	clear(a.seen)
	*a = analysis{
		findings:   a.findings[:0],
		downloads:  a.downloads[:0],
		decodes:    a.decodes[:0],
		secretRead: a.secretRead[:0],
		egressCmd:  a.egressCmd[:0],
		opaque:     a.opaque[:0],
		roots:      a.roots,
		placed:     a.placed,
		rated:      a.rated,
		wordIndex:  a.wordIndex,
		lookupMemo: lookupMemo{names: a.lookupMemo.names},
		// LookupInto empties a result before it fills it.
		results: a.results,
		seen:    a.seen,
		ranks:   a.ranks[:0],
		kept:    a.kept[:0],
	}
}
