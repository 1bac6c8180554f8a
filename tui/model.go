// Package tui is the approval console: one Bubble Tea model, used by the
// interactive terminal, SSH sessions and the headless driver alike.
package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// MinWidth and MinHeight are the smallest usable terminal.
const (
	MinWidth  = 80
	MinHeight = 24
	// wideWidth is where the detail pane moves beside the list.
	wideWidth = 120
)

// Options configure a console.
type Options struct {
	Store *storage.Store
	// Actor is who decides: it goes into consumed_by and the audit log.
	Actor model.Actor
	// Renderer styles the output (each SSH session has its own).
	Renderer *lipgloss.Renderer
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Context ends the console's background work.
	Context context.Context
	// NoWatch disables the live watcher and the ticking clock (tests that
	// drive Update by hand).
	NoWatch bool
	// Label names the database in the header (the file's path when empty).
	Label string
	// OnEvent, when set, is told each action the console took and its
	// outcome (see Event), synchronously from Update. The headless driver
	// logs them; the interactive console leaves it nil.
	OnEvent func(Event)
	// Name is how other consoles show this one (the actor's name when
	// empty); Follow starts following the console of that name.
	Name, Follow string
	// NoPresence: do not say who this console is and what it shows.
	NoPresence bool
	// Bell, when set, alerts the terminal (BEL and a desktop notification
	// escape, the program's own words) when a proposal at or above this
	// risk arrives (--bell).
	Bell model.RiskLevel
	// Open is the approval id of a proposal to show at start, selected
	// and whole (a page's link: --open ID, ssh -t HOST open ID; open.go).
	// OpenWait is how long an id not in the store yet is waited for
	// (DefaultOpenWait when 0).
	Open     string
	OpenWait time.Duration
	// Judge is what the judgement of a command (the detail's "why" lines)
	// knows besides the command and its directory: the sensitive paths
	// and programs of this installation. The zero value knows none.
	Judge risk.Context
	// Signing is where approvals and denials get their signatures when
	// the store requires them (Store.Trust().Required()): the operator's
	// ssh-agent or a key file, decided by the caller at start.
	Signing Signing
}

func (o Options) name() string {
	if o.Name != "" {
		return o.Name
	}
	return o.Actor.Name
}

type viewMode int

const (
	viewPending viewMode = iota
	viewHistory
)

// row is one loaded proposal with its display strings made once.
type row struct {
	rec     *storage.Record
	command string // sanitised, one line
	session string // sanitised, one line
	search  string // lower-case text the filter looks in
	// marked: its impact raised its risk (flag I, impact.Marked).
	marked bool
}

// note is the last outcome message: its words, and their text as shown
// (at the console's clock: an age in them moves on with it, ageNote).
type note struct {
	words words
	text  string
	style lipgloss.Style
	// sticky: it says why the proposal being read went away, and stays
	// until esc (a later note may still replace it).
	sticky bool
}

// Model is the console.
type Model struct {
	opt    Options
	ctx    context.Context
	st     Styles
	keys   KeyMap
	help   help.Model
	now    time.Time
	width  int
	height int

	// feed is the pending list and how it is kept up to date (feed.go).
	feed

	mode      viewMode
	wide      bool
	pageOpen  bool // narrow: the detail is shown as a page
	focusList bool // wide: keys move the list (else they scroll the detail)
	showHelp  bool

	rang      map[string]bool // the ids listed at the last load (ring)
	bellSince float64         // proposals created since ring (epoch)
	visible   []int           // indexes into rows that pass the filter
	cursor    int
	top       int
	selID     string
	waiters   map[string]storage.WaiterStatus
	// judged: the judgements made (why.go), by command and directory;
	// judging: those asked for and not back yet.
	judged      map[judgeKey]*risk.Judgement
	judgedBytes int
	judging     map[judgeKey]bool
	storeErr    string
	// quorum: the policy in force and where each loaded proposal stands
	// against it (quorum.go); me, how the quorum counts this console's
	// actor; voteCol: the list has its VOTE column (a rule applies to a
	// loaded row).
	quorum  quorumState
	me      policy.Voter
	voteCol bool

	filtering bool
	filter    textinput.Model

	hgen    int
	history []storage.AuditEvent
	// hrows: each event's columns (historyRow); hvisible, the events that
	// pass the filter; hcols, the columns' widths for them
	// (layoutHistory); event, the event shown whole (nil: the list).
	hrows    []histRow
	hvisible []int
	hcols    histCols
	event    *eventPage
	runs     map[string]runInfo // started commands of the history not yet ended
	quitting bool
	// Presence: this console's id and what it last said of itself; the
	// other consoles; whom it follows ("" for nobody).
	consoleID  string
	presence   presenceState
	presenceAt time.Time
	others     []storage.Presence
	onProposal map[string]presenceMark // by proposal id: who else shows it
	connected  []string                // the other people, sorted, once each
	notifiers  []storage.Notifier      // the notifiers running (pagerView)
	following  string
	followHere bool // the console followed is among the others (follow)
	// refusal: an approve was refused and its note not dismissed yet; keys
	// other than esc and enter do nothing meanwhile.
	refusal bool
	// reply: a terminal's answer to a query (ESC ] …) is arriving as keys
	// (replyKey).
	reply   replyState
	hcursor int
	htop    int
	// opening: the proposal to open at start (Options.Open), until it is
	// on screen or said to be gone; selectEvent: the history event to
	// select once the history is loaded (the one that ended it).
	opening     *opening
	selectEvent *storage.AuditEvent

	detail detail
	prompt *prompt
	// signGen numbers the signature asked for the open prompt: a key or
	// signature that comes back for an older one (the prompt was cancelled
	// or replaced meanwhile) is dropped.
	signGen int
	// egen numbers the reads of the signatures an event page shows.
	egen int
	// sigs are the signatures of the proposal sigsID, read with its
	// waiter state (readSignatures).
	sigs   []sigInfo
	sigsID string
	note   note
	// explained: proposals whose leaving the list the console already
	// reported (decided here, or a lost race), so it is not reported twice.
	explained map[string]bool
	// deciding: proposals this console has a decision in flight for. A
	// reload that no longer lists one is this console's own decision
	// committing, not one made elsewhere: its outcome says what happened.
	deciding map[string]int

	watcher *storage.Watcher
	// screen is the terminal RunTerminal draws the frames on (nil: the
	// caller draws what View returns); memo, parts of the last frame
	// (memo.go).
	screen *screen
	memo   viewMemo
	// damaged is what the last integrity check found wrong with the file.
	damaged string
	// inflight counts the one-off commands (loads, decisions) whose result
	// has not come back yet: the watcher's wait and the clock are not
	// counted, as they never end by themselves.
	inflight int

	// The clock (clock.go): on once Init started it; the last tick, the
	// pending one (due at tickAt, numbered tickGen, reading tickWaiter's
	// waiter state, cancelled by closing tickStop or stopping tickTimer);
	// when the clock last read the selected waiter; when the first visible
	// row expires (zero: none does). send: the program's Send, when
	// RunTerminal runs the console.
	clockOn      bool
	lastTick     time.Time
	tickAt       time.Time
	tickPending  bool
	tickStop     chan struct{}
	tickTimer    *time.Timer
	tickGen      int
	send         func(tea.Msg)
	tickWaiter   string
	waiterPolled time.Time
	nextExpiry   time.Time
}

