package impact

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// cdWorld is a directory tree where a shell's cd can go wrong: a decoy
// data beside the working directory's, a prod data a CDPATH reaches, a
// home, and a symlink into another tree. Each directory holds a file
// named victim.
func cdWorld(t *testing.T) (root, work string) {
	t.Helper()
	root = t.TempDir()
	var files = map[string]string{}
	for _, d := range []string{"work", "work/data", "prod", "prod/data", "home", "home/sub", "home2", "real", "real/rel", "other"} {
		files[d+"/victim"] = d
	}
	tree(t, root, files, map[string]string{"work/current": "../real/rel"})
	return root, filepath.Join(root, "work")
}

// bashPwd runs script in bash (the oracle) from cwd with env, where
// "{X}" is replaced by `pwd >&3`, and returns what it printed there ("":
// it did not get there). Whatever else the script prints (cd with CDPATH
// prints the directory) is thrown away.
func bashPwd(t *testing.T, cwd string, env []string, script string) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", "exec 3>&1 >/dev/null 2>&1; "+strings.ReplaceAll(script, "{X}", "pwd >&3"))
	cmd.Dir = cwd
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "PWD=" + cwd}, env...)
	out, _ := cmd.Output()
	return strings.TrimSpace(string(out))
}

// Where cd goes, the preview goes: CDPATH (set in the command, exported,
// before the cd alone, from the environment, with an empty entry), HOME as
// the command sets it, cd - after an earlier cd, -P and set -P, .. after a
// symlink, pushd and popd, a shell started by the command. Bash is the
// oracle: the directory it prints is where the preview's rm acts.
func TestCdGoesWhereBashGoes(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is the oracle of this test")
	}
	root, work := cdWorld(t)
	prod, home, home2 := filepath.Join(root, "prod"), filepath.Join(root, "home"), filepath.Join(root, "home2")
	for _, tc := range []struct {
		script string
		env    []string
		cwd    string
	}{
		{script: "CDPATH=" + prod + "; cd data && {X}"},
		{script: "CDPATH=" + root + "/prod/; cd data && {X}"},
		{script: "export CDPATH=" + prod + "; cd data && {X}"},
		{script: "declare -x CDPATH=" + prod + "; cd data && {X}"},
		{script: "CDPATH=" + prod + " cd data && {X}"},
		{script: "P=" + work + "; P=" + prod + " CDPATH=$P cd data && {X}"},
		{script: "P=" + work + "; P=" + prod + " CDPATH=$P; cd data && {X}"},
		{script: "CDPATH=" + prod + " cd " + root + " && cd work && cd data && {X}"},
		{script: "CDPATH=:" + prod + "; cd data && {X}"},
		{script: "CDPATH=/nonexistent:" + prod + "; cd data && {X}"},
		{script: "CDPATH=/nonexistent; cd data && {X}"},
		{script: "CDPATH=" + prod + "; cd ./data && {X}"},
		{script: "CDPATH=" + prod + "; cd " + work + "/data && {X}"},
		{script: "cd ..; CDPATH=prod; cd data && {X}"},
		{script: "cd data && {X}", env: []string{"CDPATH=" + prod}},
		{script: "unset CDPATH; cd data && {X}", env: []string{"CDPATH=" + prod}},
		{script: "CDPATH=; cd data && {X}", env: []string{"CDPATH=" + prod}},
		{script: "CDPATH=" + prod + "; bash -c 'cd data && {X}'"},
		{script: "export CDPATH=" + prod + "; bash -c 'cd data && {X}'"},
		{script: "bash -c 'cd data && {X}'", env: []string{"CDPATH=" + prod}},
		{script: "env CDPATH=" + prod + " bash -c 'cd data && {X}'"},
		{script: "env -u CDPATH bash -c 'cd data && {X}'", env: []string{"CDPATH=" + prod}},
		{script: "HOME=" + home + "; cd && {X}"},
		{script: "HOME=" + home + "; cd ~ && {X}"},
		{script: "HOME=" + home + "; cd ~/sub && {X}"},
		{script: "export HOME=" + home + "; cd && {X}", env: []string{"HOME=" + home2}},
		{script: "cd && {X}", env: []string{"HOME=" + home2}},
		{script: "HOME=" + home + " cd && {X}", env: []string{"HOME=" + home2}},
		{script: "cd " + prod + " && cd " + home + " && cd - && {X}"},
		{script: "cd " + prod + "; cd data; cd -; {X}"},
		{script: "OLDPWD=" + home + "; cd - && {X}"},
		{script: "PWD=" + home + "; cd " + prod + " && cd - && {X}"},
		{script: "cd current && cd .. && {X}"},
		{script: "cd current/.. && {X}"},
		{script: "cd -P current && cd .. && {X}"},
		{script: "cd -P current/.. && {X}"},
		{script: "cd -LP current && cd .. && {X}"},
		{script: "cd -PL current && cd .. && {X}"},
		{script: "set -P; cd current && cd .. && {X}"},
		{script: "set -o physical; cd current; cd ..; {X}"},
		{script: "shopt -so physical; cd current; cd ..; {X}"},
		{script: "set -o physical; shopt -uo physical; cd current; cd ..; {X}"},
		{script: "set -P; set +P; cd current && cd .. && {X}"},
		{script: "cd current && cd .. && {X}", env: []string{"SHELLOPTS=braceexpand:physical"}},
		{script: "cd .. && {X}", cwd: filepath.Join(work, "current")},
		{script: "cd -P .. && {X}", cwd: filepath.Join(work, "current")},
		{script: "pushd data && pushd " + prod + " && popd && {X}"},
		{script: "pushd data && pushd " + prod + " && pushd && {X}"},
		{script: "pushd data && popd && {X}"},
		{script: "CDPATH=" + root + "; pushd prod && {X}"},
		{script: "builtin cd data && {X}"},
		{script: "cd data; for i in 1; do {X}; done"},
		{script: "for i in 1; do cd data; done; cd " + prod + " && {X}"},
		{script: "env -C " + prod + " bash -c '{X}'"},
		{script: "env --chdir=current bash -c 'cd .. && {X}'"},
		{script: "env -C . bash -c 'cd .. && {X}'", cwd: filepath.Join(work, "current")},
		{script: "command cd data && {X}"},
		{script: "(cd " + prod + "); cd data && {X}"},
		{script: "echo $(cd " + prod + " && {X})"},
		{script: "echo $(cd " + prod + "); cd data && {X}"},
		{script: "cd " + prod + " | cat; cd data && {X}"},
		{script: "set -a; CDPATH=" + prod + "; bash -c 'cd data && {X}'"},
		{script: "set -o allexport; HOME=" + home + "; bash -c 'cd && {X}'"},
		{script: "set -a; set +a; CDPATH=" + prod + "; bash -c 'cd data && {X}'"},
		{script: "set -a; declare CDPATH=" + prod + "; bash -c 'cd data && {X}'"},
		{script: "set -k; bash -c 'cd data && {X}' CDPATH=" + prod},
		{script: "set -k; env bash -c 'cd data && {X}' CDPATH=" + prod},
		{script: "bash -P -c 'cd current/.. && {X}'"},
		{script: "bash -o physical -c 'cd current/.. && {X}'"},
		{script: "shopt -so physical; cd current/.. && {X}"},
		{script: "shopt -s -o physical; cd current/.. && {X}"},
		{script: "set -P; export SHELLOPTS; bash -c 'cd current/.. && {X}'"},
		{script: "export SHELLOPTS; set -P; bash -c 'cd current/.. && {X}'"},
		{script: "set -P; bash -c 'cd current/.. && {X}'"},
	} {
		cwd := work
		if tc.cwd != "" {
			cwd = tc.cwd
		}
		want := bashPwd(t, cwd, tc.env, tc.script)
		if want == "" {
			t.Fatalf("%s: bash did not get there", tc.script)
		}
		command := strings.ReplaceAll(tc.script, "{X}", "rm -rf victim")
		p := Compute(context.Background(), command, Options{Cwd: cwd, Env: tc.env})
		if len(p.Targets) != 1 || len(p.Unknown) != 0 || p.Targets[0].Path != filepath.Join(want, "victim") {
			t.Errorf("%s: preview %+v unknown %q; bash went to %s", command, p.Targets, p.Unknown, want)
		}
	}
}

