package tui

import (
	"context"
	"sort"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/approve-tui/approve-tui/impact"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// feed is the pending list as the console holds it and how it is kept
// up to date: which load is current (gen), the rows it brought and the
// last full read they reuse, the pacing of loads after commits, the
// signature that spares a read when nothing changed, the read of the rest
// of a long list after its first page, the ranking's progress, and the
// accounting of this process's own writes (a wake-up for them alone reads
// nothing). It does no I/O itself: the loads are tea.Cmds it makes, each
// carrying the generation it was asked for (Model drops stale results),
// and what to do next is told back to the Model, which owns the screen.
// Its rules are tested without a screen (feed_test.go).
type feed struct {
	ctx   context.Context
	store *storage.Store
	// clock is the wall clock the pacing runs on (time.Now; tests set
	// their own). The console's own clock (Options.Now) is for what it
	// shows.
	clock func() time.Time

	gen    int
	loaded bool
	rows   []row
	// rowsOwn: rows is not full's array (rowsBuffer may reuse it).
	rowsOwn bool
	// full is the last load that read the list whole (not a first page).
	full  fullLoad
	total int
	// ranking: the list shown is provisional (soonest expiry first) while
	// the store ranks a large file's pending rows for the first time.
	ranking storage.RankProgress
	// loading: a load of the pending list is out; dirty: another commit was
	// noticed meanwhile. Bursts of commits (many waiters heartbeating)
	// coalesce into one load at a time, with one more after it.
	loading, dirty bool
	// sig is the signature of the pending rows last read in full, at
	// fullAt; a load finding it unchanged reads nothing more. lastLoad and
	// loadEnd pace the loads (paced).
	sig      *listSignature
	fullAt   time.Time
	lastLoad time.Duration
	loadEnd  time.Time
	// loadStarts: when the last load of the list started, and the one
	// before (paced).
	loadStarts [2]time.Time
	// restOwed: the rows below a long list's first page are those of an
	// older read, since restSince; startRest reads them again, and
	// restCancel, set while it runs, stops it (a commit's page comes
	// first). restQueued: a restDueMsg is on its way (endLoad).
	restOwed   bool
	restQueued bool
	restSince  time.Time
	restCancel context.CancelFunc
	// foreign counts the wake-ups for commits that may be other
	// processes'; fullForeign is its value when the last full read was asked
	// for, and loadForeign when the load on its way was. A wake-up for this
	// process's own commits only needs no full read: nothing of the list can
	// have changed that the signature does not see.
	foreign, fullForeign, loadForeign int
	// written is the rows this process had written at the last wake-up
	// (writtenKnown: it could tell); ownWrites, this console's presence
	// refreshes that wrote alone, each from a count to the next
	// (onlyOwnPresence).
	written      int64
	writtenKnown bool
	ownWrites    [][2]int64
}

func newFeed(ctx context.Context, s *storage.Store) feed {
	return feed{ctx: ctx, store: s, clock: time.Now}
}

// Pacing of the pending list's loads after commits of other processes: a
// load starts at least a gap after the last one ended, twice as long as
// that one took, within these bounds. A hundred waiting agents heartbeat
// fifty times a second; the console follows at most ten times a second and
// spends most of its time on keys. fullReloadEvery: the list is read in full
// at least this often even when its signature says nothing changed.
const (
	minReloadGap    = 50 * time.Millisecond
	maxReloadGap    = 150 * time.Millisecond
	fullReloadEvery = 5 * time.Second
)

// The rest of a long list (the rows below the first page, up to MaxLoaded)
// is read restDelay after the frame that shows the page, so that the
// terminal, or the SSH session, gets that frame before the console spends
// tens of milliseconds of CPU on rows off screen. A commit noticed while it
// is read stops it and reads its page first, unless the rest has been owed
// for restMaxWait: then it finishes, and the commit waits for it.
const (
	restDelay   = 30 * time.Millisecond
	restMaxWait = time.Second
)

// startLoad starts a load of the limit most urgent pending rows (watch:
// the proposal on screen, read again with them; loadPending).
func (f *feed) startLoad(limit int, watch shownPayload) tea.Cmd {
	f.endRest() // this load reads the page again, and the rest after it
	f.gen++
	f.loading, f.dirty = true, false
	now := f.clock()
	f.loadStarts = [2]time.Time{now, f.loadStarts[0]}
	prev := f.signature(now)
	f.loadForeign = f.foreign
	return loadPending(f.ctx, f.store, f.gen, limit, prev, watch, f.ranking.Provisional)
}

// signature is the signature a load at now may find unchanged and then
// read nothing more (nil: it reads the list): that of the last full read,
// unless that is older than fullReloadEvery and another process committed
// since.
func (f *feed) signature(now time.Time) *listSignature {
	if f.loaded && (now.Sub(f.fullAt) < fullReloadEvery || f.foreign == f.fullForeign) {
		return f.sig
	}
	return nil
}

// pageToLoad is how many of the most urgent pending rows a load reads
// first: the first page on the first load; on a long list, the rows down to
// the screen's last (bottom) and reloadMargin beyond (then the rest,
// MaxLoaded, comes right after: Model.onPending), so that a commit shows
// without waiting for thousands of rows to be read; everything while a
// filter is typed (filtered: it searches every row loaded). The selection
// is always on screen.
func (f *feed) pageToLoad(bottom int, filtered bool) int {
	switch {
	case !f.loaded:
		return firstPage
	case filtered || len(f.rows) <= 2*firstPage:
		return MaxLoaded
	}
	need := bottom + reloadMargin
	if need >= len(f.rows) {
		return MaxLoaded
	}
	return need
}

// startRest reads the whole list (MaxLoaded rows) after a first page.
func (f *feed) startRest() tea.Cmd {
	ctx, cancel := context.WithCancel(f.ctx)
	f.loading, f.restCancel = true, cancel
	return loadPending(ctx, f.store, f.gen, MaxLoaded, nil, shownPayload{}, false)
}

// stopRest stops the read of the rest, if one runs and the rest has been
// owed for less than restMaxWait, and reports whether it did: the load
// that a commit asks for may start. Its result, if it still comes, is
// dropped (gen), and the rest is read again after the next page.
func (f *feed) stopRest() bool {
	if !f.resting() || f.clock().Sub(f.restSince) >= restMaxWait {
		return false
	}
	f.endRest()
	f.gen++
	f.loading = false
	return true
}

// resting reports whether the read of the rest runs.
func (f *feed) resting() bool { return f.restCancel != nil }

// endRest forgets the read of the rest (it ended, or was stopped).
func (f *feed) endRest() {
	if f.restCancel != nil {
		f.restCancel()
		f.restCancel = nil
	}
}

// restDue: the pause after a first page is over (restDueMsg). It reports
// whether the rest is to be read now: not while a load is on its way (the
// rest comes after it: endLoad).
func (f *feed) restDue() bool {
	f.restQueued = false
	return !f.loading && f.restOwed
}

// endLoad ends a load of the pending list, and says what follows: again,
// a commit was noticed while it ran and the list is to be loaded again
// (Model.reloadSoon); rest, the rows below a first page are owed and are
// to be read restDelay from now (restDueMsg).
//
// The pause before the next load counts from the end of the last page
// read: the rest (startRest) is read between commits, and stops for one.
//
// After a load that left the rows below a first page owed (that page, or
// a load that found nothing changed since it, or failed), the rest is
// read restDelay later: the read of thousands of rows, and the garbage
// collection it brings on, does not compete with drawing the page or
// with the terminal showing it. A rest that failed is read again after
// the next load.
func (f *feed) endLoad() (again, rest bool) {
	wasRest := f.resting()
	if wasRest {
		f.endRest()
	} else {
		f.loadEnd = f.clock()
	}
	f.loading = false
	if f.dirty {
		return true, false
	}
	if f.restOwed && !wasRest && !f.restQueued {
		f.restQueued = true
		return false, true
	}
	return false, false
}

// paced is how long to wait before the load a commit asks for (0: now).
// When it is not 0, the load is taken as on its way (loading) and another
// commit meanwhile adds nothing (dirty).
//
// A load that came alone (none in the maxReloadGap before it) is followed
// at once: one commit can reach the console as two wake-ups a millisecond
// apart (SQLite's automatic checkpoint after it moves data_version again),
// and the second must not wait minReloadGap behind the first. After two in
// a row the pause applies: a storm of heartbeats is still paced.
func (f *feed) paced() time.Duration {
	gap := min(max(2*f.lastLoad, minReloadGap), maxReloadGap)
	last, before := f.loadStarts[0], f.loadStarts[1]
	alone := !last.IsZero() && (before.IsZero() || last.Sub(before) >= maxReloadGap)
	wait := gap - f.clock().Sub(f.loadEnd)
	if wait <= 0 || alone {
		return 0
	}
	f.loading, f.dirty = true, true
	return wait
}

// changed takes a wake-up for commits (who may have made them), and
// reports whether the list is to be read: not for this console's own
// presence refresh alone, nor while a load is on its way (the one after it
// reads it: dirty). A load on its way that is the rest of a long list is
// stopped for it (stopRest).
func (f *feed) changed(who storage.Committers) (read bool) {
	if f.onlyOwnPresence(who) {
		return false
	}
	if who.Others {
		f.foreign++
	}
	if f.loading && !f.stopRest() {
		f.dirty = true
		return false
	}
	return true
}

// ownWrite records a presence refresh of this console that wrote alone,
// from the count of rows written before it to the one after.
func (f *feed) ownWrite(before, after int64) {
	f.ownWrites = append(f.ownWrites, [2]int64{before, after})
}

// moved: the file at the path is another one; the next load reads it in
// full, and no wake-up counts as this console's own until the next.
func (f *feed) moved() { f.sig, f.writtenKnown = nil, false }

// onlyOwnPresence says whether everything committed since the last wake-up
// was this console's own presence refresh, each written alone: no other
// process committed, and the rows this process wrote since are exactly
// those refreshes, back to back. Then nothing on screen can have changed,
// and there is nothing to read: an idle console refreshes its presence
// every storage.PresenceEvery, and reading its list after each cost more
// than all of its clock's ticks (with 10,000 pending).
func (f *feed) onlyOwnPresence(c storage.Committers) bool {
	from, known := f.written, f.writtenKnown
	f.written, f.writtenKnown = c.Written, c.WrittenKnown
	ours := f.ownWrites
	f.ownWrites = f.ownWrites[:0:0]
	for _, w := range ours {
		if w[1] > c.Written {
			f.ownWrites = append(f.ownWrites, w) // not seen yet
		}
	}
	if c.Others || !c.WrittenKnown || !known || c.Written <= from {
		return false
	}
	sort.Slice(ours, func(i, j int) bool { return ours[i][0] < ours[j][0] })
	at := from
	for _, w := range ours {
		if w[0] == at {
			at = w[1]
		}
	}
	return at == c.Written
}

// took records how long a load of the current generation ran (the rest's
// read does not pace the loads).
func (f *feed) took(d time.Duration) {
	if !f.resting() {
		f.lastLoad = d
	}
}

// unchanged takes a load that found the signature unchanged: the same
// rows; the ranking of a provisional list may have gone on.
func (f *feed) unchanged(msg pendingMsg) {
	if f.ranking.Provisional && msg.ranking.Filling {
		f.ranking = msg.ranking
	}
}

// take takes the rows a load read, and reports whether they are a first
// page of a long list (partial): then the rows loaded before that rank
// after it stay until the rest comes (startRest), so that the list keeps
// its length, and a row selected below the page its place.
func (f *feed) take(msg pendingMsg) (rows []row, partial bool) {
	f.sig, f.fullAt, f.fullForeign = msg.sig, f.clock(), f.loadForeign
	partial = msg.limit < MaxLoaded && len(msg.rows) == msg.limit
	var tail []row
	if partial && len(msg.rows) > 0 {
		tail = f.full.after(msg.rows)
	}
	rows = f.rowsBuffer(len(msg.rows) + len(tail))
	for _, rec := range msg.rows {
		r := f.full.row(rec)
		r.parkWS = msg.parkWaiters[rec.ApprovalID]
		rows = append(rows, r)
	}
	rows = append(rows, tail...)
	if !partial {
		f.full = newFullLoad(rows, !msg.ranking.Provisional)
	}
	f.rows, f.rowsOwn = rows, partial
	f.total = msg.total
	return rows, partial
}

// owe records whether the rows below the first page are owed after a
// load (partial: it read a first page only).
func (f *feed) owe(partial bool) {
	if !partial {
		f.restOwed = false
	} else if !f.restOwed {
		f.restOwed, f.restSince = true, f.clock()
	}
}

// rowsBuffer is an empty slice with room for n rows for the list a load
// brings: the array of the list on screen when that is the console's own
// (rowsOwn: built for a first page, not the full load's, which pages read
// their rows from), else a new one. A commit on a long list then copies
// the thousands of rows below its page, but allocates nothing for them.
func (f *feed) rowsBuffer(n int) []row {
	if !f.rowsOwn || cap(f.rows) < n {
		return make([]row, 0, n+n/16+16) // room for the rows commits add
	}
	clear(f.rows[min(n, len(f.rows)):]) // past the new list: no record kept alive
	return f.rows[:0]
}

// indexOf is the index of proposal id in rows (-1: not loaded).
func (f *feed) indexOf(id string) int {
	for i, r := range f.rows {
		if r.rec.ApprovalID == id {
			return i
		}
	}
	return -1
}

// rowText is at most this many bytes of an agent string, sanitised, for one
// list row (which shows one screen width of it): a 78 KB combining flood
// costs no more than a long command.
const rowText = 1024

// rowString is s sanitised for one row of a list: at most rowText bytes
// of it.
func rowString(s string) string {
	if len(s) > rowText {
		s = s[:rowText] // a rune cut in two shows as an escaped byte, at the far end
	}
	return model.Sanitize(s, model.Line)
}

func makeRow(rec *storage.Record) row {
	command, session := rowString(rec.Command), rowString(rec.SessionKey)
	return row{
		rec:     rec,
		command: command,
		session: session,
		search: strings.ToLower(rec.ApprovalID + "\x00" + session + "\x00" + command + "\x00" +
			rowString(rec.Cwd) + "\x00" + rowString(rec.Requester)),
		marked: impact.Marked(rec.Impact, rec.Command, rec.RiskLevel),
	}
}

// fullLoad is a load that read the pending list whole, kept until the
// next one: the rows of a long list's first page, and of the rest after
// it, are found in it by id. A row whose payload is the one already shown
// is reused as it was made (makeRow sanitises and lowercases every string
// of 5,000 rows otherwise), and a first page's tail is its rows ranking
// after the page.
type fullLoad struct {
	rows []row
	byID map[string]int // index in rows
	// ranked: rows are in storage.Urgent's order (not a provisional page
	// listed soonest first while the store ranks).
	ranked bool
}

func newFullLoad(rows []row, ranked bool) fullLoad {
	f := fullLoad{rows: rows, byID: make(map[string]int, len(rows)), ranked: ranked}
	for i, r := range rows {
		f.byID[r.rec.ApprovalID] = i
	}
	return f
}

// row is rec's list row: the one made for the same payload at the last
// full load (with rec, the newer record), or a new one.
func (f *fullLoad) row(rec *storage.Record) row {
	if i, ok := f.byID[rec.ApprovalID]; ok && f.rows[i].rec.PayloadSHA256 == rec.PayloadSHA256 {
		r := f.rows[i]
		r.rec = rec
		return r
	}
	return makeRow(rec)
}

// after is the tail for a first page: the rows of the last full load that
// rank after the page's last row, less the page's own rows.
func (f *fullLoad) after(page []*storage.Record) []row {
	last := page[len(page)-1]
	cut := 0
	if f.ranked {
		// In urgency order: the tail is a suffix. A page row in it (its
		// rank changed, which a payload rewritten in place would do) is
		// left out below; most pages have none.
		cut = sort.Search(len(f.rows), func(i int) bool { return storage.Urgent(last, f.rows[i].rec) })
		clean := true
		for _, rec := range page {
			if i, ok := f.byID[rec.ApprovalID]; ok && i >= cut {
				clean = false
				break
			}
		}
		if clean {
			return f.rows[cut:]
		}
	}
	// Listed soonest first (a provisional page), or a page row in the tail:
	// every row is compared.
	in := make(map[string]bool, len(page))
	for _, rec := range page {
		in[rec.ApprovalID] = true
	}
	var out []row
	for _, r := range f.rows[cut:] {
		if storage.Urgent(last, r.rec) && !in[r.rec.ApprovalID] {
			out = append(out, r)
		}
	}
	return out
}
