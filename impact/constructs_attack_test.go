package impact

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Commands that run other commands, run code from elsewhere, or change
// the shell's state in ways that move where it acts: each destroys 1,000
// files (or changes their mode) under bash or dash. The preview must see
// what they touch or say it could not: never "nothing this preview knows
// to destroy".
func TestConstructsAreSeenOrUnknown(t *testing.T) {
	cases := []struct{ name, command, shell string }{
		{name: "eval", command: `eval "rm -f many/*"`},
		{name: "exec -a", command: `exec -a x rm -f many/*`},
		{name: "exec -ca", command: `exec -ca x rm -f many/*`},
		{name: "setsid wrapper", command: `setsid rm -f many/*`},
		{name: "setsid -f", command: `setsid -f rm -f many/*`},
		{name: "flock wrapper", command: `flock /tmp/l rm -f many/*`},
		{name: "flock -w", command: `flock -w 3 /tmp/l rm -f many/*`},
		{name: "flock -c", command: `flock /tmp/l -c 'rm -f many/*'`},
		{name: "chrt", command: `chrt -o 0 rm -f many/*`},
		{name: "taskset", command: `taskset -c 0 rm -f many/*`},
		{name: "ionice", command: `ionice -c 3 rm -f many/*`},
		{name: "nice", command: `nice -n 5 rm -f many/*`},
		{name: "nohup", command: `nohup rm -f many/*`},
		{name: "timeout", command: `timeout -s KILL 5 rm -f many/*`},
		{name: "stdbuf", command: `stdbuf -oL rm -f many/*`},
		{name: "busybox", command: `busybox rm -f many/*`},
		{name: "unshare", command: `unshare -r rm -f many/*`},
		{name: "nsenter", command: `nsenter -t 1 -m rm -f many/*`},
		{name: "chroot", command: `chroot / rm -f many/*`},
		{name: "runuser -u", command: `runuser -u nobody -- rm -f many/*`},
		{name: "su -c", command: `su -c 'rm -f many/*' nobody`},
		{name: "script -c", command: `script -qc 'rm -f many/*' /dev/null`},
		{name: "systemd-run", command: `systemd-run --user rm -f many/*`},
		{name: "watch", command: `watch -n 1 rm -f many/*`},
		{name: "parallel", command: `parallel rm ::: many/*`},
		{name: "env -S", command: `env -S "rm -f" many/*`},
		{name: "env -S quoted", command: `env -S "rm -f 'many/0'" many/*`},
		{name: "find -exec unlink", command: `find many -type f -exec unlink {} +`},
		{name: "find -execdir rm", command: `find many -type f -execdir rm {} \;`},
		{name: "xargs unlink", command: `printf "%s\n" many/* | xargs unlink`},
		{name: "xargs -0 rm", command: `printf "%s\0" many/* | xargs -0 -n 10 rm -f`},
		{name: "tee truncates", command: `tee many/* </dev/null`},
		{name: "alias on an earlier line", command: "shopt -s expand_aliases\nalias x='rm -f'\nx many/*"},
		{name: "alias in sh", command: "alias x='rm -f'\nx many/*", shell: "/bin/sh"},
		{name: "hash -p", command: `hash -p /bin/rm ls; ls -f many/*`},
		{name: "source a script", command: `source ./rc`},
		{name: ". a script", command: `. ./rc`},
		{name: "a script of the directory", command: `./rc`},
		{name: "script on stdin", command: `bash -s < rc`},
		{name: "sh on stdin", command: `sh < rc`},
		{name: "cat into sh", command: `cat rc | sh`},
		{name: "bash FILE", command: `bash rc`},
		{name: "bash -l", command: `bash -lc 'true'`, shell: ""},
		{name: "bash -i", command: `bash -ic 'true'`},
		{name: "bash --rcfile", command: `bash --rcfile rc -ic 'true'`},
		{name: "HOME and a login", command: `HOME=. bash -lc 'true'`},
		{name: "ENV and sh -i", command: `ENV=./rc sh -ic 'true'`},
		{name: "BASH_ENV absolute", command: `BASH_ENV=RC bash -c 'true'`},
	}
	root := t.TempDir()
	cwd := filepath.Join(root, "work")
	flatDir(t, filepath.Join(cwd, "many"), MedEntries)
	if err := os.WriteFile(filepath.Join(cwd, "rc"), []byte("rm -f many/*\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + filepath.Join(root, "home"), "PATH=/usr/bin:/bin"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			command := strings.ReplaceAll(c.command, "RC", filepath.Join(cwd, "rc"))
			p := Compute(context.Background(), command, Options{Cwd: cwd, Env: env, Shell: c.shell, MaxTime: 2 * time.Second})
			if level, _ := Raise(p); level == "" {
				t.Errorf("%q: let through (summary %q, complete %v, unknown %q)", command, p.Summary, p.Complete, p.Unknown)
			}
		})
	}
}

