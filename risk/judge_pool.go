package risk

import "sync"

// analyses keep analyses between judgements: a long line's findings,
// maps of places and catalogue results are grown once and then reused,
// not allocated again (and collected) for every judgement. Those of long
// lines (longLine and more) are kept apart, with their large maps: a
// short line, judged in microseconds, would pay for clearing them.
var analyses, longAnalyses = sync.Pool{New: func() any { return new(analysis) }},
	sync.Pool{New: func() any { return &analysis{long: true} }}

// longLine is the length from which a line's analysis is taken from
// longAnalyses.
const longLine = 4096

// maxPooledFindings bounds the findings slice an analysis keeps in the
// pool (a 1 MB line's would hold megabytes for nothing).
const maxPooledFindings = 1 << 14

// newAnalysis returns a zeroed analysis with the buffers of one used
// before, emptied; long: for a line of longLine bytes or more.
func newAnalysis(long bool) *analysis {
	var a *analysis
	if long {
		a = longAnalyses.Get().(*analysis)
	} else {
		a = analyses.Get().(*analysis)
	}
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
	if a.long {
		longAnalyses.Put(a)
	} else {
		analyses.Put(a)
	}
}

// reset zeroes every field of a, keeping only the emptied buffers that
// nothing outside the analysis holds. The slices are cleared up to their
// length only: past it they are zero already (appends write below the
// new length; a slice grown is new). A map of a short line's analysis
// that held many entries is dropped, not cleared: clearing costs its
// size, paid again by the many small analyses after it.
func (a *analysis) reset() {
	limit := maxPooledMap
	if a.long {
		limit = maxPooledLongMap
	}
	clear(a.findings)
	clear(a.downloads)
	clear(a.decodes)
	clear(a.secretRead)
	clear(a.egressCmd)
	clear(a.opaque)
	*a = analysis{
		findings:   a.findings[:0],
		downloads:  a.downloads[:0],
		decodes:    a.decodes[:0],
		secretRead: a.secretRead[:0],
		egressCmd:  a.egressCmd[:0],
		opaque:     a.opaque[:0],
		roots:      emptied(limit, a.roots),
		placed:     emptied(limit, a.placed),
		rated:      emptied(limit, a.rated),
		wordIndex:  emptied(limit, a.wordIndex),
		lookupMemo: lookupMemo{names: emptied(limit, a.lookupMemo.names)},
		// LookupInto empties a result before it fills it.
		results: a.results,
		seen:    emptied(limit, a.seen),
		ranks:   a.ranks[:0],
		kept:    a.kept[:0],
		long:    a.long,
	}
}

// maxPooledMap and maxPooledLongMap bound the entries of a map an
// analysis of a short line and of a long one keeps.
const maxPooledMap, maxPooledLongMap = 256, 1 << 16

// emptied returns m cleared, or nil when it held more than limit entries.
func emptied[K comparable, V any](limit int, m map[K]V) map[K]V {
	if len(m) > limit {
		return nil
	}
	clear(m)
	return m
}