// New makes a console.
func New(opt Options) *Model {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Context == nil {
		opt.Context = context.Background()
	}
	if opt.Renderer == nil {
		opt.Renderer = lipgloss.DefaultRenderer()
	}
	st := NewStyles(opt.Renderer)
	m := &Model{opt: opt, ctx: opt.Context, st: st, keys: DefaultKeyMap(), focusList: true,
		waiters: map[string]storage.WaiterStatus{}, judged: map[judgeKey]*risk.Judgement{}, judging: map[judgeKey]bool{}, detail: newDetail(st), explained: map[string]bool{}, deciding: map[string]int{},
		consoleID: newConsoleID(), following: opt.Follow, me: policy.VoterOf(opt.Actor), feed: newFeed(opt.Context, opt.Store)}
	m.help = help.New()
	m.help.Styles = st.Help
	m.filter = textinput.New()
	m.filter.Prompt = "/"
	m.filter.Placeholder = "filter by id, session, command, cwd"
	m.filter.Cursor.SetMode(cursorStatic)
	m.now = opt.Now()
	if ro := opt.Store.ReadOnlyReason(); ro != "" {
		m.setNote("read-only: "+ro, st.Warning)
	} else if opt.Actor.ReadOnly {
		m.setNote("watching read-only: decisions are refused", st.Warning)
	}
	return m
}

// oneOff counts a command whose result Update will receive once.
func (m *Model) oneOff(c tea.Cmd) tea.Cmd {
	m.inflight++
	return c
}

// decide is oneOff for a decision on id (its decidedMsg ends it).
func (m *Model) decide(id string, c tea.Cmd) tea.Cmd {
	m.deciding[id]++
	return m.oneOff(c)
}

// quit ends the console.
func (m *Model) quit() tea.Cmd {
	m.quitting = true
	return tea.Quit
}

// Quitting reports whether the console asked to quit: a driver that runs
// commands asynchronously knows it before the quit message arrives.
func (m *Model) Quitting() bool { return m.quitting }

// Busy reports whether a load or decision the console started has not
// come back yet. Drivers without a terminal (headless, tests) wait for it
// before they take a screenshot or send the next key.
func (m *Model) Busy() bool { return m.inflight > 0 }

// Close releases what the console holds open (its store watcher). Call it
// after the program has stopped; the store itself belongs to the caller.
func (m *Model) Close() error {
	m.closeScreen() // the terminal as it was (UseScreen)
	if !m.opt.NoPresence {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = m.opt.Store.RemovePresence(ctx, m.consoleID)
		cancel()
	}
	m.stopClock()
	if m.watcher == nil {
		return nil
	}
	w := m.watcher
	m.watcher = nil
	return w.Close()
}

// Init starts loading, watching and ticking.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.reload(), m.startOpen(), m.identify()}
	if !m.opt.NoWatch {
		m.clockOn = true
		cmds = append(cmds, m.oneOff(startWatch(m.ctx, m.opt.Store)), m.scheduleTick(), checkHealth(m.ctx, m.opt.Store, 0))
	}
	return tea.Batch(cmds...)
}

func (m *Model) reload() tea.Cmd {
	var watch shownPayload
	if m.prompt != nil {
		watch = shownOf(m.prompt.rec)
	} else if r := m.detail.rec; r != nil {
		watch = shownOf(r)
	}
	limit := m.pageToLoad(m.top+m.listRows(), strings.TrimSpace(m.filter.Value()) != "")
	cmds := []tea.Cmd{m.oneOff(m.startLoad(limit, watch))}
	if m.mode == viewHistory {
		cmds = append(cmds, m.reloadHistory())
	}
	return tea.Batch(cmds...)
}

func (m *Model) reloadHistory() tea.Cmd {
	m.hgen++
	return m.oneOff(loadHistory(m.ctx, m.opt.Store, m.hgen))
}