// What cannot be known is unknown: never the directory the command
// started in, never a guess.
func TestCdThatCannotBeKnownIsUnknown(t *testing.T) {
	root, work := cdWorld(t)
	prod := filepath.Join(root, "prod")
	for _, tc := range []struct {
		command string
		env     []string
	}{
		{command: "cd - && rm -rf victim"},                                       // OLDPWD from before the command
		{command: "cd && rm -rf victim"},                                         // HOME not set
		{command: "rm -rf ~/victim"},                                             // ~ with no HOME
		{command: "HOME=$X; cd && rm -rf victim", env: []string{"HOME=" + prod}}, // set to what is not known
		{command: "read CDPATH; cd data && rm -rf victim"},
		{command: "CDPATH=$(cat f); cd data && rm -rf victim"},
		{command: "if test -f x; then CDPATH=" + prod + "; fi; cd data && rm -rf victim"},
		{command: "test -f x && export CDPATH=" + prod + "; cd data && rm -rf victim"},
		{command: "for CDPATH in " + prod + "; do :; done; cd data && rm -rf victim"},
		{command: "eval \"$S\"; rm -rf victim"},
		{command: "source ./env.sh; rm -rf victim"},
		{command: ". ./env.sh; cd data && rm -rf victim"},
		{command: "$CMD " + prod + "; rm -rf victim"},
		{command: "f() { cd " + prod + "; }; f; rm -rf victim"},
		{command: "cd() { builtin cd " + prod + "; }; cd data && rm -rf victim"},
		{command: "declare -n CDPATH=P; cd data && rm -rf victim"},
		{command: "printf -v CDPATH %s " + prod + "; cd data && rm -rf victim"},
		{command: "popd && rm -rf victim"},
		{command: "pushd && rm -rf victim"},
		{command: "cd data " + prod + " && rm -rf victim"},
		{command: "shopt -s expand_aliases; cd data && rm -rf victim"},
		{command: "sudo sh -c 'cd && rm -rf victim'", env: []string{"HOME=" + prod}},
		{command: "bash -c 'cd data && rm -rf victim'", env: []string{"BASH_ENV=" + prod + "/env"}},
		{command: "cd data && rm -rf victim", env: []string{"SHELLOPTS=physical", "BASH_ENV=" + prod + "/env"}},
		{command: "trap 'cd " + prod + " && rm -rf victim' EXIT"},
		{command: "sudo -i rm -rf victim"},
		{command: "D=victim; read IFS; rm -rf $D"},
		{command: "set -o posix; CDPATH=/nonexistent; cd data; rm -rf victim"},
		{command: "CDPATH=/nonexistent; cd data; rm -rf victim", env: []string{"POSIXLY_CORRECT=1"}},
		{command: "rm -rf ~-/victim", env: []string{"HOME=" + prod}},
		{command: "rm -rf ~+/victim", env: []string{"HOME=" + prod}},
		{command: "for i in 1 2; do cd data; rm -rf victim; done"},
		{command: "while true; do rm -rf victim; cd data; done"},
		{command: "for a in 1; do for b in 1; do for c in 1; do for d in 1; do for e in 1; do rm -rf victim; done; done; done; done; done"},
		{command: "f() { rm -rf victim; }; cd data; f"},
		{command: "eval \"$S\"; bash -c 'cd " + work + " && cd data && rm -rf victim'"},
		{command: "env -C nosuch rm -rf victim"},
		{command: "declare -n r=CDPATH; r=" + prod + "; cd data && rm -rf victim"},
		{command: "declare -n r; r=CDPATH; r=" + prod + "; cd data && rm -rf victim"},
		{command: "declare -n r=CDPATH; read r; cd data && rm -rf victim"},
		{command: "typeset -n h=HOME; h=" + prod + "; cd && rm -rf victim"},
		{command: "shopt -s lastpipe; echo " + prod + " | read CDPATH; cd data && rm -rf victim"},
		{command: "shopt -s lastpipe; true && echo " + prod + " | read CDPATH; cd data && rm -rf victim"},
		{command: "SHELLOPTS=physical bash -c 'cd current/.. && rm -rf victim'"},
		{command: "set -a; CDPATH=$P; bash -c 'cd data && rm -rf victim'"},
		{command: "set $O; CDPATH=" + prod + "; bash -c 'cd data && rm -rf victim'"},
	} {
		p := Compute(context.Background(), tc.command, Options{Cwd: work, Env: tc.env})
		if len(p.Targets) != 0 || len(p.Unknown) == 0 {
			t.Errorf("%s: %+v %q, want it unknown", tc.command, p.Targets, p.Unknown)
		}
	}
	// An agent's shell, not seen: in a directory reached through a
	// symlink, its $PWD may be the logical or the physical path, and cd ..
	// goes to different places from them.
	link := filepath.Join(work, "current")
	for command, sure := range map[string]bool{
		"cd .. && rm -rf victim":                    false,
		"cd ../data && rm -rf victim":               false,
		"cd ../.. && cd work && rm -rf victim":      true, // the same directory from either
		"cd " + link + " && cd .. && rm -rf victim": true,
		"cd -P .. && rm -rf victim":                 true,
		"rm -rf ../victim":                          true, // resolved as the kernel does, either way
		"cd " + work + "/data/.. && rm -rf victim":  true,
	} {
		p := Compute(context.Background(), command, Options{Cwd: link, PWDUnsure: true})
		if got := len(p.Targets) == 1 && len(p.Unknown) == 0; got != sure {
			t.Errorf("$PWD not sure: %s: %+v %q, want known %v", command, p.Targets, p.Unknown, sure)
		}
	}
	if p := Compute(context.Background(), "cd .. && rm -rf victim", Options{Cwd: work, PWDUnsure: true}); len(p.Targets) != 1 {
		t.Errorf("$PWD not sure, no symlink in it: %+v %q", p.Targets, p.Unknown)
	}
	// The same under sh, which has no pushd, and falls back where bash
	// does not (CDPATH entries that all fail).
	for _, command := range []string{"pushd data && rm -rf victim", "popd; rm -rf victim"} {
		p := Compute(context.Background(), command, Options{Cwd: work, Shell: "/bin/sh"})
		if len(p.Targets) != 0 || len(p.Unknown) == 0 {
			t.Errorf("sh: %s: %+v %q, want it unknown", command, p.Targets, p.Unknown)
		}
	}
}

