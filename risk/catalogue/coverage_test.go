package catalogue

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Commands coding agents run all day that only read: every one must be
// proven read-only.
var readOnlyCorpus = []string{
	"ls -la", "ls -R src", "cat go.mod", "head -n 20 main.go", "tail -f log.txt", "wc -l a b",
	"grep -rn TODO .", "grep -e foo -r src", "rg -n func", "fd -e go", "find . -name '*.go' -type f",
	"git status", "git status --porcelain", "git diff", "git diff --stat HEAD~1", "git log --oneline -20",
	"git show HEAD", "git blame main.go", "git branch -a", "git rev-parse HEAD", "git ls-files",
	"git remote -v", "git stash list", "git describe --tags", "git reflog",
	"pwd", "echo hi", "which go", "stat f", "file f", "du -sh .", "df -h", "tree -L 2", "diff a b",
	"sort -u names", "uniq", "cut -d: -f1 /etc/group", "jq .name package.json", "sha256sum f",
	"go version", "go env GOPATH", "go list ./...", "npm ls", "pip list", "cargo tree",
	"kubectl get pods", "kubectl describe pod x -n y", "kubectl logs web", "docker ps", "docker images",
	"terraform state list", "helm list -A", "gh pr view 12", "gh pr checks", "gh run list",
	"aws sts get-caller-identity", "aws s3 ls s3://b", "gcloud projects list", "az vm show -n x -g y",
	"systemctl status nginx", "journalctl -u nginx -n 50", "ps aux", "ss -tlnp", "uname -a", "id",
	"env", "printenv PATH", "date", "whoami", "basename a/b", "realpath .", "zcat a.gz", "test -f x",
	"bat README.md", "apt list --installed", "brew list", "dig example.com",
}

func TestReadOnlyCorpus(t *testing.T) {
	c := mustDefault(t)
	proven := 0
	for _, cmd := range readOnlyCorpus {
		r := c.Lookup(splitTest(cmd))
		if r.ReadOnly {
			proven++
			continue
		}
		t.Errorf("%q not proven read-only: effects %v, unknown %v", cmd, r.Effects, r.Unknown)
	}
	t.Logf("%d of %d proven read-only", proven, len(readOnlyCorpus))
}

// TestCoverage checks that the families the catalogue must describe are
// there, and that every program and subcommand can be looked up.
func TestCoverage(t *testing.T) {
	c := mustDefault(t)
	families := map[string][]string{
		"coreutils":   {"ls", "cat", "cp", "mv", "rm", "shred", "dd", "chmod", "chown", "tee", "touch", "ln", "truncate"},
		"findutils":   {"find", "xargs", "locate"},
		"text":        {"grep", "sed", "awk", "jq", "sort"},
		"git":         {"git", "gh"},
		"packages":    {"apt", "apt-get", "dnf", "apk", "brew", "npm", "pnpm", "yarn", "npx", "pip", "uv", "poetry", "go", "cargo", "gem", "make", "mvn", "gradle"},
		"containers":  {"docker", "podman", "docker-compose", "kubectl", "helm"},
		"infra":       {"terraform", "tofu", "pulumi", "aws", "gcloud", "az"},
		"databases":   {"psql", "mysql", "sqlite3", "mongosh", "redis-cli", "pg_dump", "dropdb"},
		"system":      {"systemctl", "journalctl", "service", "crontab", "at", "iptables", "nft", "ufw", "sudo", "su", "doas", "kill", "pkill", "mount"},
		"network":     {"ssh", "scp", "sftp", "rsync", "curl", "wget", "nc", "ncat", "socat"},
		"editors":     {"vim", "vi", "nvim", "nano", "emacs", "ed"},
		"pagers":      {"less", "more", "man"},
		"archivers":   {"tar", "zip", "unzip", "gzip", "7z"},
		"interpreter": {"bash", "sh", "zsh", "python", "python3", "node", "perl", "ruby", "php", "lua", "eval", "source"},
		"wrappers":    {"env", "nice", "timeout", "nohup", "stdbuf", "setsid", "chroot", "flock", "watch", "script", "exec"},
	}
	for fam, names := range families {
		for _, n := range names {
			if c.Program(n) == nil {
				t.Errorf("%s: %s is not in the catalogue", fam, n)
			}
		}
	}
	programs, nodes, readOnly, options := 0, 0, 0, 0
	var walk func(words []string, n *Command)
	walk = func(words []string, n *Command) {
		nodes++
		options += len(n.Options)
		if n.ReadOnly {
			readOnly++
		}
		r := c.Lookup(words)
		if r.Program == "" {
			t.Errorf("%v: not found", words)
		}
		if n.ReadOnly && len(n.Verbs) == 0 && !r.ReadOnly {
			t.Errorf("%v: read_only node not proven read-only: %v", words, r.Unknown)
		}
		for _, s := range n.Subcommands {
			walk(append(append([]string{}, words...), s.Name), s)
			for _, a := range s.Aliases {
				if r := c.Lookup(append(append([]string{}, words...), a)); strings.Join(r.Path, " ") == "" {
					t.Errorf("%v %s: alias not found", words, a)
				}
			}
		}
	}
	for _, p := range c.Programs() {
		programs++
		walk([]string{p.Name}, p)
	}
	t.Logf("%d programs (%d names with aliases), %d commands with subcommands, %d read-only, %d option entries",
		programs, len(c.programs), nodes, readOnly, options)
}

func FuzzLookup(f *testing.F) {
	c, err := Default()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range readOnlyCorpus {
		f.Add(s)
	}
	f.Add("find . -exec")
	f.Add("tar --checkpoint-action=exec=")
	f.Add("ssh -o")
	f.Add("+ + -- -")
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		r := c.Lookup(strings.Fields(s))
		if r.ReadOnly && (len(r.Unknown) > 0 || r.Program == "") {
			t.Fatalf("read only with unknowns: %+v", r)
		}
		for _, e := range r.Effects {
			if e != Read && r.ReadOnly {
				t.Fatalf("read only with %s", e)
			}
		}
	})
}
