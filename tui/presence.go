package tui

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// Presence: every console (local or over SSH) says who it is and what it
// shows in approve_tui_presence; consoles mark the proposals others are
// reviewing or approving, list who is connected, and one can follow
// another's screen (pairing). All of it is advisory: exactly-once stays the
// store's job.

var consoleSeq atomic.Int64

// newConsoleID is unique per console: host, pid and a counter (an SSH
// server runs many consoles in one process).
func newConsoleID() string {
	host := model.HostName()
	return fmt.Sprintf("%s:%d:%d", host, os.Getpid(), consoleSeq.Add(1))
}

// presenceState is what this console last said of itself.
type presenceState struct {
	viewing, prompt string
	scroll          int
	detail          bool // the detail is open (detailOpen)
}

type (
	// presenceWrittenMsg: our presence row was written (or could not be);
	// alone: the rows this process had written were before just before the
	// write and after just after, one apart (storage.Store.WrittenRows):
	// nothing else of this process wrote meanwhile.
	presenceWrittenMsg struct {
		err           error
		before, after int64
		alone         bool
	}
)

func (m *Model) presenceNow() presenceState {
	p := presenceState{viewing: m.selID, scroll: m.detail.offset, detail: m.detailOpen()}
	if m.mode != viewPending {
		p.viewing, p.detail = "", false
	}
	if m.prompt != nil {
		p.prompt = m.prompt.kind.String()
		p.viewing = m.prompt.id
	}
	return p
}

// presenceCmd writes our presence when it changed, or when the last write
// is older than storage.PresenceEvery.
func (m *Model) presenceCmd() tea.Cmd {
	if m.opt.NoPresence {
		return nil
	}
	now := m.presenceNow()
	if now == m.presence && time.Since(m.presenceAt) < storage.PresenceEvery {
		return nil
	}
	m.presence, m.presenceAt = now, time.Now()
	p := storage.Presence{Console: m.consoleID, Actor: m.opt.Actor.String(), Name: m.opt.name(), Surface: string(m.opt.Actor.Surface),
		Viewing: now.viewing, Prompt: now.prompt, Scroll: now.scroll, DetailOpen: now.detail}
	s, ctx := m.opt.Store, m.ctx
	// Not a one-off the drivers wait for: it changes nothing on screen.
	return func() tea.Msg {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		before, ok1 := s.WrittenRows(wctx)
		err := s.SetPresence(wctx, p)
		after, ok2 := s.WrittenRows(wctx)
		return presenceWrittenMsg{err: err, before: before, after: after, alone: ok1 && ok2 && err == nil && after == before+1}
	}
}

// setPresences takes the presence rows read with the pending list: the
// others (not this console), what they show (othersOn) and who they are
// (connected), worked out here so that View only looks them up; and, when
// following, moves to what the followed console shows.
func (m *Model) setPresences(ps []storage.Presence) tea.Cmd {
	m.others = m.others[:0]
	m.onProposal = map[string]presenceMark{}
	seen := map[string]bool{}
	m.connected = m.connected[:0]
	for _, p := range ps {
		if p.Console == m.consoleID {
			continue
		}
		m.others = append(m.others, p)
		name := model.Sanitize(p.Name, model.Line)
		if p.Viewing != "" {
			mark := m.onProposal[p.Viewing]
			mark.names = append(mark.names, name)
			mark.approving = mark.approving || p.Prompt == "approve"
			m.onProposal[p.Viewing] = mark
		}
		if !seen[name] {
			seen[name] = true
			m.connected = append(m.connected, name)
		}
	}
	sort.Strings(m.connected)
	return m.follow()
}

// presenceMark is who else shows one proposal, and whether one of them has
// its approve prompt open.
type presenceMark struct {
	names     []string
	approving bool
}

// othersOn says who else shows proposal id, and whether one of them has its
// approve prompt open.
func (m *Model) othersOn(id string) ([]string, bool) {
	mark := m.onProposal[id]
	return mark.names, mark.approving
}

// follow moves this console to what the followed one shows: selection,
// whether the detail is open, scroll. What arrives this way is not read (the operator did
// not scroll through it themselves).
func (m *Model) follow() tea.Cmd {
	if m.following == "" {
		return nil
	}
	var target *storage.Presence
	for i := range m.others {
		if strings.EqualFold(m.others[i].Name, m.following) {
			target = &m.others[i]
		}
	}
	// The header says when the console followed is not connected (yet, or
	// any more): following it then shows nothing.
	m.followHere = target != nil
	if target == nil || target.Viewing == "" {
		return nil
	}
	var cmd tea.Cmd
	if target.Viewing != m.selID {
		for i, ri := range m.list.visible {
			if m.rows[ri].rec.ApprovalID == target.Viewing {
				m.list.cursor = i
				m.list.scroll()
				cmd = m.selectionChanged(false)
				break
			}
		}
	}
	// The detail open where theirs is (their prompt shows it too), closed
	// where it is not: beside the list, the list has the keys again.
	open := target.DetailOpen || target.Prompt != ""
	m.setDetailOpen(open)
	m.detail.offset = target.Scroll
	m.detail.clampOffset()
	return cmd
}

// detailOpen reports whether the operator has the detail open: it has the
// keys beside the list, or is shown as a page, or a prompt shows it.
func (m *Model) detailOpen() bool {
	return m.prompt != nil || (m.wide && !m.focusList) || (!m.wide && m.pageOpen)
}

// startFollowing follows the next other person (f), or stops when there
// is nobody else.
func (m *Model) startFollowing() tea.Cmd {
	names := m.connected
	if len(names) == 0 {
		m.following = ""
		m.setNote("nobody else is connected to follow", m.st.Subtle)
		return nil
	}
	next := names[0]
	for i, n := range names {
		if strings.EqualFold(n, m.following) && i+1 < len(names) {
			next = names[i+1]
		}
	}
	m.following = next
	m.setNote("following "+next+": any key of yours takes over", m.st.OK)
	return m.follow()
}
