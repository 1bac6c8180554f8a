package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Damage. A file that fails SQLite's quick_check (a torn copy, a corrupt
// index that the approve path itself does not read) must not be approved
// from: the row read may not be the row stored. Consume makes sure the file
// was checked recently (HealthMaxAge) and refuses on damage; deny stays
// possible, so that an operator can still stop what is waiting.
//
// The check is bounded to the tables approve-tui reads and writes
// (gateway_approvals, approve-tui's own, and the schema table), each with
// its indexes: Hermes' state.db also holds its chat history, which can be
// far larger and is none of this store's business.

// HealthMaxAge is how old the last integrity check may be when Consume
// runs; an older one is run again first.
const HealthMaxAge = 10 * time.Minute

// checkedTables are the tables quick_check reads (those missing are skipped).
var checkedTables = []string{"sqlite_master", "gateway_approvals", "approve_tui_audit", "approve_tui_meta",
	"approve_tui_rank", "approve_tui_waiters", "approve_tui_migrations"}

// maxReportedProblems bounds what a damaged file's report keeps.
const maxReportedProblems = 5

type health struct {
	mu      sync.Mutex
	checked time.Time // when the last check finished (zero: never)
	damaged string    // what it found ("" when intact)
	err     error     // why the last check could not run (nil when it ran)
	running chan struct{}
}

// DamagedError: the file failed its integrity check. Nothing is approved
// from it.
type DamagedError struct{ Reason string }

func (e *DamagedError) Error() string {
	return "the database file is damaged, so nothing is approved from it: " + e.Reason +
		" (deny still works; restore the file from a backup, or recover it with the sqlite3 shell's .recover)"
}

// Damaged says what the last integrity check found wrong with the file
// ("" when it found nothing, or has not run).
func (st *Store) Damaged() string {
	s := st.bind()
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	return s.health.damaged
}

// CheckIntegrity runs SQLite's quick_check over approve-tui's tables now and
// returns what it found wrong ("" when nothing). The result is kept for the
// file: Consume refuses while it says damaged.
func (st *Store) CheckIntegrity(ctx context.Context) (string, error) {
	return st.bind().checkIntegrity(ctx, 0)
}

// checkIntegrity runs the check unless one finished within maxAge (0: run
// it now). A caller that finds a check running waits for it and takes its
// result.
func (s bound) checkIntegrity(ctx context.Context, maxAge time.Duration) (string, error) {
	h := &s.health
	h.mu.Lock()
	if maxAge > 0 && !h.checked.IsZero() && time.Since(h.checked) < maxAge {
		defer h.mu.Unlock()
		return h.damaged, nil
	}
	if ch := h.running; ch != nil {
		h.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	} else {
		ch := make(chan struct{})
		h.running = ch
		h.mu.Unlock()
		problems, err := s.quickCheck(ctx)
		h.mu.Lock()
		h.running, h.err = nil, err
		if err == nil {
			h.checked, h.damaged = time.Now(), strings.Join(problems, "; ")
		}
		close(ch)
		h.mu.Unlock()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.damaged, h.err
}

// quickCheck looks for damage in the checked tables, in the engine's way
// (nil: intact).
func (s bound) quickCheck(ctx context.Context) ([]string, error) {
	return s.eng.quickCheck(ctx, s)
}

// isDamage reports whether SQLite said the file itself is damaged.
func isDamage(err error) bool {
	return errCode(err) == codeCorrupt || errCode(err) == codeNotADB
}

// refuseDamaged is Consume's check: the file was checked recently, and
// found intact.
func (s bound) refuseDamaged(ctx context.Context) error {
	d, err := s.checkIntegrity(ctx, HealthMaxAge)
	if err != nil {
		var un *UnavailableError
		if errors.As(err, &un) {
			return err
		}
		return fmt.Errorf("integrity check: %w", err)
	}
	if d != "" {
		return &DamagedError{Reason: d}
	}
	return nil
}
