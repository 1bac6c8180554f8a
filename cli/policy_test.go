package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// runAs executes the CLI in-process as actor (nil: this OS user), as
// another surface does (ExecuteAs), with or without a terminal.
func runAs(t *testing.T, db string, actor *model.Actor, tty bool, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := newApp(strings.NewReader(stdin), &out, &errb)
	a.isTTY = func() bool { return tty }
	a.getenv = func(string) string { return "" }
	a.as = actor
	code := a.execute(context.Background(), append([]string{"--db", db}, args...))
	return code, out.String(), errb.String()
}

const twoPersonPolicy = `groups:
  dba: [dba-ann, dba-ben]
policy:
  - match: {risk: high, session: "agent:prod:*"}
    approvals: 2
    from: {dba: 1}
  - match: {command: "*DROP*"}
    approvals: 2
    from: {dba: 2}
`

// Two people approve a proposal under a two-person rule: the first vote
// exits 7 and leaves it pending, the second approves it, and show --json
// has both votes; a second vote by one person, a vote by whoever asked for
// it, and a vote that cannot count are refused, each saying why.
func TestPolicyVotes(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	file := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(file, []byte(twoPersonPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runAs(t, db, nil, false, "", "init"); code != 0 {
		t.Fatal(stderr)
	}
	if code, stdout, stderr := runAs(t, db, nil, false, "", "policy", "set", file); code != 0 ||
		!strings.HasPrefix(stdout, "policy v1 in force (sha256 ") {
		t.Fatalf("policy set: %d %q %q", code, stdout, stderr)
	}
	// Another surface reads no file of this host's.
	ann := &model.Actor{Surface: model.SurfaceSSH, Name: "dba-ann@laptop (SHA256:annkey)", Person: "dba-ann", Key: "SHA256:annkey"}
	if code, _, stderr := runAs(t, db, ann, false, "", "policy", "set", file); code != ExitUsage ||
		!strings.Contains(stderr, "a policy file is not taken here") {
		t.Fatalf("policy set over ssh: %d %q", code, stderr)
	}
	// Submitted by this OS user's agent: this user is a requester.
	_, id, _ := runAs(t, db, nil, false, "", "submit", "--session", "agent:prod:db", "--requester", "ci-bot", "--", "rm", "-rf", "/srv/data")
	id = strings.TrimSpace(id)

	code, stdout, stderr := runAs(t, db, nil, false, "", "approve", "--confirm", id, "--", id)
	if code != ExitError || stdout != "" || !strings.Contains(stderr, "nobody approves a proposal of their own agent") {
		t.Fatalf("self-approval: %d %q %q", code, stdout, stderr)
	}

	// On a terminal the requester is told before typing.
	code, _, stderr = runAs(t, db, nil, true, id+"\n", "approve", "--", id)
	if code != ExitError || !strings.Contains(stderr, "asked for it: the store refuses your vote (self_approval); another approver must.") ||
		!strings.Contains(stderr, "Nobody has voted yet; still needed: one more approver from dba and one more from anyone.") {
		t.Fatalf("self-approval on a terminal: %d %q", code, stderr)
	}

	cy := &model.Actor{Surface: model.SurfaceCLI, Name: "dev-cy@h2", Person: "dev-cy"}
	code, stdout, stderr = runAs(t, db, cy, false, "", "approve", "--confirm", id, "--", id)
	if want := "vote recorded on " + id + ": 1 of 2 approvals (dev-cy@h2 via cli); still needed: one more approver from dba\n"; code != ExitVoted || stdout != want || stderr != "" {
		t.Fatalf("first vote: %d %q %q, want %q", code, stdout, stderr, want)
	}
	// The same person from another host and surface: one person counts once.
	cy2 := &model.Actor{Surface: model.SurfaceSSH, Name: "dev-cy@h3", Person: "dev-cy"}
	code, _, stderr = runAs(t, db, cy2, false, "", "approve", "--confirm", id, "--", id)
	if code != ExitError || !strings.Contains(stderr, "dev-cy voted already (as dev-cy@h2 via cli, by name)") {
		t.Fatalf("second vote by one person: %d %q", code, stderr)
	}
	// The place left is dba's: a vote from outside it cannot count.
	eve := &model.Actor{Surface: model.SurfaceCLI, Name: "eve@h4", Person: "eve"}
	code, _, stderr = runAs(t, db, eve, false, "", "approve", "--confirm", id, "--", id)
	if code != ExitError || !strings.Contains(stderr, "eve is not in that group: the vote would not count") {
		t.Fatalf("not eligible: %d %q", code, stderr)
	}

	// list --json carries the votes that count and what is still needed.
	code, stdout, _ = runAs(t, db, nil, false, "", "--json", "list")
	noDuplicateKeys(t, stdout)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(stdout), &rows); code != 0 || err != nil || len(rows) != 1 {
		t.Fatalf("list --json: %d %v %s", code, err, stdout)
	}
	if votes, _ := rows[0]["votes"].([]any); len(votes) != 1 || rows[0]["approvals_needed"] != 1.0 || rows[0]["needed"] != "one more approver from dba" {
		t.Fatalf("list --json row: %v", rows[0])
	}

	// On a terminal, the approver is told it is a vote before typing.
	code, stdout, stderr = runAs(t, db, ann, true, id+"\n", "approve", "--", id)
	if code != ExitOK || stdout != "approved "+id+"\n" {
		t.Fatalf("second vote: %d %q %q", code, stdout, stderr)
	}
	for _, want := range []string{
		"This approval is a vote: under policy v1 ",
		id + " needs 2 approvers, at least one from dba.",
		"So far 1 of 2 approvals (dev-cy@h2 via cli); still needed: one more approver from dba.",
		"Not by ci-bot, ",
		"Type the approval id to approve: ",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("terminal approve: stderr lacks %q:\n%s", want, stderr)
		}
	}
	if i, j := strings.Index(stderr, "This approval is a vote"), strings.Index(stderr, "Type the approval id"); i < 0 || j < i {
		t.Errorf("the vote is said after the prompt:\n%s", stderr)
	}

	code, stdout, _ = runAs(t, db, nil, false, "", "--json", "show", "--", id)
	noDuplicateKeys(t, stdout)
	var rec map[string]any
	if err := json.Unmarshal([]byte(stdout), &rec); code != 0 || err != nil {
		t.Fatalf("show --json: %d %v", code, err)
	}
	votes, _ := rec["votes"].([]any)
	var actors []string
	for _, v := range votes {
		m := v.(map[string]any)
		actors = append(actors, m["actor"].(string))
		if m["ended"] != "consumed" || m["counts"] != false || len(m["payload_sha256"].(string)) != 64 || m["at"] == nil {
			t.Errorf("vote %v", m)
		}
	}
	if want := []string{"dev-cy@h2 via cli", "dba-ann@laptop (SHA256:annkey) via ssh"}; !slices.Equal(actors, want) {
		t.Errorf("votes by %q, want %q", actors, want)
	}
	if rec["status"] != "consumed" || rec["policy_version"] != "approve-tui/1" || rec["approvals_needed"] != 0.0 || rec["approvals_required"] != 2.0 ||
		rec["approval_policy_version"] != 1.0 || rec["consumed_by"] != "dev-cy@h2 via cli, dba-ann@laptop (SHA256:annkey) via ssh" {
		t.Errorf("show --json: %v", rec)
	}
	// The text says each vote and that it ended with the consume.
	_, stdout, _ = runAs(t, db, nil, false, "", "show", "--", id)
	if !strings.Contains(stdout, "votes:         dev-cy@h2 via cli ") || !strings.Contains(stdout, "dba-ann@laptop (SHA256:annkey) via ssh 0s ago") ||
		strings.Count(stdout, ": ended: consumed") != 2 {
		t.Errorf("show: %s", stdout)
	}

	// Both places kept for dba: the first vote of a member exits 7 with
	// --json printing the proposal with its vote.
	_, id2, _ := runAs(t, db, nil, false, "", "submit", "--session", "agent:dev:db", "--", "psql", "-c", "DROP TABLE users")
	id2 = strings.TrimSpace(id2)
	code, stdout, _ = runAs(t, db, ann, false, "", "--json", "approve", "--confirm", id2, "--", id2)
	rec = nil
	if err := json.Unmarshal([]byte(stdout), &rec); code != ExitVoted || err != nil || rec["status"] != "pending" ||
		rec["needed"] != "one more approver from dba" || len(rec["votes"].([]any)) != 1 {
		t.Fatalf("--json vote: %d %v %s", code, err, stdout)
	}
	// explain says the rules, the votes and who may not approve it.
	code, stdout, _ = runAs(t, db, nil, false, "", "policy", "explain", "--", id2)
	for _, want := range []string{
		"rule 1 (line 4): does not match\n",
		`    session "agent:dev:db" does not match "agent:prod:*"` + "\n",
		"rule 2 (line 7): matches; it asks for 2 approvers, at least 2 from dba\n",
		"needs 2 approvers, at least 2 from dba (rule 2)\n",
		"votes so far: 1 of 2 approvals\n    dba-ann@laptop (SHA256:annkey) via ssh 0s ago\n",
		"still needed: one more approver from dba\n",
		"may not approve it: ",
	} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("explain: %d, lacks %q:\n%s", code, want, stdout)
		}
	}
	// The same key under another comment is the same approver.
	annAgain := &model.Actor{Surface: model.SurfaceSSH, Name: "ann-laptop (SHA256:annkey)", Person: "ann-laptop", Key: "SHA256:annkey"}
	if code, _, stderr := runAs(t, db, annAgain, false, "", "approve", "--confirm", id2, "--", id2); code != ExitError ||
		!strings.Contains(stderr, "by key SHA256:annkey") {
		t.Fatalf("same key: %d %q", code, stderr)
	}
	ben := &model.Actor{Surface: model.SurfaceCLI, Name: "dba-ben@h5", Person: "dba-ben"}
	if code, stdout, stderr := runAs(t, db, ben, false, "", "approve", "--confirm", id2, "--", id2); code != 0 || stdout != "approved "+id2+"\n" {
		t.Fatalf("completing vote: %d %q %q", code, stdout, stderr)
	}
}

