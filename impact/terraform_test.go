package impact

import (
	"context"
	"encoding/json"
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

// needTerraform skips the test, saying why, where terraform is not
// installed (the hand-made plans' tests read the format without it).
func needTerraform(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Skip("terraform is not installed: skipped (the tests on hand-made plan files read the format without it)")
	}
}

// terraformDir is a working directory whose state holds terraform_data
// resources a, b, keep and r (built in: no provider to download), or
// skips the test with the reason.
func terraformDir(t testing.TB) string {
	t.Helper()
	needTerraform(t)
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

// tf runs terraform in dir as the test's own hands (env: extra variables).
func tf(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return tfEnv(t, dir, nil, args...)
}

func tfEnv(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("terraform", append([]string{"-chdir=" + dir}, args...)...)
	cmd.Env = append(append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1"), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("terraform %v: %v\n%s%s", args, err, out, stderr.String())
	}
	return string(out)
}

// showCounts is the oracle: terraform show -json's resource changes,
// counted as terraform's "Plan:" line counts (run by the test only).
func showCounts(t testing.TB, dir string, env []string, plan string) []int64 {
	t.Helper()
	var show struct {
		FormatVersion   string `json:"format_version"`
		ResourceChanges []struct {
			Change struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(tfEnv(t, dir, env, "show", "-json", plan)), &show); err != nil {
		t.Fatal(err)
	}
	counts := make([]int64, 3)
	for _, rc := range show.ResourceChanges {
		for _, a := range rc.Change.Actions {
			switch a {
			case "create":
				counts[0]++
			case "update":
				counts[1]++
			case "delete":
				counts[2]++
			}
		}
	}
	return counts
}

var planLine = regexp.MustCompile(`Plan: (\d+) to add, (\d+) to change, (\d+) to destroy`)

// terraform apply PLAN previews what terraform itself says the plan does:
// its "Plan: …" line and terraform show -json are the oracles; destroys
// and replacements are named.
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
	if show := showCounts(t, dir, nil, "prod.tfplan"); !slices.Equal(show, want) {
		t.Fatalf("the oracles disagree: show -json %v, Plan line %v", show, want)
	}
	for _, cmd := range []string{"terraform apply prod.tfplan", "terraform apply -input=false -parallelism 2 prod.tfplan",
		"terraform -chdir=" + dir + " apply prod.tfplan", "terraform apply -auto-approve -- prod.tfplan",
		"terraform -chdir=" + filepath.Base(dir) + " apply prod.tfplan", "cd / && terraform -chdir=" + dir + " apply prod.tfplan"} {
		cwd := dir
		if strings.Contains(cmd, "-chdir="+filepath.Base(dir)) {
			cwd = filepath.Dir(dir)
		}
		p := Compute(context.Background(), cmd, Options{Cwd: cwd})
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

// A destroy plan is previewed whether or not terraform is on the PATH of
// the process previewing: no terraform runs.
func TestTerraformDestroyPlanWithoutTerraformOnPath(t *testing.T) {
	dir := terraformDir(t)
	tf(t, dir, "plan", "-destroy", "-input=false", "-out=destroy.plan")
	want := showCounts(t, dir, nil, "destroy.plan")
	t.Setenv("PATH", t.TempDir())
	p := Compute(context.Background(), "terraform apply destroy.plan", Options{Cwd: dir})
	if len(p.Targets) != 1 || len(p.Unknown) != 0 {
		t.Fatalf("%+v %q", p.Targets, p.Unknown)
	}
	tg := p.Targets[0]
	if got := []int64{tg.Creates, tg.Updates, tg.Destroys}; !slices.Equal(got, want) || want[2] != 4 {
		t.Errorf("%v, terraform show -json %v", got, want)
	}
	if level, _ := Raise(p); level != model.RiskHigh {
		t.Errorf("raise %q", level)
	}
}

// markerProvider builds the test provider (testdata/markerprovider): a
// binary that appends a line to marker whenever it starts. Skips, saying
// why, where its modules cannot be had.
func markerProvider(t *testing.T, out, marker string) {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("testdata", "markerprovider"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "-ldflags", "-X main.marker="+marker, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if b, err := cmd.CombinedOutput(); err != nil {
		if s := string(b); strings.Contains(s, "dial tcp") || strings.Contains(s, "no such host") || strings.Contains(s, "GOPROXY") || strings.Contains(s, "GOFLAGS=-mod=mod") {
			t.Skipf("the test provider's modules cannot be downloaded here: skipped (%s)", firstLine(s))
		}
		t.Fatalf("go build markerprovider: %v\n%s", err, b)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// A saved plan naming a provider whose binary sits in .terraform/providers
// (with the lock hash terraform computed itself) is previewed without
// starting it: the marker the provider writes when started stays absent,
// while terraform show -json, run afterwards as the oracle, starts it.
// The counts are terraform's.
func TestTerraformPlanPreviewStartsNoProvider(t *testing.T) {
	needTerraform(t)
	root := t.TempDir()
	marker := filepath.Join(root, "started")
	mirror := filepath.Join(root, "mirror")
	pkg := filepath.Join(mirror, "example.com", "test", "marker", "1.0.0", "linux_amd64")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	markerProvider(t, filepath.Join(pkg, "terraform-provider-marker_v1.0.0"), marker)
	rc := filepath.Join(root, "terraformrc")
	if err := os.WriteFile(rc, []byte(fmt.Sprintf(`provider_installation {
  filesystem_mirror {
    path    = %q
    include = ["example.com/*/*"]
  }
  direct { exclude = ["example.com/*/*"] }
}
`, mirror)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"TF_CLI_CONFIG_FILE=" + rc}
	dir := filepath.Join(root, "work")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const head = `terraform {
  required_providers {
    marker = { source = "example.com/test/marker", version = "1.0.0" }
  }
}
`
	writeTF(t, dir, head+`
resource "marker_thing" "a" { value = "one" }
resource "marker_thing" "b" { value = "two" }
resource "marker_thing" "gone" { value = "three" }
resource "terraform_data" "keep" { input = "x" }
`)
	tfEnv(t, dir, env, "init", "-input=false")
	tfEnv(t, dir, env, "apply", "-auto-approve", "-input=false")
	// The provider's binary sits in .terraform/providers itself, as a
	// repository the agent wrote would have it (init linked the mirror).
	installed := filepath.Join(dir, ".terraform", "providers", "example.com", "test", "marker", "1.0.0", "linux_amd64")
	if err := os.Remove(installed); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(installed, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(filepath.Join(pkg, "terraform-provider-marker_v1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(installed, "terraform-provider-marker_v1.0.0"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(mirror); err != nil {
		t.Fatal(err)
	}
	writeTF(t, dir, head+`
resource "marker_thing" "a" { value = "uno" }
resource "marker_thing" "b" { value = "two" }
resource "marker_thing" "new" { value = "four" }
resource "terraform_data" "keep" { input = "x" }
`)
	tfEnv(t, dir, env, "plan", "-input=false", "-out=agent.tfplan")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("terraform plan did not start the test provider: %v", err)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}

	p := Compute(context.Background(), "terraform apply agent.tfplan", Options{Cwd: dir})
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the preview started the provider binary from .terraform/providers")
	}
	if len(p.Targets) != 1 || len(p.Unknown) != 0 {
		t.Fatalf("%+v %q", p.Targets, p.Unknown)
	}
	tg := p.Targets[0]
	want := showCounts(t, dir, env, "agent.tfplan")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("terraform show -json did not start the provider: the test proves nothing (%v)", err)
	}
	if got := []int64{tg.Creates, tg.Updates, tg.Destroys}; !slices.Equal(got, want) || !slices.Equal(want, []int64{1, 1, 1}) {
		t.Errorf("%v, terraform show -json %v", got, want)
	}
	if d := []string{"destroy marker_thing.gone", "update marker_thing.a", "create marker_thing.new"}; !slices.Equal(tg.Details, d) {
		t.Errorf("details %q", tg.Details)
	}
}

// What cannot be previewed is named unknown, never no impact: no saved
// plan, a plan that is not there, options this preview does not know, a
// -chdir it cannot place.
func TestTerraformWithoutASavedPlan(t *testing.T) {
	dir := t.TempDir()
	onlyUnknown(t, dir, map[string]string{
		"terraform apply":                          "without a saved plan",
		"terraform apply -auto-approve":            "without a saved plan",
		"terraform apply -var x=1 -auto-approve":   "without a saved plan",
		"terraform destroy -auto-approve":          "terraform destroy",
		"terraform apply gone.tfplan":              "no such plan file",
		"terraform apply a.tfplan b.tfplan":        "more than one plan named",
		"terraform apply a.tfplan -auto-approve":   "more than one plan named",
		"terraform apply -frobnicate x.tfplan":     "option -frobnicate",
		"terraform -chdir apply x.tfplan":          "-chdir this preview does not read",
		"terraform -chdir=a -chdir=b apply x":      "-chdir this preview does not read",
		"terraform -chdir=/nowhere apply x.tfplan": "no such plan file",
	})
	// Words terraform takes from its environment are not the command's.
	// From the environment the command runs in, or set by the command
	// itself before terraform: either way terraform reads them.
	for env, cmds := range map[string]map[string]string{
		"TF_CLI_ARGS_apply=-var-file": {"terraform apply x.tfplan": "TF_CLI_ARGS_apply is set"},
		"TF_CLI_ARGS=-destroy":        {"terraform apply x.tfplan": "TF_CLI_ARGS is set"},
		"": {
			"TF_CLI_ARGS_apply=-destroy terraform apply x.tfplan":         "TF_CLI_ARGS_apply is set",
			"export TF_CLI_ARGS=-destroy; terraform apply x.tfplan":       "TF_CLI_ARGS is set",
			"TF_CLI_ARGS=x; export TF_CLI_ARGS; terraform apply x.tfplan": "TF_CLI_ARGS is set",
			"env TF_CLI_ARGS_apply=-destroy terraform apply x.tfplan":     "TF_CLI_ARGS_apply is set",
			"bash -c 'export TF_CLI_ARGS=-x; terraform apply x.tfplan'":   "TF_CLI_ARGS is set",
			"source ./vars.sh; terraform apply x.tfplan":                  "TF_CLI_ARGS may be set",
			"sudo terraform apply x.tfplan":                               "TF_CLI_ARGS may be set",
		},
	} {
		for cmd, why := range cmds {
			p := Compute(context.Background(), cmd, Options{Cwd: dir, Env: []string{env}})
			if len(p.Targets) != 0 || len(p.Unknown) == 0 || !strings.Contains(strings.Join(p.Unknown, "\n"), why) {
				t.Errorf("%s with %q: %+v %q, want an unknown part saying %q", cmd, env, p.Targets, p.Unknown, why)
			}
		}
	}
	// Set but empty, or set only for another command: the plan is read.
	for _, cmd := range []string{"TF_CLI_ARGS= terraform apply x.tfplan", "TF_CLI_ARGS=-x true; terraform apply x.tfplan"} {
		p := Compute(context.Background(), cmd, Options{Cwd: dir})
		if strings.Contains(strings.Join(p.Unknown, "\n"), "TF_CLI_ARGS") {
			t.Errorf("%s: %q", cmd, p.Unknown)
		}
	}
	p := Compute(context.Background(), "terraform -chdir=sub apply x.tfplan", Options{})
	if len(p.Targets) != 0 || len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], "working directory is not known") {
		t.Errorf("relative -chdir, no cwd: %+v %q", p.Targets, p.Unknown)
	}
	for _, cmd := range []string{"terraform plan", "terraform show", "terraform -chdir=x validate", "terraform -version"} {
		if p := Compute(context.Background(), cmd, Options{Cwd: dir}); len(p.Targets)+len(p.Unknown) != 0 {
			t.Errorf("%s: %+v %q", cmd, p.Targets, p.Unknown)
		}
	}
}

// Every kind of change terraform plans with its built-in resources (a
// create-before-destroy replacement, updates, a moved resource, a
// forgotten one, for_each keys holding escapes) is named as terraform show
// -json, the oracle, lists it: the same addresses, actions, previous
// addresses and deposed keys.
func TestTerraformPlanDetailsAsShowJSON(t *testing.T) {
	needTerraform(t)
	dir := t.TempDir()
	writeTF(t, dir, `
resource "terraform_data" "each" {
  for_each = toset(["plain", "esc\u001b[31mred", "nl\nline", "bidi\u202ex"])
  input    = each.key
}
resource "terraform_data" "old" { input = "o" }
resource "terraform_data" "forgot" { input = "f" }
resource "terraform_data" "cbd" {
  triggers_replace = ["1"]
  lifecycle { create_before_destroy = true }
}
`)
	tf(t, dir, "init", "-input=false")
	tf(t, dir, "apply", "-auto-approve", "-input=false")
	writeTF(t, dir, `
resource "terraform_data" "each" {
  for_each = { "plain" = "p", "esc\u001b[31mred" = "changed", "bidi\u202ex" = "bidi\u202ex" }
  input    = each.value
}
moved {
  from = terraform_data.old
  to   = terraform_data.new
}
resource "terraform_data" "new" { input = "o2" }
removed {
  from = terraform_data.forgot
  lifecycle { destroy = false }
}
resource "terraform_data" "cbd" {
  triggers_replace = ["2"]
  lifecycle { create_before_destroy = true }
}
resource "terraform_data" "added" { input = "a" }
`)
	tf(t, dir, "plan", "-input=false", "-out=p.tfplan")
	var show struct {
		ResourceChanges []struct {
			Addr   string `json:"address"`
			Prev   string `json:"previous_address"`
			Dep    string `json:"deposed"`
			Change struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(tf(t, dir, "show", "-json", "p.tfplan")), &show); err != nil {
		t.Fatal(err)
	}
	var groups [5][]string
	var counts [3]int64
	for _, rc := range show.ResourceChanges {
		addr := planAddr(rc.Addr)
		if rc.Prev != "" {
			addr += " (moved from " + planAddr(rc.Prev) + ")"
		}
		if rc.Dep != "" {
			addr += " (deposed object " + planAddr(rc.Dep) + ")"
		}
		switch strings.Join(rc.Change.Actions, ",") {
		case "delete":
			groups[0] = append(groups[0], "destroy "+addr)
			counts[2]++
		case "delete,create", "create,delete":
			groups[1] = append(groups[1], "replace "+addr)
			counts[0]++
			counts[2]++
		case "update":
			groups[2] = append(groups[2], "update "+addr)
			counts[1]++
		case "create":
			groups[3] = append(groups[3], "create "+addr)
			counts[0]++
		case "create,forget":
			groups[3] = append(groups[3], "create "+addr+" (the object it replaces is forgotten, not destroyed)")
			counts[0]++
		case "forget":
			groups[4] = append(groups[4], "forget "+addr+" (terraform stops managing it; not destroyed)")
		case "no-op", "read":
		default:
			t.Fatalf("terraform planned %q for %s: a kind this test does not know", rc.Change.Actions, rc.Addr)
		}
	}
	var want []string
	for _, g := range groups {
		slices.Sort(g)
		want = append(want, g...)
	}
	p := Compute(context.Background(), "terraform apply p.tfplan", Options{Cwd: dir})
	if len(p.Targets) != 1 || len(p.Unknown) != 0 {
		t.Fatalf("%+v %q", p.Targets, p.Unknown)
	}
	tg := p.Targets[0]
	if got := [3]int64{tg.Creates, tg.Updates, tg.Destroys}; got != counts || counts != [3]int64{2, 3, 2} {
		t.Errorf("counts %v, terraform show -json %v", got, counts)
	}
	if !slices.Equal(tg.Details, want) || !slices.Contains(want, "update terraform_data.new (moved from terraform_data.old)") ||
		len(groups[4]) != 1 {
		t.Errorf("details\n%q\nterraform show -json\n%q", tg.Details, want)
	}
}

// A provisioner in the plan's configuration runs a program as terraform
// applies: the preview runs nothing, counts the plan, and names the
// provisioner as what it cannot judge.
func TestTerraformPlanWithProvisioner(t *testing.T) {
	needTerraform(t)
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	writeTF(t, dir, fmt.Sprintf(`
resource "terraform_data" "run" {
  input = "x"
  provisioner "local-exec" { command = "touch %s" }
}
`, ran))
	tf(t, dir, "init", "-input=false")
	tf(t, dir, "plan", "-input=false", "-out=p.tfplan")
	p := Compute(context.Background(), "terraform apply p.tfplan", Options{Cwd: dir})
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the provisioner ran")
	}
	want := showCounts(t, dir, nil, "p.tfplan")
	if len(p.Targets) != 1 || len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], "has provisioners") {
		t.Fatalf("%+v %q", p.Targets, p.Unknown)
	}
	if tg := p.Targets[0]; !slices.Equal([]int64{tg.Creates, tg.Updates, tg.Destroys}, want) {
		t.Errorf("%+v, terraform show -json %v", tg, want)
	}
}