// A path with a trailing slash, or ending in /. or /.., is a symlink's
// target to the kernel: rm -r link/ empties the target, chmod -R and
// chown -R change it. Real coreutils are the oracle: each command runs
// with -v on a scratch copy, and the preview counts what it printed.
func TestSymlinkOperandsAsCoreutilsTreatThem(t *testing.T) {
	for _, tool := range []string{"rm", "chmod", "chown", "find"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is the oracle of this test", tool)
		}
	}
	uid := strconv.Itoa(os.Getuid())
	for _, tc := range []struct {
		command string // previewed and run (with -v, or -print for find) in w
		oracle  string // what runs, when the preview's words would not print
		target  string // the target's path, relative to w
	}{
		{command: "rm -rf current/", oracle: "rm -rfv current/", target: "rel"},
		{command: "rm -rf current", oracle: "rm -rfv current", target: "current"},
		{command: "rm -rf current/.", oracle: "rm -rfv current/.", target: "rel"},
		{command: "rm -rf ./current//", oracle: "rm -rfv ./current//", target: "rel"},
		{command: "rm current/", oracle: "rm -v current/", target: "rel"},
		{command: "rm current", oracle: "rm -v current", target: "current"},
		{command: "chmod -R 000 current/", oracle: "chmod -Rv u+rwx current/", target: "rel"},
		{command: "chmod -R 000 current", oracle: "chmod -Rv u+rwx current", target: "rel"},
		{command: "chmod -R 000 current/.", oracle: "chmod -Rv u+rwx current/.", target: "rel"},
		{command: "chmod 000 current", oracle: "chmod -v u+rwx current", target: "rel"},
		{command: "cd current && chmod -R 000 .", oracle: "cd current && chmod -Rv u+rwx .", target: "rel"},
		{command: "cd current && chmod -R 000 ../current/", oracle: "cd current && chmod -Rv u+rwx ../current/", target: "rel"},
		{command: "chown -R " + uid + " current/", oracle: "chown -Rv " + uid + " current/", target: "rel"},
		{command: "chown -R " + uid + " current", oracle: "chown -Rv " + uid + " current", target: "rel"},
		{command: "chown -hR " + uid + " current", oracle: "chown -hRv " + uid + " current", target: "current"},
		{command: "find current/ -delete", oracle: "find current/ -delete -print", target: "rel"},
		{command: "find current -delete", oracle: "find current -delete -print", target: "current"},
		{command: "rm -rf current/../x", oracle: "rm -rfv current/../x", target: "x"},
	} {
		w := t.TempDir()
		w, _ = filepath.EvalSymlinks(w)
		tree(t, w, map[string]string{"rel/f": "a", "rel/sub/g": "b", "x/y": "c", "real/x/z": "d", "real/x/zz": "e"}, map[string]string{"current": "rel"})
		if strings.Contains(tc.command, "current/../x") {
			_ = os.Remove(filepath.Join(w, "current"))
			tree(t, w, nil, map[string]string{"current": "real/rel"})
			tree(t, w, map[string]string{"real/rel/": ""}, nil)
			tc.target = "real/x"
		}
		p := Compute(context.Background(), tc.command, Options{Cwd: w})
		cmd := exec.Command("bash", "-c", tc.oracle)
		cmd.Dir = w
		var out bytes.Buffer
		cmd.Stdout = &out
		_ = cmd.Run()
		lines := int64(0)
		for _, l := range strings.Split(out.String(), "\n") {
			if l != "" {
				lines++
			}
		}
		if len(p.Targets) != 1 || len(p.Unknown) != 0 {
			t.Errorf("%s: targets %+v unknown %q", tc.command, p.Targets, p.Unknown)
			continue
		}
		got := p.Targets[0]
		if got.Entries != lines || got.Path != filepath.Join(w, tc.target) {
			t.Errorf("%s: preview %s, %d entries; %s printed %d:\n%s", tc.command, got.Path, got.Entries, tc.oracle, lines, out.String())
		}
	}
}