// Update handles one message, then says where this console is when that
// changed (presence) and sets the clock for the next change on screen.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.drainDrawn()
	switch msg.(type) {
	case tickMsg:
	case changedMsg, reloadDueMsg, presenceWrittenMsg:
		// They change nothing on screen by themselves: no redraw for the
		// clock either (a commit's wake-up redrawing the countdowns would
		// put the frame that shows the commit a frame later).
	default:
		// What this message brings is drawn at the time it arrives (the
		// clock may not have ticked for a while).
		m.now = m.opt.Now()
	}
	_, cmd := m.update(msg)
	if m.note.words.at != nil {
		m.ageNote()
	}
	if p := m.presenceCmd(); p != nil {
		cmd = tea.Batch(cmd, p)
	}
	if t := m.scheduleTick(); t != nil {
		cmd = tea.Batch(cmd, t)
	}
	return m, cmd
}

func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg.(type) {
	case pendingMsg, restDueMsg, reloadDueMsg, historyMsg, runsMsg, waiterMsg, watchReadyMsg, decidedMsg, goneMsg, openMsg, judgedMsg, signerMsg, signedMsg, eventSigsMsg, identityMsg:
		m.inflight = max(m.inflight-1, 0)
	}
	switch msg := msg.(type) {
	case judgedMsg:
		return m, m.onJudged(msg)
	case tea.WindowSizeMsg:
		m.setSize(msg.Width, msg.Height)
		return m, nil
	case pendingMsg:
		return m, m.onPending(msg)
	case restDueMsg:
		if !m.restDue() {
			return m, nil // a load is on its way: the rest comes after it (loadDone)
		}
		return m, m.oneOff(m.startRest())
	case presenceWrittenMsg:
		if msg.alone {
			m.ownWrite(msg.before, msg.after)
		}
		return m, nil
	case historyMsg:
		if msg.gen == m.hgen {
			if msg.err != nil {
				m.setNote("history: "+msg.err.Error(), m.st.Error)
			} else {
				// The selection stays on the event it was on, wherever
				// the events that came since put it.
				keep, ok := m.selectedAudit()
				if e := m.selectEvent; e != nil {
					// Opened on the event that ended a proposal (open.go).
					keep, ok, m.selectEvent = *e, true, nil
				}
				m.history, m.runs = msg.events, msg.runs
				m.hrows = make([]histRow, len(msg.events))
				for i, e := range msg.events {
					m.hrows[i] = historyRow(e)
				}
				m.applyHistoryFilter(keep, ok)
				m.buildEventPage()
			}
		}
		return m, nil
	case runsMsg:
		if msg.gen == m.hgen {
			m.runs = msg.runs
			m.layoutHistory()
			m.buildEventPage()
		}
		return m, nil
	case waiterMsg:
		return m, m.applyWaiter(msg)
	case watchReadyMsg:
		if msg.err != nil {
			m.setNote("live updates off: "+msg.err.Error(), m.st.Warning)
			return m, nil
		}
		m.watcher = msg.w
		return m, waitChange(m.ctx, m.watcher)
	case changedMsg:
		if errors.Is(msg.err, storage.ErrMoved) {
			// The file at the path is another one (or none): what is on
			// screen may not be in it. Say so, drop any prompt, read again.
			m.setNote("database file changed: "+storeReason(msg.err), m.st.Error)
			if m.prompt != nil {
				m.emit("prompt", m.prompt.id, "closed", "database file changed")
				m.prompt = nil
			}
			m.emit("store", "", "moved", m.note.text)
			m.moved() // another file: read it in full
			return m, tea.Batch(m.reload(), waitChange(m.ctx, m.watcher))
		}
		if msg.err != nil {
			m.setNote("live updates stopped: "+storeReason(msg.err), m.st.Error)
			return m, nil
		}
		if !m.changed(msg.who) {
			// Woken by our own presence refresh alone, or a load is on its
			// way (another follows it): nothing to read now.
			return m, waitChange(m.ctx, m.watcher)
		}
		return m, tea.Batch(m.reloadSoon(), waitChange(m.ctx, m.watcher))
	case reloadDueMsg:
		m.loading = false
		return m, m.reload()
	case healthMsg:
		switch {
		case msg.err != nil:
			// Keep what the last check that ran found.
			m.setNote("integrity check failed: "+storeReason(msg.err), m.st.Warning)
		case msg.damaged != "" && m.damaged == "":
			m.setNote("the database file is damaged, nothing is approved from it (deny still works): "+
				model.Sanitize(msg.damaged, model.Line), m.st.Error)
			m.emit("store", "", "damaged", m.note.text)
			m.damaged = msg.damaged
		default:
			m.damaged = msg.damaged
		}
		return m, checkHealth(m.ctx, m.opt.Store, storage.HealthMaxAge)
	case tickMsg:
		if msg.gen == m.tickGen {
			// It fired: the next is set after this update.
			m.tickPending, m.tickStop, m.tickTimer = false, nil, nil
		}
		cmd := m.onTick(msg.at)
		m.lastTick = m.now
		if msg.waiter != nil {
			m.waiterPolled = m.now
			cmd = tea.Batch(cmd, m.applyWaiter(*msg.waiter))
		}
		return m, cmd
	case decidedMsg:
		return m, m.onDecided(msg)
	case signerMsg:
		return m, m.onSigner(msg)
	case signedMsg:
		return m, m.onSigned(msg)
	case identityMsg:
		m.onIdentity(msg)
		return m, nil
	case eventSigsMsg:
		if p := m.event; p != nil && msg.gen == m.egen {
			p.sigs, p.sigsRead, p.sigErr = msg.sigs, true, msg.err
			m.buildEventPage()
		}
		return m, nil
	case goneMsg:
		m.onGone(msg)
		return m, nil
	case openMsg:
		return m, m.onOpen(msg)
	case tea.KeyMsg:
		if msg.Type == tea.KeyEsc && msg.Alt && !msg.Paste && !m.reply.on {
			// Two escapes read at once (pressed quickly, or bunched by a
			// slow link) come as one alt+esc: each is one step back.
			esc := tea.KeyMsg{Type: tea.KeyEsc}
			first := m.onKey(esc)
			m.syncDetailVisible()
			second := m.onKey(esc)
			m.syncDetailVisible()
			return m, tea.Batch(first, second)
		}
		cmd := m.onKey(msg)
		m.syncDetailVisible()
		return m, cmd
	}
	return m, nil
}

