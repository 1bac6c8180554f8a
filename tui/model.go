// Package tui is the approval console: one Bubble Tea model, used by the
// interactive terminal, SSH sessions and the headless driver alike.
package tui

import (
	"context"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/approve-tui/approve-tui/approvals"
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
	// parkWS: the waiter state of a reserved row (approvals.ReadParks):
	// whether its waiter is gone without parking it (flag P).
	parkWS *storage.WaiterStatus
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

	// header: the header's first line (header.go).
	header header
	// feed is the pending list and how it is kept up to date (feed.go).
	feed

	mode      viewMode
	wide      bool
	pageOpen  bool // narrow: the detail is shown as a page
	focusList bool // wide: keys move the list (else they scroll the detail)
	showHelp  bool

	rang      map[string]bool // the ids listed at the last load (ring)
	bellSince float64         // proposals created since ring (epoch)
	// list: the pending list on screen: the rows that pass the filter, the
	// one selected and the first on screen (pendinglist.go).
	list    pendingList
	selID   string
	waiters map[string]storage.WaiterStatus
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
	// hrows: each event's columns (historyRow); hist, the events that
	// pass the filter and the cursor over them; hcols, the columns' widths
	// for them (layoutHistory); event, the event shown whole (nil: the
	// list).
	hrows    []histRow
	hist     historyList
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
	reply replyState
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
	sigs   []approvals.Signer
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
	// frame is the frame the last update laid out (render), which View
	// returns; drawn, what it shows of the command and diff, when it went
	// to the caller rather than the screen (counted as read by the next
	// update: drainDrawn).
	frame []string
	drawn *shown
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
		waiters: map[string]storage.WaiterStatus{}, judged: map[judgeKey]*risk.Judgement{}, judging: map[judgeKey]bool{}, detail: newDetail(st, DefaultKeyMap()), header: newHeader(st), list: newPendingList(st, DefaultKeyMap()), hist: newHistoryList(st, DefaultKeyMap()), explained: map[string]bool{}, deciding: map[string]int{},
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
	limit := m.pageToLoad(m.list.top+m.listRows(), strings.TrimSpace(m.filter.Value()) != "")
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
	m.render()
	return m, cmd
}
