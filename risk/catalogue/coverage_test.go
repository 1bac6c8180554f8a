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
	"bat README.md", "apt list --installed", "brew list",
	// Read-only forms documented by each program.
	"git tag", "git tag --list", "git branch -r --merged origin/main", "git worktree list",
	"git lfs ls-files", "git config --get user.email",
	"gh pr list --state open --limit 20", "gh issue list --label bug -L 5", "gh run list --workflow ci.yml",
	"gh release list", "gh repo list acme --limit 50", "gh api repos/o/r/pulls --paginate --jq .[].title",
	"terraform show", "terraform show -json plan.out", "terraform output -json", "terraform validate",
	"terraform version", "terraform providers", "terraform graph",
	"kubectl top nodes", "kubectl auth can-i create pods", "kubectl config get-contexts",
	"helm status web -n prod", "helm template ./chart", "docker stats --no-stream", "docker builder du",
	"aws logs tail /aws/lambda/f --since 1h", "aws dynamodb query --table-name t", "gcloud logging read severity>=ERROR",
	"gcloud run services list", "aws deploy list-applications",
	"npm config get registry", "npm audit", "npm version", "pip config list", "pip list --outdated",
	"go vet ./...", "go mod graph", "go mod why golang.org/x/text", "go env",
	"less -N main.go", "more README.md", "top -b -n 1",
	"lscpu", "dmesg -T", "hostnamectl", "timedatectl status", "systemd-analyze blame",
	"loginctl list-sessions", "resolvectl status", "kubectx", "stern web -n prod --since 10m",
	"kustomize build overlays/prod", "eksctl get clusters",
	"git show-branch", "git cherry -v", "git check-ignore -v build/x", "git symbolic-ref HEAD",
	"git notes list", "git submodule status", "alias", "umask", "ulimit -a", "mount", "cal", "compgen -c",
	"openssl x509 -in cert.pem -noout -text", "helm repo list", "helm plugin list", "docker manifest inspect node:20",
	"crictl ps -a", "aws configure list", "npm pkg get name", "uv pip list", "rustup show", "rustup toolchain list",
	"pyenv versions", "systemd-analyze log-level", "kubectl auth can-i list pods", "docker compose config", "az tag list",
	"printf '%s\n' a b", "ack TODO", "rclone lsd r:", "poetry show", "poetry version", "poetry env info",
	"gh run view 123 --job 456 --log", "gh pr checks 7 --watch -i 10", "gh workflow view ci.yml -r main --yaml", "gh pr diff 7 --color never",
}

// Forms of the same programs that write or run something: never proven.
var notReadOnlyCorpus = []string{
	"git tag v1.0", "git tag -a v1 -m release", "git tag -d v1", "git branch feature",
	"git worktree add ../wt", "git worktree remove ../wt", "git lfs prune",
	"gh api -X DELETE repos/o/r", "gh api repos/o/r/issues -f title=x", "gh api graphql --input q.json",
	"gh api -H 'X-HTTP-Method-Override: DELETE' repos/o/r",
	"terraform plan", "terraform fmt", "terraform providers lock", "terraform test",
	"npm config set registry https://registry.example", "npm version patch", "npm audit fix", "npm audit --fix",
	"pip config set global.index-url https://pypi.example", "go env -w GOFLAGS=-mod=mod",
	"go vet -vettool=/tmp/x ./...", "go list -toolexec=/tmp/x ./...", "go mod tidy",
	"less +!id README.md", "less -k keys README.md", "less -o copy.txt README.md",
	"ping -p deadbeef example.com", "dmesg -C", "hostnamectl hostname web-2",
	"timedatectl set-timezone UTC", "ss -K dst 10.0.0.1", "arp -d 10.0.0.1",
	"kubectx prod", "kustomize build --enable-exec overlays/prod", "docker builder prune -af",
	"git symbolic-ref HEAD refs/heads/x", "git notes add -m x", "git submodule foreach 'rm -rf .'",
	"alias ls='rm -rf ~'", "umask 000", "ulimit -c unlimited", "mount -a", "mount /dev/sdb1 /mnt",
	"openssl x509 -in c.pem -engine /tmp/e.so", "openssl x509 -in c.pem -out c.der", "helm plugin install https://x.example/p",
	"aws configure get aws_secret_access_key", "aws configure set region x", "npm pkg set scripts.test=x",
	"uv pip install requests", "rustup toolchain install nightly", "pyenv install 3.12", "ctr images ls",
	"compgen -C 'rm -rf ~' x", "atop -w /tmp/raw", "lastlog -C -u dev", "systemd-analyze log-level debug",
	"helm template web ./chart --output-dir out", "helm template web ./chart --dependency-update",
	"kubectl auth reconcile -f rbac.yaml", "docker compose config -o merged.yaml",
	"openssl x509 -req -in c.csr -CA ca.pem -CAcreateserial", "uv pip list --python /tmp/py", "pip --python /tmp/py list",
	"kubectl cluster-info dump --output-directory=/tmp/d",
	"poetry version minor", "uv version --bump patch", "poetry env use python3.12", "poetry env remove --all",
	"docker -H ssh://prod ps", "printf -v PATH /tmp/bin", "rg --hostname-bin=/tmp/x foo", "ag --pager /tmp/x foo", "ack --pager=/tmp/x foo",
	"rclone ls r: --password-command /tmp/x", "rclone ls r: --sftp-ssh /tmp/x", "file -C -m magic", "git --exec-path=/tmp/x status",
	// Long options by a unique prefix (getopt_long), and Go's --name for -name.
	"sort --out=x y", "sort --compress=sh y", "rg --pr sh foo", "tar -tf x.tar --to-com=sh", "tar -tf x.tar --use-compress=sh",
	"less --log-f=x y", "date --se=2020-01-01", "journalctl --vacuum-s=1", "docker compose config --out x",
	"helm template web ./chart --post-r /tmp/x", "go env --w GOFLAGS=x", "go vet --vettool=/tmp/x ./...",
	// Another host, or configuration that names commands.
	"kubectl get pods --server=https://x.example", "kubectl get pods -s https://x.example", "kubectl get pods --kubeconfig=/tmp/k",
	"docker --host=tcp://x.example:2375 ps", "docker -H x.example:2375 ps", "docker --config /tmp/d ps",
	"git ls-remote https://x.example/r", "git ls-remote ext::sh", "dig example.com", "ping -c 3 example.com",
	"cargo --config x tree", "pip list --log /tmp/x",
	"gh api --hostname x.example /user", "gh api https://x.example/c", "go doc -http", "systemctl -H x.example status web",
	"yq -s .a x.yaml", "yq --split-exp .a x.yaml",
	"tmux -f /tmp/x ls", "rclone ls r: --config /tmp/rc", "vagrant status", "composer show", "tree --output=x",
}

func TestNotReadOnlyCorpus(t *testing.T) {
	c := mustDefault(t)
	for _, cmd := range notReadOnlyCorpus {
		if r := c.Lookup(splitTest(cmd)); r.ReadOnly {
			t.Errorf("%q proven read-only; it writes or runs something", cmd)
		}
	}
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
		programs, len(c.names), nodes, readOnly, options)
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