// syncDetailVisible tells the detail pane whether it is on screen: beside
// the list when wide, as a page when narrow, never under the help page or
// the history.
func (m *Model) syncDetailVisible() {
	on := m.mode == viewPending && !m.showHelp && (m.wide || m.pageOpen || m.prompt != nil)
	m.detail.SetVisible(on && m.width >= MinWidth && m.height >= MinHeight)
}

func (m *Model) setSize(w, h int) {
	m.width, m.height = w, h
	m.wide = w >= wideWidth
	m.help.Width = w
	m.filter.Width = max(w-4, 10)
	m.layout()
	m.layoutHistory()
	m.buildEventPage()
	m.syncDetailVisible()
}

// layout sizes the detail pane for the current screen.
func (m *Model) layout() {
	w, h := m.detailSize()
	m.detail.SetSize(w, h)
	m.detail.Refresh(m.now)
}

// Heights of the fixed parts: header (2 lines), note (1), help (1).
const chromeHeight = 4

func (m *Model) bodyHeight() int { return max(m.height-chromeHeight, 1) }

func (m *Model) listWidth() int {
	if m.wide {
		return m.width / 2
	}
	return m.width
}

// detailSize is the detail's text area: beside the list in a bordered pane
// (one column of padding) when wide, the whole body when narrow.
func (m *Model) detailSize() (int, int) {
	if m.wide {
		return m.width - m.listWidth() - 4, m.bodyHeight() - 2
	}
	return m.width, m.bodyHeight()
}

// listRows is how many list rows fit.
func (m *Model) listRows() int { return max(m.bodyHeight()-1, 1) }

func (m *Model) onPending(msg pendingMsg) tea.Cmd {
	if msg.gen != m.gen {
		return nil // a newer load is on its way
	}
	if msg.err != nil {
		advice := storeAdvice(msg.err)
		if advice != m.storeErr {
			m.emit("load", "", "error", advice)
		}
		m.storeErr = advice
		return m.loadDone()
	}
	m.storeErr = ""
	m.took(msg.took)
	var waiter tea.Cmd
	if msg.waiter != nil {
		waiter = m.applyWaiter(*msg.waiter)
	}
	m.notifiers = msg.notifiers
	if msg.same {
		m.unchanged(msg)
		return tea.Batch(waiter, m.setPresences(msg.presences), m.loadDone())
	}
	if !m.loaded {
		m.emit("loaded", "", "", fmt.Sprintf("%d pending", msg.total))
	}
	selWasListed := m.selID != "" && m.indexOf(m.selID) >= 0
	rows, partial := m.take(msg)
	m.quorum.take(msg, rows, partial)
	m.votesChanged() // the detail is shown again below (selectionChanged)
	if m.ranking.Provisional != msg.ranking.Provisional {
		if msg.ranking.Provisional {
			m.emit("ranking", "", "", fmt.Sprintf("%d pending to rank", msg.ranking.Total))
		} else {
			m.emit("ranked", "", "", "")
		}
	}
	if err := msg.ranking.Err; msg.ranking.Provisional && err != nil && (m.ranking.Err == nil || m.ranking.Err.Error() != err.Error()) {
		m.setNote("ranking the pending proposals stopped: "+storeReason(err)+"; listed soonest first until it is done (tried again every few seconds)", m.st.Warning)
	}
	m.ranking = msg.ranking
	cmds := []tea.Cmd{waiter}
	// A proposal on screen that left the list was decided or expired
	// elsewhere: close its prompt and say how.
	if selWasListed && m.indexOf(m.selID) < 0 && !m.explained[m.selID] && m.deciding[m.selID] == 0 {
		cmds = append(cmds, m.oneOff(explainGone(m.ctx, m.opt.Store, m.selID)))
	}
	// The proposal of an open prompt rewritten under it: what was read is
	// not what would be approved. Close the prompt and say so; the detail
	// shows the new content, unread.
	if p := m.prompt; p != nil {
		if i := m.indexOf(p.id); i >= 0 && m.rows[i].rec.PayloadSHA256 != p.rec.PayloadSHA256 {
			m.prompt = nil
			m.setNote(p.id+" changed while you were reading it: its content is not what you read. Read it again", m.st.Error)
			m.emit("prompt", p.id, "closed", "content changed")
		}
	}
	m.ring(rows)
	m.loaded = true
	m.applyFilter()
	cmds = append(cmds, m.selectionChanged(false), m.setPresences(msg.presences), m.tryOpen())
	m.owe(partial) // the rest comes once the frame is out and on its way (loadDone)
	return tea.Batch(append(cmds, m.loadDone())...)
}

// loadDone ends a load of the pending list: the next one starts if a
// commit was noticed while it ran, the rest of a long list is read
// restDelay later if it is owed (feed.endLoad).
func (m *Model) loadDone() tea.Cmd {
	again, rest := m.endLoad()
	switch {
	case again:
		return m.reloadSoon()
	case rest:
		return m.oneOff(tea.Tick(restDelay, func(time.Time) tea.Msg { return restDueMsg{} }))
	}
	return nil
}

// reloadSoon loads the pending list after another process's commit, once
// the pause after the last load is over (feed.paced).
func (m *Model) reloadSoon() tea.Cmd {
	if wait := m.paced(); wait > 0 {
		return m.oneOff(reloadAfter(wait))
	}
	return m.reload()
}

