package storage

import (
	"context"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// Presence is one open console (local or over SSH): who it is and what it
// shows. It is advisory (exactly-once stays the store's job): consoles mark
// what others are reviewing and can follow each other's screens.
type Presence struct {
	Console   string  `json:"console"` // unique per console: host, pid and a counter
	Actor     string  `json:"actor"`   // as decisions name it
	Name      string  `json:"name"`    // short, for screens: alice
	Surface   string  `json:"surface"`
	Viewing   string  `json:"viewing"` // the proposal shown ("" for none)
	Prompt    string  `json:"prompt"`  // "approve" or "deny" while a prompt is open
	Scroll    int     `json:"scroll"`  // the detail's first line on screen
	StartedAt float64 `json:"started_at"`
	Heartbeat float64 `json:"heartbeat_at"`

	// DetailOpen: the operator opened the detail (enter; a prompt shows
	// it too), where a follower opens it as well. Kept in the scroll
	// column: -(Scroll+1) while it is closed.
	DetailOpen bool `json:"detail_open"`
}

// PresenceEvery is how often a console refreshes its presence row when
// nothing changed; PresenceStaleAfter is when a row no longer counts.
const (
	PresenceEvery      = 15 * time.Second
	PresenceStaleAfter = 3 * PresenceEvery
)

// SetPresence writes a console's presence row (a watcher's too: being
// there is not a decision). It is not audited.
func (st *Store) SetPresence(ctx context.Context, p Presence) error {
	s := st.bind()
	if r := s.roReason(); r != "" {
		return &ReadOnlyError{Reason: r}
	}
	now := model.Epoch(s.now())
	if p.StartedAt == 0 {
		p.StartedAt = now
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.inWriteTxLocked(ctx, "presence", func(ctx context.Context) error {
		_, err := s.w.ExecContext(ctx, `INSERT INTO approve_tui_presence
			(console, actor, name, surface, viewing, prompt, scroll, started_at, heartbeat_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(console) DO UPDATE SET viewing = excluded.viewing, prompt = excluded.prompt,
			scroll = excluded.scroll, heartbeat_at = excluded.heartbeat_at`,
			p.Console, columnText(p.Actor), columnText(p.Name), p.Surface, p.Viewing, p.Prompt, scrollColumn(p), p.StartedAt, now)
		return err
	})
}

// RemovePresence deletes a console's row when it closes.
func (st *Store) RemovePresence(ctx context.Context, console string) error {
	s := st.bind()
	if s.roReason() != "" {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.inWriteTxLocked(ctx, "presence", func(ctx context.Context) error {
		_, err := s.w.ExecContext(ctx, `DELETE FROM approve_tui_presence WHERE console = ?`, console)
		return err
	})
}

// Presences lists the consoles whose presence is fresh, oldest first.
func (st *Store) Presences(ctx context.Context) ([]Presence, error) {
	s := st.bind()
	since := model.Epoch(s.now()) - PresenceStaleAfter.Seconds()
	rows, err := s.rdb.QueryPrepared(ctx, `SELECT console, actor, name, surface, viewing, prompt, scroll, started_at, heartbeat_at
		FROM approve_tui_presence WHERE heartbeat_at > ? ORDER BY started_at, console`, since)
	if isNoTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, s.classify("presence", err)
	}
	defer rows.Close()
	var out []Presence
	for rows.Next() {
		var p Presence
		if err := rows.Scan(&p.Console, &p.Actor, &p.Name, &p.Surface, &p.Viewing, &p.Prompt, &p.Scroll, &p.StartedAt, &p.Heartbeat); err != nil {
			return nil, s.classify("presence", err)
		}
		p.DetailOpen = p.Scroll >= 0
		if !p.DetailOpen {
			p.Scroll = -p.Scroll - 1
		}
		out = append(out, p)
	}
	return out, s.classify("presence", rows.Err())
}

// scrollColumn is what the scroll column holds for p: its scroll while
// the detail is open, -(scroll+1) while it is closed (a console that
// predates DetailOpen writes the scroll alone, and is taken as open).
func scrollColumn(p Presence) int {
	sc := max(p.Scroll, 0)
	if !p.DetailOpen {
		return -sc - 1
	}
	return sc
}