// chmod and chown of what a live symlink points into reach something
// live: HIGH, whichever way the command names it.
func TestModeChangesThroughALiveLinkAreHigh(t *testing.T) {
	w := t.TempDir()
	tree(t, w, map[string]string{"releases/1/bin": "x", "releases/1/lib/a": "y", "other/f": "z"}, map[string]string{"current": "releases/1"})
	for cmd, want := range map[string]model.RiskLevel{
		"chmod -R 000 current/":                model.RiskHigh,
		"chmod -R 000 current":                 model.RiskHigh,
		"cd current && chmod -R 000 .":         model.RiskHigh,
		"chown -R nobody current/":             model.RiskHigh,
		"chmod -R 000 releases/1":              model.RiskHigh,
		"rm -rf current/":                      model.RiskHigh,
		"chmod -R 000 other":                   "",
		"rm -rf current/.":                     "",
		"cd current && rm -rf ../current/. ..": "",
	} {
		p := Compute(context.Background(), cmd, Options{Cwd: w})
		if got, why := Raise(p); got != want {
			t.Errorf("%s: raised to %q (%s), want %q; %s", cmd, got, why, want, p.Summary)
		}
	}
}

// Glob options and GLOBIGNORE change what * names: shopt -s dotglob as
// bash does it; GLOBIGNORE from the environment, not known, is unknown; a
// PWD the command sets does not move where globs are read.
func TestGlobsFollowTheShellsOptions(t *testing.T) {
	w := t.TempDir()
	tree(t, w, map[string]string{"a": "1", ".hidden": "2", "d/.x": "3", "d/y": "4"}, nil)
	for _, tc := range []struct{ command, oracle string }{
		{"shopt -s dotglob; rm -rf *", "shopt -s dotglob nullglob; printf '%s\\0' *"},
		{"shopt -s dotglob; shopt -u dotglob; rm -rf *", "shopt -s nullglob; printf '%s\\0' *"},
		{"shopt -s globstar; rm -rf **", "shopt -s globstar nullglob; printf '%s\\0' **"},
		{"PWD=/; rm -rf *", "PWD=/; shopt -s nullglob; printf '%s\\0' *"},
		{"shopt -s dotglob; export BASHOPTS; bash -c 'rm -rf *'", "shopt -s dotglob nullglob; printf '%s\\0' *"},
		{"export BASHOPTS; shopt -s dotglob; bash -c 'rm -rf *'", "shopt -s dotglob nullglob; printf '%s\\0' *"},
		{"shopt -s dotglob; bash -c 'rm -rf *'", "shopt -s nullglob; printf '%s\\0' *"},
	} {
		p := Compute(context.Background(), tc.command, Options{Cwd: w})
		var got []string
		for _, tg := range p.Targets {
			got = append(got, strings.TrimPrefix(tg.Path, w+"/"))
		}
		cmd := exec.Command("bash", "-c", tc.oracle)
		cmd.Dir = w
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if strings.Join(got, "|") != strings.Join(want, "|") || len(p.Unknown) != 0 {
			t.Errorf("%s: preview %q %q, bash %q", tc.command, got, p.Unknown, want)
		}
	}
	for _, env := range [][]string{{"GLOBIGNORE=a"}, {"BASHOPTS=dotglob"}} {
		p := Compute(context.Background(), "rm -rf *", Options{Cwd: w, Env: env})
		if env[0] == "BASHOPTS=dotglob" {
			if len(p.Targets) != 3 {
				t.Errorf("%s: %+v", env, p.Targets)
			}
			continue
		}
		if len(p.Targets) != 0 || len(p.Unknown) != 1 {
			t.Errorf("%s: %+v %q", env, p.Targets, p.Unknown)
		}
	}
}

