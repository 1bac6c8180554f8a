package storage

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// The test binary doubles as the other process of multi-process tests: with
// STORAGE_TEST_ROLE set it runs that role instead of the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("STORAGE_TEST_ROLE") {
	case "":
		os.Exit(runBothBackends(m))
	case "consume-all", "consume-interop", "vote-all":
		role, worker := os.Getenv("STORAGE_TEST_ROLE"), os.Getenv("STORAGE_TEST_WORKER")
		name := "worker-" + worker
		if role == "vote-all" {
			name += "@host-" + worker // a person of its own
		}
		os.Exit(roleConsumeAll(os.Getenv("STORAGE_TEST_DB"), worker, os.Getenv("STORAGE_TEST_SYNC"), os.Getenv("STORAGE_TEST_PACE"),
			role != "consume-all", name))
	case "answer-all":
		os.Exit(roleAnswerAll(os.Getenv("STORAGE_TEST_DB"), os.Getenv("STORAGE_TEST_WORKER")))
	case "hold-lock":
		os.Exit(roleHoldLock(os.Getenv("STORAGE_TEST_DB")))
	case "take-all":
		os.Exit(roleTakeAll(os.Getenv("STORAGE_TEST_DB"), os.Getenv("STORAGE_TEST_WORKER")))
	default:
		fmt.Fprintln(os.Stderr, "unknown role")
		os.Exit(2)
	}
}

// roleConsumeAll reads ids on stdin (one per line, until a "go" line so
// that all workers start together) and tries to consume each, printing
// "won ID" or "lost ID by WINNER" or "error ID ERR". With announce it first
// prints "ready" once its store is open; with a pace it sleeps up to that
// long before each attempt, as a console does between decisions (without
// it, whichever process holds the write lock re-takes it on every commit
// while the others back off in SQLite's busy handler, and the "race" is one
// process consuming nearly everything).
//
// Under a policy (the vote-all role) the worker is a person of its own
// (name "worker-N@host-N"), and it also prints "voted ID" (recorded; more
// are needed; "won" is then the vote that completed the quorum) and
// "refused ID CODE"; "lost ID by WHO" names every approver.
func roleConsumeAll(path, worker, syncMode, pace string, announce bool, name string) int {
	s, err := Open(context.Background(), path, Options{BusyTimeout: time.Minute, Synchronous: syncMode})
	if err != nil {
		fmt.Println("open-error", err)
		return 1
	}
	defer s.Close()
	maxPause, _ := time.ParseDuration(pace)
	actor := model.Actor{Surface: model.SurfaceCLI, Name: name}
	if person, _, ok := strings.Cut(name, "@"); ok {
		actor.Person = person // a person of its own (vote-all)
	}
	if announce {
		fmt.Println("ready")
	}
	in := bufio.NewScanner(os.Stdin)
	var ids []string
	for in.Scan() && in.Text() != "go" {
		ids = append(ids, in.Text())
	}
	rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for _, id := range ids {
		if maxPause > 0 {
			time.Sleep(time.Duration(rand.Int64N(int64(maxPause))))
		}
		_, err := s.Consume(context.Background(), id, id, actor)
		var (
			np *NotPendingError
			vr *VoteRecorded
			rf *RefusedError
		)
		switch {
		case err == nil:
			fmt.Fprintln(out, "won", id)
		case errors.As(err, &vr):
			fmt.Fprintln(out, "voted", id)
		case errors.As(err, &np):
			fmt.Fprintln(out, "lost", id, "by", np.By)
		case errors.As(err, &rf):
			fmt.Fprintln(out, "refused", id, rf.Code)
		default:
			fmt.Fprintln(out, "error", id, strings.ReplaceAll(err.Error(), "\n", " "))
		}
	}
	return 0
}

// roleHoldLock takes the write lock, says "locked", and holds it until its
// stdin closes.
func roleHoldLock(path string) int {
	if IsPostgresURL(path) {
		return roleHoldLockPostgres(path)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return 1
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		return 1
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		fmt.Println("lock-error", err)
		return 1
	}
	fmt.Println("locked")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
	return 0
}

// helperProcess starts the test binary in a role.
func helperProcess(t testing.TB, role, db string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"STORAGE_TEST_ROLE=" + role, "STORAGE_TEST_DB=" + db}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

// roleHoldLockPostgres locks the approval table against every writer (reads
// go on), says "locked", and holds the lock until its stdin closes.
func roleHoldLockPostgres(url string) int {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return 1
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		fmt.Println("lock-error", err)
		return 1
	}
	if _, err := tx.Exec(`LOCK TABLE gateway_approvals IN EXCLUSIVE MODE`); err != nil {
		fmt.Println("lock-error", err)
		return 1
	}
	fmt.Println("locked")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	_ = tx.Rollback()
	return 0
}

// roleTakeAll says "ready" once its store is open, reads ids on stdin
// until a "go" line, and tries to take each one's parked approval for the
// call "echo parked" of the test proposal, printing "won ID",
// "taken ID by WHO" or "error ID ERR".
func roleTakeAll(path, worker string) int {
	s, err := Open(context.Background(), path, Options{BusyTimeout: time.Minute})
	if err != nil {
		fmt.Println("open-error", err)
		return 1
	}
	defer s.Close()
	fmt.Println("ready")
	actor := model.Actor{Surface: model.SurfaceRunner, Name: "worker-" + worker}
	m := model.Match{Requester: "tester", SessionKey: "agent:main:test", Command: "echo parked", Cwd: "/srv/app"}
	in := bufio.NewScanner(os.Stdin)
	var ids []string
	for in.Scan() && in.Text() != "go" {
		ids = append(ids, in.Text())
	}
	rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for _, id := range ids {
		_, err := s.Take(context.Background(), id, m, actor)
		var tk *TakenError
		switch {
		case err == nil:
			fmt.Fprintln(out, "won", id)
		case errors.As(err, &tk):
			fmt.Fprintln(out, "taken", id, "by", tk.By)
		default:
			fmt.Fprintln(out, "error", id, strings.ReplaceAll(err.Error(), "\n", " "))
		}
	}
	return 0
}