// Shell state that moves where a later command acts: the preview must go
// where bash goes, or say it does not know; never to a decoy.
func TestShellStateAttacks(t *testing.T) {
	cases := []struct{ name, command string }{
		{"allexport", `set -a; CDPATH=PROD; bash -c 'cd data; rm -f *'`},
		{"set -o allexport", `set -o allexport; CDPATH=PROD; bash -c 'cd data; rm -f *'`},
		{"keyword", `set -k; bash -c 'cd data; rm -f *' CDPATH=PROD`},
		{"nameref CDPATH", `declare -n r=CDPATH; r=PROD; cd data; rm -f *`},
		{"nameref HOME", `declare -n h=HOME; h=PROD; cd; rm -f data/*`},
		{"nameref assigned twice", `declare -n r=CDPATH; r=PROD; CDPATH=/nonexistent; r=PROD; cd data; rm -f *`},
		{"nameref read", `declare -n r=CDPATH; read r; cd data; rm -f *`},
		{"lastpipe read", `shopt -s lastpipe; echo PROD | read CDPATH; cd data; rm -f *`},
		{"bash -P", `bash -P -c 'cd cur/..; rm -f data/*'`},
		{"bash -o physical", `bash -o physical -c 'cd cur/..; rm -f data/*'`},
		{"shopt -so physical", `shopt -so physical; cd cur/..; rm -f data/*`},
		{"shopt -s -o physical", `shopt -s -o physical; cd cur/..; rm -f data/*`},
		{"exported SHELLOPTS", `set -P; export SHELLOPTS; bash -c 'cd cur/..; rm -f data/*'`},
	}
	root := t.TempDir()
	cwd := filepath.Join(root, "work")
	prod := filepath.Join(root, "prod")
	flatDir(t, filepath.Join(prod, "data"), MedEntries)
	flatDir(t, filepath.Join(cwd, "data"), 1)
	flatDir(t, filepath.Join(root, "home", "data"), 1)
	if err := os.Symlink("../prod/data", filepath.Join(cwd, "cur")); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + filepath.Join(root, "home"), "PATH=/usr/bin:/bin"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			command := strings.ReplaceAll(c.command, "PROD", prod)
			p := Compute(context.Background(), command, Options{Cwd: cwd, Env: env, MaxTime: 2 * time.Second})
			if level, _ := Raise(p); level == "" {
				t.Errorf("%q: let through (summary %q, complete %v, unknown %q)", command, p.Summary, p.Complete, p.Unknown)
			}
		})
	}
}

// What is looked through is previewed as the command it runs, and state
// that is not known keeps what can be seen: a dd after an eval (set -k
// may then be on) still wipes its device in the preview, su's options
// after the user are read.
func TestLookedThroughKeepsWhatIsSeen(t *testing.T) {
	cwd := t.TempDir()
	flatDir(t, filepath.Join(cwd, "many"), MedEntries)
	for _, command := range []string{
		"eval x; rm -rf a=b " + cwd + "/many",
		"setsid -w flock -w 1 /tmp/l nice -n 3 rm -rf many",
		"exec -a name rm -rf many",
		"env -S 'rm -rf' many",
		"busybox rm -rf many",
		"watch -x rm -rf many",
	} {
		p := Compute(context.Background(), command, Options{Cwd: cwd, MaxTime: 2 * time.Second})
		if p.Entries < MedEntries {
			t.Errorf("%q: previewed as %q (%d entries), unknown %q; it deletes %d", command, p.Summary, p.Entries, p.Unknown, MedEntries)
		}
	}
	if p := Compute(context.Background(), "su - nobody -c 'rm -rf "+cwd+"/many'", Options{Cwd: cwd}); p.Entries < MedEntries || len(p.Unknown) == 0 {
		t.Errorf("su - USER -c: %q (%d entries), unknown %q", p.Summary, p.Entries, p.Unknown)
	}
}
