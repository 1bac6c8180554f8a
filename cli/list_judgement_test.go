package cli

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// list --json carries each proposal's judgement, the same object show
// --json gives for it.
func TestListJSONHasTheJudgement(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	if code, _, e := run(t, db, false, "", "init"); code != 0 {
		t.Fatal(e)
	}
	ids := map[string]string{}
	for _, c := range []string{"git status", "shred -u secrets.txt", "terraform destroy -auto-approve"} {
		code, out, e := run(t, db, false, "", "submit", "--cwd", dir, "--", c)
		if code != 0 {
			t.Fatalf("submit %q: %s", c, e)
		}
		ids[strings.TrimSpace(out)] = c
	}
	code, out, e := run(t, db, false, "", "list", "--json")
	if code != 0 {
		t.Fatalf("list --json: %s", e)
	}
	noDuplicateKeys(t, out)
	var rows []struct {
		ID        string          `json:"approval_id"`
		Command   string          `json:"command"`
		Judgement json.RawMessage `json:"judgement"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != len(ids) {
		t.Fatalf("list --json: %v: %s", err, out)
	}
	for _, r := range rows {
		if len(r.Judgement) == 0 {
			t.Fatalf("list --json: %s has no judgement: %s", r.ID, out)
		}
		code, sout, e := run(t, db, false, "", "show", "--json", r.ID)
		if code != 0 {
			t.Fatalf("show --json: %s", e)
		}
		var show struct {
			Judgement json.RawMessage `json:"judgement"`
		}
		if err := json.Unmarshal([]byte(sout), &show); err != nil {
			t.Fatal(err)
		}
		var fromList, fromShow classifyObject
		if err := json.Unmarshal(r.Judgement, &fromList); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(show.Judgement, &fromShow); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromList, fromShow) {
			t.Errorf("%q: list --json judgement %+v, show --json %+v", ids[r.ID], fromList, fromShow)
		}
		// The same keys in the same order.
		if string(r.Judgement) != string(show.Judgement) {
			t.Errorf("%q: list --json judgement\n%s\nshow --json\n%s", ids[r.ID], r.Judgement, show.Judgement)
		}
		if fromList.Level == "" || len(fromList.Findings) == 0 {
			t.Errorf("%q: judgement %+v", ids[r.ID], fromList)
		}
	}
}