// The runner's shell is /bin/sh: where the preview names a directory for
// it, sh goes there; CDPATH, HOME and cd - it always knows.
func TestCdGoesWhereShGoes(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Fatal("/bin/sh is the oracle of this test")
	}
	root, work := cdWorld(t)
	prod, home := filepath.Join(root, "prod"), filepath.Join(root, "home")
	for _, tc := range []struct {
		script string
		env    []string
		sure   bool // the preview must know it
	}{
		{script: "CDPATH=" + prod + "; cd data && {X}", sure: true},
		{script: "export CDPATH=" + prod + "; cd data && {X}", sure: true},
		{script: "CDPATH=" + prod + " cd data && {X}", sure: true},
		{script: "CDPATH=:" + prod + "; cd data && {X}", sure: true},
		{script: "cd data && {X}", env: []string{"CDPATH=" + prod}, sure: true},
		{script: "HOME=" + home + "; cd && {X}", sure: true},
		{script: "HOME=" + home + "; cd ~/sub && {X}", sure: true},
		{script: "cd " + prod + " && cd " + home + " && cd - && {X}", sure: true},
		{script: "PWD=" + home + "; cd " + prod + " && cd - && {X}", sure: true},
		{script: "cd current && cd .. && {X}", sure: true},
		{script: "cd -P current && cd .. && {X}", sure: true},
		{script: "CDPATH=/nonexistent; cd data && {X}"},
		{script: "cd -e data && {X}"},
		{script: "SHELLOPTS=physical bash -c 'cd current/.. && {X}'", sure: true},
		{script: "set -a; CDPATH=" + prod + "; sh -c 'cd data && {X}'", sure: true},
	} {
		cmd := exec.Command("/bin/sh", "-c", "exec 3>&1 >/dev/null 2>&1; "+strings.ReplaceAll(tc.script, "{X}", "pwd >&3"))
		cmd.Dir = work
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "PWD=" + work}, tc.env...)
		out, _ := cmd.Output()
		want := strings.TrimSpace(string(out))
		command := strings.ReplaceAll(tc.script, "{X}", "rm -rf victim")
		p := Compute(context.Background(), command, Options{Cwd: work, Env: tc.env, Shell: "/bin/sh"})
		switch {
		case len(p.Targets) == 0 && !tc.sure && len(p.Unknown) > 0:
		case want == "" || len(p.Targets) != 1 || p.Targets[0].Path != filepath.Join(want, "victim"):
			t.Errorf("%s: preview %+v unknown %q; sh went to %q", command, p.Targets, p.Unknown, want)
		}
	}
}