// noDuplicateKeys fails when an object of the JSON text has a key twice
// (the quorum's keys must not shadow the payload's).
func noDuplicateKeys(t *testing.T, text string) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(text))
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{obj: v == '{', keys: map[string]bool{}, key: v == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.obj && top.key {
				if top.keys[v] {
					t.Fatalf("key %q twice in %s", v, text)
				}
				top.keys[v] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.obj {
			top.key = true
		}
	}
}

// The policy commands say their exit codes, in lines that fit 80 cells.
func TestPolicyHelp(t *testing.T) {
	for cmd, want := range map[string][]int{
		"policy set":     {0, 1, 2, 6},
		"policy show":    {0, 1, 2, 6},
		"policy explain": {0, 1, 2, 3, 6},
		"approve":        {0, 1, 2, 3, 4, 5, 6, 7, 130},
	} {
		help := helpOf(t, strings.Fields(cmd)...)
		if got := exitCodesIn(help); !slices.Equal(got, want) {
			t.Errorf("%s --help: exit codes %v, want %v", cmd, got, want)
		}
		for _, l := range strings.Split(help[:strings.Index(help, "\nUsage:")], "\n") {
			if cells(l) > 80 && !strings.HasPrefix(l, "  approve-tui ") {
				t.Errorf("%s --help: a line of %d cells: %q", cmd, cells(l), l)
			}
		}
	}
	if h := helpOf(t, "approve"); !strings.Contains(h, "7    a vote recorded") || !strings.Contains(h, "duplicate_approver") {
		t.Errorf("approve --help does not say the vote:\n%s", h)
	}
}

