package storage

import (
	"context"
	"fmt"
)

// The writer connection after the server dropped it.

// useSettings puts the view's lock timeout on the writer, made again first
// if it was lost (wmu held).
func (*pgEngine) useSettings(ctx context.Context, f *dbfile, opt Options) error {
	if err := f.reconnectWriter(ctx); err != nil {
		return err
	}
	if ms := opt.BusyTimeout.Milliseconds(); ms != f.busyMS {
		if _, err := f.w.ExecContext(ctx, fmt.Sprintf(`SET lock_timeout = %d`, ms)); err != nil {
			return err
		}
		f.busyMS = ms
	}
	return nil
}

// reconnectWriter makes a new writer connection when the last one was lost,
// and prepares the writer's statements on it (wmu held).
func (f *dbfile) reconnectWriter(ctx context.Context) error {
	if !f.pg.brokenWriter {
		return nil
	}
	if f.ws != nil {
		f.ws.close()
		f.ws = nil
	}
	f.w.Close()
	c, err := f.wdb.Conn(ctx)
	if err != nil {
		return err
	}
	f.w = &conn{Conn: c, e: f.eng}
	f.busyMS = -1 // the new connection has the URL's lock_timeout: set the view's again
	if err := f.noteWriterPID(ctx); err != nil {
		return err
	}
	if f.fileRO == "" {
		ws, err := prepareWriter(ctx, f.eng, f.w, selectColumns(false, f.tier2.Load()), f.tier2.Load())
		if err != nil {
			return err
		}
		f.ws = ws
	}
	f.pg.brokenWriter = false
	return nil
}

func (f *dbfile) noteWriterPID(ctx context.Context) error {
	var pid uint32
	if err := f.w.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		return err
	}
	f.pg.writerPID.Store(pid)
	return nil
}

// writerFailed marks the writer connection lost when err says so (wmu
// held).
func (*pgEngine) writerFailed(f *dbfile, err error) {
	if connLost(err) {
		f.pg.brokenWriter = true
	}
}

// commitFailed: a lost connection leaves the COMMIT's outcome unknown, and
// says so.
func (e *pgEngine) commitFailed(f *dbfile, op string, err error) error {
	if connLost(err) {
		e.writerFailed(f, err)
		return commitLost(op, err)
	}
	return err
}
