package storage

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// listen starts the hub's loop on PostgreSQL (h.mu held). Notifications
// come from the server: nothing to configure. The first LISTEN is made
// before Watch returns, so that a commit right after it is seen; a later one
// is the loop's to make.
func (*pgEngine) listen(f *dbfile, h *hub) bool {
	h.push = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	lc, err := f.pgListen(ctx)
	cancel()
	h.notifying = err == nil
	go h.pgLoop(f, lc)
	return true
}

// pgListener is the hub's loop on PostgreSQL: LISTEN on a connection of its
// own, a wake-up for every notification of this schema, a new connection
// (and a wake-up: commits may have been missed) after a lost one, and a
// slow poll as a safety net.
func (h *hub) pgLoop(f *dbfile, lc *pgx.Conn) {
	defer close(h.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-h.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	defer func() {
		if lc != nil {
			lc.Close(context.Background())
		}
	}()
	backoff := 100 * time.Millisecond
	lazyOnly := func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.fast == 0
	}
	var lastBump time.Time
	pending := false
	for ctx.Err() == nil {
		if lc == nil {
			c, err := f.pgListen(ctx)
			if err != nil {
				h.setListening(false)
				h.notify()
				if !sleepCtx(ctx, backoff) {
					return
				}
				backoff = min(backoff*2, PollPostgresDown)
				continue
			}
			lc, backoff = c, 100*time.Millisecond
			h.setListening(true)
			h.notify() // commits while it was down were not notified
		}
		wait := PollPostgres
		if pending {
			wait = max(time.Until(lastBump.Add(LazyPoll)), time.Millisecond)
		}
		wctx, wcancel := context.WithTimeout(ctx, wait)
		n, err := lc.WaitForNotification(wctx)
		wcancel()
		switch {
		case err == nil:
			if n.Payload != f.pg.schema || n.PID == f.pg.writerPID.Load() {
				continue // another schema's, or this process's own commit (woken already)
			}
			// Agents that only wait (lazy watchers) are woken at most every
			// LazyPoll: every heartbeat of every agent notifies.
			if lazyOnly() && time.Since(lastBump) < LazyPoll {
				pending = true
				continue
			}
			h.notify()
			lastBump, pending = time.Now(), false
		case ctx.Err() != nil:
			return
		case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err):
			if pending && time.Since(lastBump) >= LazyPoll || time.Since(lastBump) >= PollPostgres {
				h.notify()
				lastBump, pending = time.Now(), false
			}
		default:
			lc.Close(context.Background())
			lc = nil
			h.setListening(false)
			h.notify()
		}
	}
}

// pgListen makes the listening connection.
func (f *dbfile) pgListen(ctx context.Context) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, f.pg.cfg.Copy())
	if err != nil {
		return nil, err
	}
	if _, err = c.Exec(ctx, `LISTEN `+pgChannel); err != nil {
		c.Close(context.Background())
		return nil, err
	}
	return c, nil
}

func (h *hub) setListening(on bool) {
	h.mu.Lock()
	h.notifying = on
	h.mu.Unlock()
}

// sleepCtx waits d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