// applyFilter recomputes the visible rows and keeps the selection on the
// same proposal where it still shows.
func (m *Model) applyFilter() {
	raw := strings.TrimSpace(m.filter.Value())
	q := strings.ToLower(raw)
	// A filter that is exactly an id shows that proposal only: another one
	// whose command or reason mentions the id must not rank above it.
	exact := -1
	if raw != "" {
		exact = m.indexOf(raw)
	}
	m.visible = m.visible[:0]
	sel := -1
	soonest := time.Duration(-1)
	for i, r := range m.rows {
		if exact >= 0 && i != exact {
			continue
		}
		if !r.rec.EffectiveStatus.Open() && r.rec.EffectiveStatus != "" {
			continue
		}
		left, expires := r.rec.TimeLeft(m.now)
		if expires && left <= 0 {
			continue // expired while loaded: gone from the pending list
		}
		if q != "" && !strings.Contains(r.search, q) {
			continue
		}
		if expires && (soonest < 0 || left < soonest) {
			soonest = left
		}
		if r.rec.ApprovalID == m.selID {
			sel = len(m.visible)
		}
		m.visible = append(m.visible, i)
	}
	// The clock ticks when the first of them leaves the list.
	m.nextExpiry = time.Time{}
	if soonest >= 0 {
		m.nextExpiry = m.now.Add(soonest)
	}
	switch {
	case sel >= 0:
		m.cursor = sel
	case m.cursor >= len(m.visible):
		m.cursor = max(len(m.visible)-1, 0)
	}
	m.scrollList()
}

func (m *Model) scrollList() {
	n := m.listRows()
	if m.cursor < m.top {
		m.top = m.cursor
	}
	if m.cursor >= m.top+n {
		m.top = m.cursor - n + 1
	}
	m.top = max(min(m.top, max(len(m.visible)-n, 0)), 0)
}

func (m *Model) selected() *storage.Record {
	if m.cursor < 0 || m.cursor >= len(m.visible) {
		return nil
	}
	return m.rows[m.visible[m.cursor]].rec
}

// selectionChanged refreshes the detail pane for the selected proposal
// and asks for its waiter state.
// selectionChanged shows the selected proposal in the detail. byOperator:
// the operator moved the selection (a key), rather than a reload or the
// clock moving it under them.
func (m *Model) selectionChanged(byOperator bool) tea.Cmd {
	rec := m.selected()
	if rec == nil {
		m.selID = ""
		m.detail.Show(nil, nil, m.now, byOperator)
		return nil
	}
	changed := rec.ApprovalID != m.selID
	m.selID = rec.ApprovalID
	var ws *storage.WaiterStatus
	if w, ok := m.waiters[rec.ApprovalID]; ok {
		ws = &w
	}
	m.detail.votes = m.votesFor(rec.ApprovalID)
	j, judging := m.judgementFor(rec)
	m.detail.judgement = j
	m.detail.Show(rec, ws, m.now, byOperator)
	if changed || ws == nil {
		return tea.Batch(judging, m.oneOff(loadWaiter(m.ctx, m.opt.Store, shownOf(rec))))
	}
	return judging
}

// applyWaiter takes a waiter state read for proposal msg.id.
func (m *Model) applyWaiter(msg waiterMsg) tea.Cmd {
	if msg.err != nil {
		return nil // the clock asks again
	}
	m.waiters[msg.id] = msg.ws
	if msg.id == m.selID {
		if msg.sigsRead && msg.sigErr == nil {
			m.sigs, m.sigsID = msg.sigs, msg.id
			m.detail.votes = m.votesFor(msg.id)
		}
		ws := msg.ws
		m.detail.waiter = &ws
		m.detail.deliveries = msg.deliveries
		m.detail.Refresh(m.now)
		if m.following != "" {
			// The detail's length changed: take the followed scroll again.
			return m.follow()
		}
	}
	return nil
}

func (m *Model) onTick(t time.Time) tea.Cmd {
	m.now = m.opt.Now()
	before := len(m.visible)
	if !m.nextExpiry.IsZero() && !m.now.Before(m.nextExpiry) {
		// A row expired: it leaves the list. (Until then the clock
		// changes nothing applyFilter decides.)
		m.applyFilter()
	}
	var cmds []tea.Cmd
	if sel := m.selected(); sel == nil || sel.ApprovalID != m.selID {
		if m.selID != "" && before != len(m.visible) {
			m.setNote(fmt.Sprintf("%s expired", m.selID), m.st.Warning)
			m.emit("gone", m.selID, "expired", m.note.text)
			if m.prompt != nil && m.prompt.id == m.selID {
				m.prompt = nil
				m.emit("prompt", m.selID, "closed", "expired")
			}
		}
		cmds = append(cmds, m.selectionChanged(false))
	} else {
		// The waiter state comes with the tick (clock.go) every
		// waiterPollEvery, and with every load after a commit.
		m.detail.Refresh(m.now)
	}
	if m.mode == viewHistory {
		m.ageEventPage()
	}
	if m.mode == viewHistory && len(m.runs) > 0 && t.Second()%2 == 0 {
		// A runner's death is no commit: its heartbeat goes stale.
		ids := make([]string, 0, len(m.runs))
		for id := range m.runs {
			ids = append(ids, id)
		}
		cmds = append(cmds, m.oneOff(loadRuns(m.ctx, m.opt.Store, m.hgen, ids)))
	}
	return tea.Batch(cmds...)
}

