package tui

import (
	"context"
	"sync"

	tea "github.com/charmbracelet/bubbletea"
)

// Driver runs a console without Bubble Tea's program: it hands messages to
// the model's Update and runs the commands Update returns, feeding what
// they return back in. The headless mode runs it asynchronously (every
// command in its own goroutine, as Bubble Tea does), Settle and the tests
// synchronously (one command after the other, in the order they were
// made).
//
// It uses Bubble Tea's public API only: a command returns nil (nothing), a
// tea.BatchMsg (its commands run each on its own), a tea.QuitMsg (the
// console quit) or a message for Update. The console never builds a
// tea.Sequence, whose message type is Bubble Tea's own
// (TestNoSequenceInTheConsole): steps that must come in order are done in
// one command, or each asked for by the message of the one before.
type Driver struct {
	m   tea.Model
	ctx context.Context
	// msgs receives the messages of the commands run asynchronously (nil:
	// the driver is synchronous and queue holds the commands to run).
	msgs  chan tea.Msg
	queue []tea.Cmd
	wg    sync.WaitGroup
	quit  bool
}

// NewDriver drives m asynchronously until ctx ends: Exec runs each command
// in its own goroutine and posts its message to Messages, which the caller
// hands to Apply one at a time.
func NewDriver(ctx context.Context, m tea.Model) *Driver {
	return &Driver{m: m, ctx: ctx, msgs: make(chan tea.Msg, 64)}
}

// Exec starts cmd: in its own goroutine (asynchronous), or queued for
// Settle (synchronous).
func (d *Driver) Exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	if d.msgs == nil {
		d.queue = append(d.queue, cmd)
		return
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.post(cmd())
	}()
}

// post delivers what a command returned, asynchronously.
func (d *Driver) post(msg tea.Msg) {
	switch m := msg.(type) {
	case nil:
		return
	case tea.BatchMsg:
		for _, c := range m {
			d.Exec(c)
		}
		return
	}
	select {
	case d.msgs <- msg:
	case <-d.ctx.Done():
	}
}

// Messages is where the messages of the commands run asynchronously
// arrive.
func (d *Driver) Messages() <-chan tea.Msg { return d.msgs }

// Pending is how many messages wait in Messages.
func (d *Driver) Pending() int { return len(d.msgs) }

// Apply hands msg to the model and starts the command its Update returns,
// and reports whether the console has quit: msg is a tea.QuitMsg, or the
// console asked to quit (Model.Quitting; its quit message may still be on
// its way, and nothing more is started).
func (d *Driver) Apply(msg tea.Msg) (quit bool) {
	if _, ok := msg.(tea.QuitMsg); ok {
		d.quit = true
		return true
	}
	_, cmd := d.m.Update(msg)
	if q, ok := d.m.(interface{ Quitting() bool }); ok && q.Quitting() {
		d.quit = true
		return true
	}
	d.Exec(cmd)
	return false
}

// Wait waits for the commands running asynchronously to return.
func (d *Driver) Wait() { d.wg.Wait() }

// settle runs the queued commands, and every command that follows from
// them, until none is left; a quit does not stop it.
func (d *Driver) settle() (quit bool) {
	for len(d.queue) > 0 {
		c := d.queue[0]
		d.queue = d.queue[1:]
		switch msg := c().(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				d.Exec(c)
			}
		case tea.QuitMsg:
			quit = true
		default:
			_, next := d.m.Update(msg)
			d.Exec(next)
		}
	}
	return quit
}

// Settle runs cmd and every command that follows from it synchronously,
// feeding each message back into m, until nothing is left to do. With
// Options.NoWatch nothing the console issues blocks (no watcher, no clock),
// so tests and benchmarks drive the very model the terminal runs, step by
// step. It returns whether the model asked to quit.
func Settle(m tea.Model, cmd tea.Cmd) (quit bool) {
	d := &Driver{m: m}
	d.Exec(cmd)
	return d.settle()
}
