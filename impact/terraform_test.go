package impact

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// terraformDir is a working directory whose state holds terraform_data
// resources a, b and keep (built in: no provider to download), or skips
// the test with the reason.
func terraformDir(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Skip("terraform is not installed: skipped (TestTerraformPlanCounts reads the format)")
	}
	dir := t.TempDir()
	writeTF(t, dir, `
resource "terraform_data" "a" { input = "one" }
resource "terraform_data" "b" { input = "two" }
resource "terraform_data" "keep" { input = "three" }
resource "terraform_data" "r" { triggers_replace = ["one"] }
`)
	tf(t, dir, "init", "-input=false")
	tf(t, dir, "apply", "-auto-approve", "-input=false")
	return dir
}

func writeTF(t testing.TB, dir, config string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tf runs terraform in dir as the test's own hands.
func tf(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("terraform", append([]string{"-chdir=" + dir}, args...)...)
	cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("terraform %v: %v\n%s", args, err, out)
	}
	return string(out)
}

var planLine = regexp.MustCompile(`Plan: (\d+) to add, (\d+) to change, (\d+) to destroy`)

// terraform apply PLAN previews what terraform itself says the plan does:
// its "Plan: …" line is the oracle; destroys and replacements are named.
func TestTerraformApplyAsTerraformPlansIt(t *testing.T) {
	dir := terraformDir(t)
	writeTF(t, dir, `
resource "terraform_data" "a" { input = "changed" }
resource "terraform_data" "keep" { input = "three" }
resource "terraform_data" "r" { triggers_replace = ["two"] }
resource "terraform_data" "c" { input = "new" }
`)
	out := tf(t, dir, "plan", "-input=false", "-no-color", "-out=prod.tfplan")
	m := planLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no Plan line in\n%s", out)
	}
	want := make([]int64, 3)
	for i := range want {
		want[i], _ = strconv.ParseInt(m[i+1], 10, 64)
	}
	for _, cmd := range []string{"terraform apply prod.tfplan", "terraform apply -input=false -parallelism 2 prod.tfplan",
		"terraform -chdir=" + dir + " apply prod.tfplan"} {
		p := Compute(context.Background(), cmd, Options{Cwd: dir})
		if len(p.Targets) != 1 || len(p.Unknown) != 0 {
			t.Fatalf("%s: %+v %q", cmd, p.Targets, p.Unknown)
		}
		tg := p.Targets[0]
		if got := []int64{tg.Creates, tg.Updates, tg.Destroys}; !slices.Equal(got, want) {
			t.Errorf("%s: %v, terraform plans %v", cmd, got, want)
		}
		wantDetails := []string{"destroy terraform_data.b", "replace terraform_data.r", "update terraform_data.a", "create terraform_data.c"}
		if tg.Op != model.OpApply || tg.Path != filepath.Join(dir, "prod.tfplan") || !slices.Equal(tg.Details, wantDetails) {
			t.Errorf("%s: %+v", cmd, tg)
		}
		if s := fmt.Sprintf("applies prod.tfplan: %d to add, %d to change, %d to destroy (destroy terraform_data.b)", want[0], want[1], want[2]); p.Summary != s {
			t.Errorf("summary %q, want %q", p.Summary, s)
		}
		if level, why := Raise(p); level != model.RiskHigh || why != "impact: the plan destroys 2 resources" {
			t.Errorf("raise %q %q", level, why)
		}
	}
	// A plan written again at the same path, destroying more, grew.
	approved := Compute(context.Background(), "terraform apply prod.tfplan", Options{Cwd: dir})
	writeTF(t, dir, `resource "terraform_data" "c" { input = "new" }`)
	tf(t, dir, "plan", "-input=false", "-out=prod.tfplan")
	grew := Grew(approved, Compute(context.Background(), "terraform apply prod.tfplan", Options{Cwd: dir}))
	if len(grew) == 0 || !strings.Contains(grew[0], "to destroy now") || !slices.ContainsFunc(grew, func(s string) bool {
		return strings.Contains(s, "destroy terraform_data.keep, not in the preview approved")
	}) {
		t.Errorf("grew %q", grew)
	}
	// The preview read the plan: the state is as it was.
	if !strings.Contains(tf(t, dir, "state", "list"), "terraform_data.keep") {
		t.Fatal("the preview changed the state")
	}
}

// What cannot be previewed without planning is named; a plan that is
// not there is a target that does not exist.
func TestTerraformWithoutASavedPlan(t *testing.T) {
	dir := t.TempDir()
	onlyUnknown(t, dir, map[string]string{
		"terraform apply":                        "without a saved plan",
		"terraform apply -auto-approve":          "without a saved plan",
		"terraform apply -var x=1 -auto-approve": "without a saved plan",
		"terraform destroy -auto-approve":        "terraform destroy",
	})
	p := Compute(context.Background(), "terraform apply gone.tfplan", Options{Cwd: dir})
	if len(p.Targets) != 1 || p.Targets[0].Exists || p.Targets[0].Note != "no such plan file" {
		t.Errorf("missing plan: %+v", p.Targets)
	}
	for _, cmd := range []string{"terraform plan", "terraform show", "terraform -chdir=x validate"} {
		if p := Compute(context.Background(), cmd, Options{Cwd: dir}); len(p.Targets)+len(p.Unknown) != 0 {
			t.Errorf("%s: %+v %q", cmd, p.Targets, p.Unknown)
		}
	}
}

// The plan representation is read as documented: replacements count as a
// create and a destroy, reads and no-ops are nothing, the names are cut
// at MaxImpactDetails.
func TestTerraformPlanCounts(t *testing.T) {
	show := &terraformShow{FormatVersion: "1.2"}
	add := func(addr string, actions ...string) {
		rc := show.ResourceChanges
		rc = append(rc, struct {
			Address string `json:"address"`
			Change  struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		}{Address: addr})
		rc[len(rc)-1].Change.Actions = actions
		show.ResourceChanges = rc
	}
	add("aws_instance.web", "delete", "create")
	add("aws_instance.db", "create", "delete")
	add("data.aws_ami.x", "read")
	add("aws_s3_bucket.logs", "no-op")
	add("aws_iam_role.r", "update")
	for i := range 30 {
		add(fmt.Sprintf("aws_route.r[%d]", i), "delete")
	}
	var tg Target
	countPlan(show, &tg)
	if tg.Creates != 2 || tg.Updates != 1 || tg.Destroys != 32 {
		t.Errorf("counts %d %d %d", tg.Creates, tg.Updates, tg.Destroys)
	}
	if len(tg.Details) != model.MaxImpactDetails || tg.Details[0] != "destroy aws_route.r[0]" || tg.Details[len(tg.Details)-1] != "and 14 more" {
		t.Errorf("details %q", tg.Details)
	}
}
