package impact

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// terraformTimeout bounds terraform show -json: it loads the providers'
// schemas, which takes a few seconds for the big ones.
const terraformTimeout = 10 * time.Second

// terraformValues are terraform apply's options that take a value as the
// next word (terraform's flags also take -name=value).
var terraformValues = set("-var", "-var-file", "-target", "-replace", "-backup", "-lock-timeout", "-parallelism", "-state", "-state-out")

// terraformArgs: terraform [-chdir=DIR] apply [options] PLAN applies a saved
// plan, whose creates, updates and destroys terraform show -json lists.
// An apply without a saved plan, and terraform destroy, plan as they run:
// they cannot be previewed without planning, which takes locks.
func terraformArgs(a *analysis, _ string, args []string) {
	dir := a.cwd
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if d, ok := strings.CutPrefix(args[0], "-chdir="); ok {
			dir, _ = a.abs(d)
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return
	}
	sub, rest := args[0], args[1:]
	if sub == "destroy" {
		a.unknown = append(a.unknown, "terraform destroy (plan it with -destroy -out=FILE and propose applying that plan)")
		return
	}
	if sub != "apply" {
		return
	}
	var plan string
	for i := 0; i < len(rest); i++ {
		arg := rest[i]
		name, _, hasValue := strings.Cut(strings.Replace(arg, "--", "-", 1), "=")
		switch {
		case !strings.HasPrefix(arg, "-"):
			plan = arg
		case terraformValues[name] && !hasValue:
			i++
		}
	}
	if plan == "" {
		a.unknown = append(a.unknown, "terraform apply without a saved plan (plan with -out=FILE and propose applying that)")
		return
	}
	if dir == "" {
		a.unknown = append(a.unknown, "terraform apply "+plan+" (the working directory is not known)")
		return
	}
	path := absolute(plan, dir)
	t := Target{Path: path, Op: model.OpApply, LiveLinks: []string{}, Complete: true}
	if _, err := os.Stat(path); err != nil {
		t.Note = "no such plan file"
		a.targets = append(a.targets, t)
		return
	}
	t.Exists = true
	if err := terraformPlan(a.ctx, dir, path, &t); err != nil {
		a.unknown = append(a.unknown, "terraform apply "+plan+" ("+err.Error()+")")
		return
	}
	if a.o.Cwd != "" && !within(path, a.o.Cwd) {
		t.Outside = true
	}
	a.targets = append(a.targets, t)
}

// terraformShow is the part of terraform show -json's plan representation
// a preview reads (format_version 1.x).
type terraformShow struct {
	FormatVersion   string `json:"format_version"`
	Errored         bool   `json:"errored"`
	ResourceChanges []struct {
		Address string `json:"address"`
		Change  struct {
			Actions []string `json:"actions"`
		} `json:"change"`
	} `json:"resource_changes"`
}

// terraformPlan counts plan's changes into t, as terraform show -json
// (read-only, no lock: it reads the plan file) lists them.
func terraformPlan(ctx context.Context, dir, plan string, t *Target) error {
	if _, err := exec.LookPath("terraform"); err != nil {
		return fmt.Errorf("terraform is not installed here")
	}
	ctx, cancel := context.WithTimeout(ctx, terraformTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "terraform", "-chdir="+dir, "show", "-json", "-no-color", plan)
	cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("terraform show took longer than %s", terraformTimeout)
		}
		return fmt.Errorf("terraform show failed: %s", firstLine(errb.String(), err.Error()))
	}
	var show terraformShow
	if err := json.Unmarshal(out.Bytes(), &show); err != nil {
		return fmt.Errorf("terraform show -json printed no plan: %v", err)
	}
	if !strings.HasPrefix(show.FormatVersion, "1.") {
		return fmt.Errorf("terraform show -json format %q is not one this preview reads", show.FormatVersion)
	}
	countPlan(&show, t)
	return nil
}

// countPlan counts as terraform's "Plan: 1 to add, 2 to change, 3 to
// destroy" does, and names destroys first, then replacements, updates
// and creates.
func countPlan(show *terraformShow, t *Target) {
	var destroys, replaces, updates, creates []string
	for _, rc := range show.ResourceChanges {
		switch acts := strings.Join(rc.Change.Actions, ","); acts {
		case "create":
			t.Creates++
			creates = append(creates, "create "+rc.Address)
		case "update":
			t.Updates++
			updates = append(updates, "update "+rc.Address)
		case "delete":
			t.Destroys++
			destroys = append(destroys, "destroy "+rc.Address)
		case "delete,create", "create,delete":
			t.Creates++
			t.Destroys++
			replaces = append(replaces, "replace "+rc.Address)
		}
	}
	all := slices.Concat(destroys, replaces, updates, creates)
	t.Details = capDetails(all, int64(len(all)))
	if show.Errored {
		t.Note = "the plan errored: terraform will not apply it"
	}
}

// firstLine is s's first non-empty line (or def).
func firstLine(s, def string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && strings.Trim(l, "╷│╵ ") != "" {
			return strings.TrimSpace(strings.TrimLeft(l, "│ "))
		}
	}
	return def
}
