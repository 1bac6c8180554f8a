package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/storage"
	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite"
)

// TestMain registers the programs the scripts run as subprocesses:
//
//	approve-tui ARGS...            the CLI, in-process entry point
//	expect CODE approve-tui ARGS... the CLI, succeeding only when it exits CODE
//	sqlite-exec DB SQL             raw SQL behind the store's back (tampering)
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"approve-tui": func() { os.Exit(Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		"expect":      expectMain,
		"sqlite-exec": sqliteExecMain,
	})
}

func expectMain() {
	if len(os.Args) < 3 || os.Args[2] != "approve-tui" {
		fmt.Fprintln(os.Stderr, "usage: expect CODE approve-tui ARGS...")
		os.Exit(2)
	}
	want, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "expect: bad code:", err)
		os.Exit(2)
	}
	if got := Execute(os.Args[3:], os.Stdin, os.Stdout, os.Stderr); got != want {
		fmt.Fprintf(os.Stderr, "expect: exit code %d, want %d\n", got, want)
		os.Exit(1)
	}
	os.Exit(0)
}

func sqliteExecMain() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: sqlite-exec DB SQL")
		os.Exit(2)
	}
	db, err := sql.Open("sqlite", os.Args[1])
	if err == nil {
		_, err = db.Exec(os.Args[2])
		db.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sqlite-exec:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("APPROVE_TUI_DB", filepath.Join(env.WorkDir, "state.db"))
			env.Setenv("HERMES_HOME", filepath.Join(env.WorkDir, "hermes"))
			env.Setenv("COLUMNS", "100")
			// A race-enabled binary otherwise sleeps a second at every exit.
			env.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			env.Setenv("ESC", "\x1b")     // for commands with a real escape byte
			env.Setenv("BADBYTE", "\xff") // for commands with invalid UTF-8
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"setenv-stdout": cmdSetenvStdout,
			"json":          cmdJSON,
			"writeline":     cmdWriteline,
			"await-waiter":  cmdAwaitWaiter,
			"await-pending": cmdAwaitPending,
			"sleep":         cmdSleep,
			"presented":     cmdPresented,
		},
	})
}

// setenv-stdout NAME: set NAME to the last command's stdout, trimmed.
func cmdSetenvStdout(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: setenv-stdout NAME")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
}

// writeline FILE TEXT: write TEXT and a newline to FILE (TEXT is expanded,
// unlike a txtar file's content).
func cmdWriteline(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: writeline FILE TEXT")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(args[1]+"\n"), 0o644))
}

// presented FILE...: each FILE holds a Hermes approval request (a JSON
// object); its presented_at becomes now, as Hermes' plugin stamps it when
// it presents the request.
func cmdPresented(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: presented FILE...")
	}
	for _, f := range args {
		dec := json.NewDecoder(strings.NewReader(ts.ReadFile(f)))
		dec.UseNumber()
		var req map[string]any
		if err := dec.Decode(&req); err != nil {
			ts.Fatalf("presented %s: %v", f, err)
		}
		req["presented_at"] = float64(time.Now().UnixNano()) / 1e9
		b, err := json.Marshal(req)
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(f), append(b, '\n'), 0o644))
	}
}

// json PATH=VALUE...: the last stdout is JSON and each dotted path (array
// indexes as numbers, # for a length) has the value (strings unquoted,
// others as compact JSON). With !, none of them has.
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	var v any
	dec := json.NewDecoder(strings.NewReader(ts.ReadFile("stdout")))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		ts.Fatalf("stdout is not JSON: %v", err)
	}
	for _, arg := range args {
		path, want, ok := strings.Cut(arg, "=")
		if !ok {
			ts.Fatalf("json: %q is not PATH=VALUE", arg)
		}
		got, err := jsonPath(v, path)
		if err != nil {
			ts.Fatalf("json %s: %v", path, err)
		}
		if (got == want) == neg {
			ts.Fatalf("json %s = %q, want %s%q", path, got, map[bool]string{true: "not ", false: ""}[neg], want)
		}
	}
}

func jsonPath(v any, path string) (string, error) {
	if path != "" {
		for _, part := range strings.Split(path, ".") {
			switch x := v.(type) {
			case []any:
				if part == "#" {
					v = json.Number(strconv.Itoa(len(x)))
					continue
				}
				i, err := strconv.Atoi(part)
				if err != nil || i < 0 || i >= len(x) {
					return "", fmt.Errorf("no index %q in an array of %d", part, len(x))
				}
				v = x[i]
			case map[string]any:
				if part == "#" {
					v = json.Number(strconv.Itoa(len(x)))
					continue
				}
				e, ok := x[part]
				if !ok {
					return "", fmt.Errorf("no key %q", part)
				}
				v = e
			default:
				return "", fmt.Errorf("cannot index %T with %q", v, part)
			}
		}
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// await-waiter ID: wait (up to 20s) until a live waiter heartbeats on ID.
func cmdAwaitWaiter(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: await-waiter ID")
	}
	var state storage.Liveness
	pollStore(ts, func(ctx context.Context, s *storage.Store) bool {
		ws, err := s.WaiterState(ctx, args[0])
		ts.Check(err)
		state = ws.State
		return ws.State == storage.WaiterLive
	}, func() string { return fmt.Sprintf("no live waiter on %s (state %s)", args[0], state) })
}

// pollStore opens the script's store read-only and asks done every 50 ms
// until it says yes; after 20s it fails the script with what failed() says.
func pollStore(ts *testscript.TestScript, done func(context.Context, *storage.Store) bool, failed func() string) {
	ctx := context.Background()
	s, err := storage.Open(ctx, ts.Getenv("APPROVE_TUI_DB"), storage.Options{ReadOnly: true})
	ts.Check(err)
	defer s.Close()
	deadline := time.Now().Add(20 * time.Second)
	for !done(ctx, s) {
		if time.Now().After(deadline) {
			ts.Fatalf("%s", failed())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sleep DURATION: pause the script.
func cmdSleep(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sleep DURATION")
	}
	d, err := time.ParseDuration(args[0])
	ts.Check(err)
	time.Sleep(d)
}

// await-pending NAME: wait (up to 20s) until a pending proposal has a live
// waiter (a run or hook process submitted it and waits), and set NAME to its
// id (the newest, if several).
func cmdAwaitPending(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: await-pending NAME")
	}
	pollStore(ts, func(ctx context.Context, s *storage.Store) bool {
		recs, err := s.List(ctx, storage.ListOptions{})
		ts.Check(err)
		var found *storage.Record
		for _, r := range recs {
			ws, err := s.WaiterState(ctx, r.ApprovalID)
			ts.Check(err)
			if ws.State == storage.WaiterLive && (found == nil || r.CreatedAt > found.CreatedAt) {
				found = r
			}
		}
		if found != nil {
			ts.Setenv(args[0], found.ApprovalID)
		}
		return found != nil
	}, func() string { return "no pending proposal with a live waiter" })
}