// BenchmarkShellFollowing: the preview of commands whose directory takes
// following (CDPATH searched, cd -, pushd/popd, a loop walked for where
// its passes start, nested shells), on a small tree: the shell's part of
// a preview's time.
func BenchmarkShellFollowing(b *testing.B) {
	root := b.TempDir()
	var files = map[string]string{}
	for _, d := range []string{"work/data", "prod/data", "home", "real/rel"} {
		files[d+"/victim"] = d
	}
	tree(b, root, files, map[string]string{"work/current": "../real/rel"})
	work, prod := filepath.Join(root, "work"), filepath.Join(root, "prod")
	for name, command := range map[string]string{
		"cdpath":  "CDPATH=/nonexistent:" + prod + "; cd data && rm -rf victim",
		"dirs":    "pushd data && pushd " + prod + " && popd && cd - && cd -P ../work/current && cd .. && rm -rf victim",
		"loops":   "for a in 1 2; do for b in 1 2; do for c in 1; do rm -rf victim; X=$a; done; done; done",
		"nested":  "export CDPATH=" + prod + "; bash -c 'sh -c \"cd data && rm -rf victim\"'",
		"symlink": "rm -rf current/ && chmod -R 000 current && chown -R 0 current/.",
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if p := Compute(context.Background(), command, Options{Cwd: work, Env: []string{"HOME=" + root + "/home"}}); len(p.Targets) == 0 {
					b.Fatalf("%s: %+v", command, p)
				}
			}
		})
	}
}