// A policy string is hostile: what the store holds is printed sanitised.
func TestPolicyShowSanitises(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	file := filepath.Join(dir, "policy.yaml")
	// A raw escape in a comment, and one in a glob by YAML's own \e.
	evil := "# \x1b]0;owned\x07 \u202e\npolicy:\n  - match: {command: \"rm*\\e]0;x\\a\"}\n    approvals: 2\n"
	if err := os.WriteFile(file, []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	runAs(t, db, nil, false, "", "init")
	if code, stdout, stderr := runAs(t, db, nil, false, "", "policy", "set", file); code != 0 {
		t.Fatalf("set: %d %q %q", code, stdout, stderr)
	}
	var out, errb bytes.Buffer
	a := newApp(strings.NewReader(""), &out, &errb)
	a.getenv = func(string) string { return "" }
	// The raw writer: what the sanitising helpers let through, before the
	// terminal guard.
	a.out = &out
	if code := a.execute(context.Background(), []string{"--db", db, "policy", "show"}); code != 0 {
		t.Fatalf("show: %d %s", code, errb.String())
	}
	if s := out.String(); strings.ContainsAny(s, "\x1b\x07\u202e") || !strings.Contains(s, `command "rm*\x1b]0;x\x07"`) || !strings.Contains(s, `# \x1b]0;owned\x07 <U+202E>`) {
		t.Fatalf("show printed: %q", s)
	}
}