func (m *Model) onDecided(msg decidedMsg) tea.Cmd {
	if m.deciding[msg.id]--; m.deciding[msg.id] <= 0 {
		delete(m.deciding, msg.id)
	}
	closed := false
	var rf *storage.RefusedError
	if m.prompt != nil && m.prompt.id == msg.id {
		keep := errors.Is(msg.err, storage.ErrConfirmMismatch) || (errors.As(msg.err, &rf) && rf.Code == storage.RefusedPhraseMismatch)
		if msg.err == nil || !keep {
			m.prompt, closed = nil, true
		} else if rf != nil {
			m.prompt.message = rf.Reason
		}
	}
	var vr *storage.VoteRecorded
	if errors.As(msg.err, &vr) && vr.Quorum != nil {
		// A vote, committed; the proposal stays pending, and shows where
		// it stands now (the reload below reads it again).
		if m.quorum.byID == nil {
			m.quorum.byID = map[string]*storage.Quorum{}
		}
		m.quorum.byID[msg.id] = vr.Quorum
		m.votesChanged()
		m.detail.Refresh(m.now)
	}
	var np *storage.NotPendingError
	if msg.err == nil || errors.As(msg.err, &np) || errors.Is(msg.err, storage.ErrNotFound) {
		m.explained[msg.id] = true
		// Back to the list: the next proposal must be chosen, not inherited.
		m.pageOpen, m.focusList = false, true
	}
	m.say(outcomeText(msg), outcomeStyle(msg, m.st))
	m.emit(msg.action, msg.id, decisionOutcome(msg), m.note.text)
	if closed {
		m.emit("prompt", msg.id, "closed", "decided")
	}
	return m.reload()
}

func (m *Model) onGone(msg goneMsg) {
	if m.deciding[msg.id] > 0 {
		// This console's own decision on it is in flight: its outcome
		// (decided here, or lost, and to whom) says what happened.
		return
	}
	if msg.err != nil || msg.rec == nil {
		m.setNote(msg.id+" left the pending list", m.st.Warning)
	} else {
		m.say(goneText(msg.rec), m.st.Warning)
	}
	// Why the proposal being read went away stays on screen until the
	// operator dismisses it (esc), whatever opens meanwhile.
	m.note.sticky = true
	m.note.words.tail += " — esc to dismiss"
	m.ageNote()
	outcome := goneOutcome(msg.rec)
	if m.prompt != nil && m.prompt.id == msg.id {
		// Our prompt was open on it: another actor won the race.
		kind := m.prompt.kind.String()
		m.prompt = nil
		if outcome == "approved" || outcome == "denied" {
			m.emit(kind, msg.id, OutcomeLost, m.note.text)
		} else {
			m.emit(kind, msg.id, outcome, m.note.text)
		}
		m.emit("prompt", msg.id, "closed", "decided elsewhere")
		return
	}
	m.emit("gone", msg.id, outcome, m.note.text)
}

// setNote shows text under the list.
func (m *Model) setNote(text string, st lipgloss.Style) { m.say(said(text), st) }

// say shows words under the list. Notes quote ids and reasons that come
// from the file: the whole text goes through the sanitiser (the program's
// own words pass unchanged).
func (m *Model) say(w words, st lipgloss.Style) {
	m.note = note{words: w, style: st}
	m.ageNote()
}

// ageNote writes the note's text at the console's clock: the age it
// tells, if it tells one, as the clock moves on (untilScreenChanges ticks
// for it).
func (m *Model) ageNote() { m.note.text = model.Sanitize(m.note.words.String(m.now), model.Line) }

// onKey routes a key press: prompt first, then the filter, then the help
// page, then the screen's own keys.
func (m *Model) onKey(k tea.KeyMsg) tea.Cmd {
	if k.Type == tea.KeyCtrlC {
		return m.quit()
	}
	if m.replyKey(k) {
		return nil
	}
	if key.Matches(k, m.keys.Redraw) {
		// Anywhere, prompts included, and without taking over from the
		// console followed: it changes nothing but the screen.
		return m.redraw()
	}
	// Keys typed faster than the terminal is read (a fast typist, a slow SSH
	// link, tmux send-keys) arrive as one message of several runes: outside
	// the prompts they are separate commands.
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 && !k.Paste && m.prompt == nil && !m.filtering {
		var cmds []tea.Cmd
		for _, r := range k.Runes {
			cmds = append(cmds, m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt}))
		}
		return tea.Batch(cmds...)
	}
	if m.prompt != nil {
		return m.promptKey(k)
	}
	// A proposal still to open (open.go) gives way to the operator's keys.
	m.stopOpening()
	if m.following != "" && !key.Matches(k, m.keys.Follow) {
		// Any key of the operator's own takes over.
		m.setNote("stopped following "+m.following, m.st.Subtle)
		m.following = ""
	}
	if m.refusal {
		// After a refused approve the operator is probably typing the id
		// they expected to be asked for: those keys must not run as list
		// commands (d denies, q quits). Only esc or enter dismiss it.
		if k.Type == tea.KeyEsc || k.Type == tea.KeyEnter {
			m.refusal = false
			m.note = note{}
		}
		return nil
	}
	if m.filtering {
		return m.filterKey(k)
	}
	if m.showHelp {
		if key.Matches(k, m.keys.Help, m.keys.Back, m.keys.Quit) {
			m.showHelp = false
		}
		return nil
	}
	switch {
	case key.Matches(k, m.keys.Quit):
		return m.quit()
	case key.Matches(k, m.keys.Help):
		m.showHelp = true
		return nil
	case key.Matches(k, m.keys.History):
		m.event = nil // the history opens on its list
		if m.mode == viewPending {
			m.mode = viewHistory
			return m.reloadHistory()
		}
		m.mode = viewPending
		return nil
	case key.Matches(k, m.keys.Follow) && m.mode == viewPending:
		return m.startFollowing()
	case key.Matches(k, m.keys.Filter):
		m.event = nil // the filter narrows the list: back to it
		m.filtering = true
		return m.filter.Focus()
	}
	if m.mode == viewHistory {
		return m.historyKey(k)
	}
	return m.pendingKey(k)
}

