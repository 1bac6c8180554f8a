package impact

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
)

// terraformValueFlags are terraform apply's options that take a value; as
// Go's flag package (terraform's) reads them, "-name value" takes the next
// word and "-name=value" does not.
var terraformValueFlags = set("backup", "lock-timeout", "parallelism", "state", "state-out", "var", "var-file",
	"target", "replace", "exclude")

// terraformBoolFlags are terraform apply's options that never take the
// next word.
var terraformBoolFlags = set("auto-approve", "compact-warnings", "destroy", "lock", "input", "no-color",
	"refresh", "refresh-only", "json", "allow-deferral")

// terraformArgs: terraform [-chdir=DIR] apply [options] PLAN applies a saved
// plan, whose creates, updates and destroys the preview reads from the plan
// file itself (readPlan): no terraform and no provider runs. An apply
// without a saved plan, and terraform destroy, plan as they run: they
// cannot be previewed without planning, which runs the providers and takes
// locks. Every apply that cannot be read is named unknown, never harmless.
func terraformArgs(a *analysis, _ string, args []string) {
	dir, chdir := a.cwd, ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		arg := args[0]
		args = args[1:]
		d, ok := strings.CutPrefix(strings.Replace(arg, "--", "-", 1), "-chdir")
		if !ok {
			continue // -version, -help: terraform prints and stops
		}
		d, hasValue := strings.CutPrefix(d, "=")
		if !hasValue || d == "" || chdir != "" {
			a.unknown = append(a.unknown, "terraform "+arg+" (a -chdir this preview does not read)")
			return
		}
		chdir = d
		if dir, ok = a.abs(d); !ok {
			dir = ""
		}
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
		if !terraformReadOnly(sub, rest) {
			a.unknown = append(a.unknown, "terraform "+strings.Join(args, " ")+" (it may change state or files, and has no plan to preview)")
		}
		return
	}
	plans, bad := terraformOperands(rest)
	switch {
	case bad != "":
		a.unknown = append(a.unknown, "terraform apply with option "+bad+" (an option this preview does not know)")
		return
	case len(plans) == 0:
		a.unknown = append(a.unknown, "terraform apply without a saved plan (plan with -out=FILE and propose applying that)")
		return
	case len(plans) > 1:
		a.unknown = append(a.unknown, "terraform apply "+strings.Join(plans, " ")+" (more than one plan named)")
		return
	}
	plan := plans[0]
	for _, v := range []string{"TF_CLI_ARGS", "TF_CLI_ARGS_apply"} {
		// terraform adds these words to the command's own: which plan it
		// applies, if any, is not the command's alone. Read as the shell
		// passes them: the environment the command runs in, then what the
		// command exports or sets before terraform.
		// (An entry missing from a.env is a variable the command's
		// environment does not have.)
		switch e, ok := a.env[v]; {
		case ok && e.state == varUnknown:
			a.unknown = append(a.unknown, "terraform apply "+plan+" ("+v+" may be set: it would add words to the command)")
			return
		case e.state == varSet && e.val != "":
			a.unknown = append(a.unknown, "terraform apply "+plan+" ("+v+" is set: it adds words to the command)")
			return
		}
	}
	if dir == "" {
		why := " (the working directory is not known)"
		if chdir != "" {
			why = " (in -chdir=" + chdir + ", and the working directory is not known)"
		}
		a.unknown = append(a.unknown, "terraform apply "+plan+why)
		return
	}
	raw := plan
	if !filepath.IsAbs(raw) {
		raw = dir + "/" + raw // as the kernel resolves it: .. after a symlink included
	}
	if by := a.changedAt(raw, false); by != "" {
		// The plan applied is the one an earlier command writes, not
		// the one there now.
		a.unknown = append(a.unknown, "terraform apply "+plan+" (the plan is changed earlier in the command by "+by+")")
		return
	}
	path := filepath.Clean(raw)
	changes, err := readPlanFile(a.ctx, raw, path, a.b.deadline)
	if err != nil {
		a.unknown = append(a.unknown, "terraform apply "+plan+" ("+err.Error()+")")
		return
	}
	t := Target{Path: path, Op: model.OpApply, Exists: true, LiveLinks: []string{}, Complete: true}
	changes.count(&t)
	if a.o.Cwd != "" && !within(path, a.o.Cwd) {
		t.Outside = true
	}
	a.targets = append(a.targets, t)
	if changes.provisioners {
		a.unknown = append(a.unknown, "terraform apply "+plan+" (its configuration has provisioners: programs terraform runs as it applies, which this preview does not judge)")
	}
	if changes.actions > 0 {
		a.unknown = append(a.unknown, "terraform apply "+plan+" (the plan invokes "+
			human.Count(changes.actions, "provider action", "provider actions")+", which this preview does not judge)")
	}
}

// terraformReadOnly: terraform SUB ARGS changes no state and no file the
// preview counts (plan -out writes its plan: see change). Any other
// subcommand (state rm|mv|push|replace-provider, workspace new|delete,
// taint, untaint, import, force-unlock, init, get, fmt without -check,
// one this preview does not know) is named unknown.
func terraformReadOnly(sub string, args []string) bool {
	first := ""
	for _, arg := range args {
		if !strings.HasPrefix(arg, "-") {
			first = arg
			break
		}
	}
	switch sub {
	case "plan", "show", "output", "validate", "version", "providers", "graph", "console", "metadata", "modules":
		return sub != "providers" || first == "" || first == "schema"
	case "fmt":
		for _, arg := range args {
			if a := strings.TrimLeft(arg, "-"); a == "check" || a == "check=true" {
				return true
			}
		}
	case "state":
		return first == "list" || first == "show" || first == "pull"
	case "workspace":
		return first == "list" || first == "show"
	}
	return false
}

// terraformOperands are apply's words that are not options, as Go's flag
// package parses them: options end at the first word that is not one, or
// at --. bad is an option this preview does not know ("" none).
func terraformOperands(args []string) (operands []string, bad string) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return args[i+1:], ""
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			return args[i:], ""
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-"), "=")
		switch {
		case terraformValueFlags[name]:
			if !hasValue {
				i++
			}
		case terraformBoolFlags[name]:
		default:
			return nil, arg
		}
	}
	return nil, ""
}

// readPlanFile reads the saved plan at raw (path cleaned), refusing what is
// not a regular file and a path whose .. leads elsewhere than it reads.
func readPlanFile(ctx context.Context, raw, path string, deadline time.Time) (*planChanges, error) {
	// O_NONBLOCK: a FIFO put where the plan was expected opens at once
	// (and is refused below) instead of waiting for a writer.
	f, err := os.OpenFile(raw, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errors.New("no such plan file")
		}
		return nil, errors.New("the plan file cannot be opened: " + errText(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, errors.New("the plan file cannot be read: " + errText(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("the plan is not a regular file")
	}
	if path != raw {
		if ci, err := os.Stat(path); err != nil || !os.SameFile(fi, ci) {
			return nil, errors.New("its path leads through a symlink and .. to another file than it names")
		}
	}
	return readPlan(ctx, f, fi.Size(), deadline)
}

// errText is err without the path (the caller names it).
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