func (m *Model) pendingKey(k tea.KeyMsg) tea.Cmd {
	detailKeys := (m.wide && !m.focusList) || (!m.wide && m.pageOpen)
	switch {
	case key.Matches(k, m.keys.Back):
		switch {
		case m.note.sticky:
			m.note = note{}
		case !m.wide && m.pageOpen:
			m.pageOpen = false
		case m.wide && !m.focusList:
			m.focusList = true
		case m.filter.Value() != "":
			m.filter.SetValue("")
			m.applyFilter()
			return m.selectionChanged(true)
		}
		return nil
	case key.Matches(k, m.keys.Open):
		if m.selected() != nil {
			if m.wide {
				m.focusList = false
			} else {
				m.pageOpen = true
			}
			m.syncDetailVisible()
			m.detail.Touch()
		}
		return nil
	case m.wide && key.Matches(k, m.keys.Focus):
		m.focusList = k.String() == "left" || k.String() == "h"
		if !m.focusList {
			m.detail.Touch()
		}
		return nil
	case key.Matches(k, m.keys.Approve):
		return m.startApprove()
	case key.Matches(k, m.keys.Deny):
		return m.startDeny()
	}
	if detailKeys {
		page := max(m.detail.height-1, 1)
		m.detail.Touch()
		switch {
		case key.Matches(k, m.keys.Up):
			m.detail.Scroll(-1)
		case key.Matches(k, m.keys.Down):
			m.detail.Scroll(1)
		case key.Matches(k, m.keys.PageUp):
			m.detail.Scroll(-page)
		case key.Matches(k, m.keys.PageDown):
			m.detail.Scroll(page)
		case key.Matches(k, m.keys.Top):
			m.detail.ScrollTo(false)
		case key.Matches(k, m.keys.Bottom):
			m.detail.ScrollTo(true)
		}
		return nil
	}
	old := m.cursor
	m.cursor = m.moveCursor(k, m.cursor, len(m.visible))
	if m.cursor == old {
		return nil
	}
	m.scrollList()
	return m.selectionChanged(true)
}

func (m *Model) filterKey(k tea.KeyMsg) tea.Cmd {
	switch k.Type {
	case tea.KeyEnter:
		m.filtering = false
		m.filter.Blur()
		return nil
	case tea.KeyEsc:
		m.filtering = false
		m.filter.Blur()
		m.filter.SetValue("")
	default:
		var cmd tea.Cmd
		m.filter, cmd = m.filter.Update(k)
		_ = cmd
	}
	if m.mode == viewHistory {
		m.applyHistoryFilter(m.selectedAudit())
		return nil
	}
	m.applyFilter()
	return m.selectionChanged(true)
}

// startApprove opens the approve prompt once the whole proposal has been
// displayed. The store checks everything again; these checks only spare
// the operator a prompt that cannot succeed.
func (m *Model) startApprove() tea.Cmd {
	rec := m.selected()
	switch {
	case rec == nil:
		return m.refuse("approve", "", "nothing selected", m.st.Warning)
	case m.opt.Actor.ReadOnly || m.opt.Store.ReadOnlyReason() != "":
		// The decision path refuses, and says why; the console only relays.
		return m.decide(rec.ApprovalID, approve(m.ctx, m.opt.Store, rec.ApprovalID, "", rec.PayloadSHA256, m.opt.Actor))
	case rec.Tampered != "":
		return m.refuse("approve", rec.ApprovalID, rec.ApprovalID+" was changed after submit: it can be denied (d), never approved", m.st.Error)
	case rec.Corrupt != "":
		return m.refuse("approve", rec.ApprovalID, rec.ApprovalID+" is corrupt: it can be denied (d), never approved", m.st.Error)
	case rec.Hardline:
		return m.refuse("approve", rec.ApprovalID, "HARDLINE: Hermes never runs this command, whoever approves it; it cannot be approved: deny it (d)", m.st.Error)
	case !rec.RequiresTextConfirm && model.UntypableID(rec.ApprovalID) != "":
		return m.refuse("approve", rec.ApprovalID, model.UntypableID(rec.ApprovalID)+": it cannot be typed for sure, so it can only be denied (d)", m.st.Error)
	case !rec.RequiresTextConfirm && len([]rune(rec.ApprovalID)) < storage.MinApprovableID:
		return m.refuse("approve", rec.ApprovalID, fmt.Sprintf("the id %s is shorter than %d characters, too easy to type by accident: it can only be denied (d)",
			rec.ApprovalID, storage.MinApprovableID), m.st.Error)
	case !m.detail.SeenAll():
		if m.wide {
			m.focusList = false
		} else {
			m.pageOpen = true
		}
		m.syncDetailVisible()
		if m.detail.Held() {
			return m.refuse("approve", rec.ApprovalID, rec.ApprovalID+" came on screen by itself (the list changed under you): read it first (enter, then scroll)", m.st.Warning)
		}
		if what := m.detail.stillLoading(); what != "" {
			// Nothing on screen counts as read until it has arrived: say
			// what is missing, not lines that are there to read.
			verb := "is"
			if strings.Contains(what, " and ") {
				verb = "are"
			}
			return m.refuse("approve", rec.ApprovalID, "not yet: "+what+" "+verb+" still loading for "+rec.ApprovalID+
				"; read it once it is on screen, then approve again (a)", m.st.Warning)
		}
		// What the frame this key brings shows counts once it is drawn:
		// the note speaks of the screen the operator is about to see.
		n := m.detail.unreadAfterThisFrame()
		if n == 0 {
			// It all fits on the page this key opened: on screen now, not
			// read yet.
			return m.refuse("approve", rec.ApprovalID, "read it first: all of "+rec.ApprovalID+" is on screen now; approve again (a) once you have", m.st.Warning)
		}
		return m.refuse("approve", rec.ApprovalID, "read it all first: "+nLines(n)+" of the command and diff "+human.Plural(n, "has", "have")+
			" not been on screen (scroll through them: ↓/pgdn; End skips them)", m.st.Warning)
	}
	return m.openPrompt(promptApprove, rec)
}

func (m *Model) startDeny() tea.Cmd {
	rec := m.selected()
	switch {
	case rec == nil:
		return m.refuse("deny", "", "nothing selected", m.st.Warning)
	case m.opt.Actor.ReadOnly || m.opt.Store.ReadOnlyReason() != "":
		return m.decide(rec.ApprovalID, deny(m.ctx, m.opt.Store, rec.ApprovalID, "", m.opt.Actor))
	}
	return m.openPrompt(promptDeny, rec)
}

// refuse says why an action did not start, on screen and in the event log.
// A refused approve holds the keyboard until it is dismissed (esc or
// enter): see refusal.
func (m *Model) refuse(action, id, text string, st lipgloss.Style) tea.Cmd {
	if action == "approve" && id != "" {
		text += " — esc or enter to go on"
		m.refusal = true
	}
	m.setNote(text, st)
	m.emit(action, id, OutcomeRefused, text)
	return nil
}

func (m *Model) openPrompt(kind promptKind, rec *storage.Record) tea.Cmd {
	m.signGen++
	m.prompt = newPrompt(kind, rec, m.st, m.width)
	m.prompt.setVotes(m.votesFor(rec.ApprovalID))
	if !m.note.sticky {
		m.note = note{}
	}
	if names, approving := m.othersOn(rec.ApprovalID); approving {
		// Advisory: the store still lets exactly one decision through,
		// and counts each person's vote once.
		text := strings.Join(names, ", ") + " is approving this proposal right now"
		if q := m.quorum.of(rec.ApprovalID); q != nil && kind == promptApprove {
			text = strings.Join(names, ", ") + " is voting on this proposal right now: it needs " + describe(q.Standing) + ", each person counted once"
		}
		m.setNote(text, m.st.Warning)
	}
	m.emit("prompt", rec.ApprovalID, "opened", kind.String())
	return m.prompt.input.Focus()
}

func (m *Model) promptKey(k tea.KeyMsg) tea.Cmd {
	p := m.prompt
	switch {
	case k.Type == tea.KeyEsc:
		m.prompt = nil
		m.signGen++ // a signature on its way is not used
		m.setNote("cancelled", m.st.Subtle)
		m.emit("prompt", p.id, "closed", "cancelled")
		return nil
	case p.signing:
		// The typed text is what is being signed for: it stays as it is
		// until the signature comes (or esc).
		return nil
	case k.Type == tea.KeyEnter:
		p.typed = p.input.Value()
		if m.mustSign(p) {
			return m.startSigning(p)
		}
		return m.submit(p, nil, "")
	}
	if p.refuses(k) {
		m.emit("paste", p.id, OutcomeRefused, pasteRefused)
	}
	return p.key(k)
}

func (m *Model) historyKey(k tea.KeyMsg) tea.Cmd {
	switch {
	case m.event != nil:
		m.eventKey(k)
		return nil
	case key.Matches(k, m.keys.Back):
		m.mode = viewPending
		return nil
	case key.Matches(k, m.keys.Open):
		return m.openEvent()
	}
	m.hcursor = m.moveCursor(k, m.hcursor, len(m.hvisible))
	m.scrollHistory()
	return nil
}

// moveCursor applies a navigation key to a cursor over n rows.
func (m *Model) moveCursor(k tea.KeyMsg, cur, n int) int {
	page := m.listRows()
	switch {
	case key.Matches(k, m.keys.Up):
		cur--
	case key.Matches(k, m.keys.Down):
		cur++
	case key.Matches(k, m.keys.PageUp):
		cur -= page
	case key.Matches(k, m.keys.PageDown):
		cur += page
	case key.Matches(k, m.keys.Top):
		cur = 0
	case key.Matches(k, m.keys.Bottom):
		cur = n - 1
	}
	return max(min(cur, n-1), 0)
}

// applyHistoryFilter recomputes the history's visible events and keeps the
// selection on keep (when selected is true) where it still shows; when
// events came above it, the rows on screen stay where they were, unless the
// list was scrolled to its top (then the new ones show).
func (m *Model) applyHistoryFilter(keep storage.AuditEvent, selected bool) {
	q := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	want := keyOf(keep)
	m.hvisible = m.hvisible[:0]
	at := -1
	for i, e := range m.history {
		if q == "" || strings.Contains(strings.ToLower(historySearch(e)), q) {
			if selected && at < 0 && keyOf(e) == want {
				at = len(m.hvisible)
			}
			m.hvisible = append(m.hvisible, i)
		}
	}
	if at >= 0 {
		if m.htop > 0 {
			m.htop += at - m.hcursor
		}
		m.hcursor = at
	}
	m.hcursor = max(min(m.hcursor, len(m.hvisible)-1), 0)
	m.scrollHistory()
	m.layoutHistory()
}

func (m *Model) scrollHistory() {
	n := m.listRows() - 1
	if m.hcursor < m.htop {
		m.htop = m.hcursor
	}
	if m.hcursor >= m.htop+n {
		m.htop = m.hcursor - n + 1
	}
	m.htop = max(min(m.htop, max(len(m.hvisible)-n, 0)), 0)
}

func historySearch(e storage.AuditEvent) string {
	return e.ApprovalID + " " + e.Event + " " + e.Outcome + " " + e.Reason + " " + e.Actor + " " + e.Surface + " " + e.DetailRaw
}
