package risk

import (
	"path"
	"strings"
)

// sensitive is one kind of path whose change (or, when secret, whose
// reading) matters more than its place says.
type sensitive struct {
	// match is one of:
	//   "/abs/file"      that file exactly;
	//   "/abs/dir/"      the directory and everything below it;
	//   "~/rel" "~/dir/" the same below a home directory;
	//   "*/name" "*/dir/" a file or directory of that name anywhere;
	//   "*.ext"           a file name ending so;
	//   "name*"           a file name starting so.
	match string
	why   string
	// secret: reading it is already a risk (credentials, keys).
	secret bool
	// history: writing or emptying it erases a record of what was done.
	history bool
}

// sensitiveTargets are built in. Each says, in the words a console shows,
// what the path is. Reads matter only for the secret ones; any write,
// truncation, deletion or change of owner or mode of any of them is HIGH.
var sensitiveTargets = []sensitive{
	{match: "/", why: "the root directory"},
	{match: "/etc/sudoers", why: "the sudo rules"},
	{match: "/etc/sudoers.d/", why: "the sudo rules"},
	{match: "/etc/shadow", why: "the password hashes", secret: true},
	{match: "/etc/gshadow", why: "the group password hashes", secret: true},
	{match: "/etc/passwd", why: "a system account file"},
	// Secrets that a read-only program would otherwise print unasked.
	{match: "ssh_host_*", why: "an SSH host key", secret: true},
	{match: "/proc/kcore", why: "the kernel's memory", secret: true},
	{match: "/proc/self/mem", why: "a process's memory", secret: true},
	{match: "*/.bash_history", why: "the shell history (typed passwords and tokens)", secret: true, history: true},
	{match: "*/.zsh_history", why: "the shell history (typed passwords and tokens)", secret: true, history: true},
	{match: "*/fish_history", why: "the shell history (typed passwords and tokens)", secret: true, history: true},
	{match: "*/.mysql_history", why: "a database client's history (passwords typed in it)", secret: true, history: true},
	{match: "*/.psql_history", why: "a database client's history (passwords typed in it)", secret: true, history: true},
	{match: "*/.python_history", why: "the interpreter history", secret: true, history: true},
	{match: "*/.node_repl_history", why: "the interpreter history", secret: true, history: true},
	{match: "~/.claude/.credentials.json", why: "the agent's credentials (Claude Code)", secret: true},
	{match: "~/.config/rclone/", why: "rclone's remotes and their credentials", secret: true},
	{match: "*/.envrc", why: "direnv's script (run on entering the directory; it often exports secrets)", secret: true},
	// The same credentials named from the home directory as the workspace
	// (cat .aws/credentials with the working directory at ~).
	{match: "*/.ssh/", why: "SSH keys and settings", secret: true},
	{match: "*/.aws/", why: "cloud credentials (AWS)", secret: true},
	{match: "*/.azure/", why: "cloud credentials (Azure)", secret: true},
	{match: "*/.kube/", why: "Kubernetes credentials", secret: true},
	{match: "*/.gnupg/", why: "GnuPG keys", secret: true},
	{match: "*/.password-store/", why: "stored passwords", secret: true},
	{match: "*/.docker/config.json", why: "registry credentials (Docker)", secret: true},
	{match: "*/.vault-token", why: "a Vault token", secret: true},
	{match: "*/.git-credentials", why: "git credentials", secret: true},
	{match: "/etc/group", why: "a system account file"},
	{match: "/etc/hosts", why: "the host name table"},
	{match: "/etc/resolv.conf", why: "the resolver configuration"},
	{match: "/etc/ssh/", why: "the SSH server configuration"},
	{match: "/etc/ssl/private/", why: "TLS private keys", secret: true},
	{match: "/etc/letsencrypt/", why: "TLS keys and certificates", secret: true},
	{match: "/var/run/secrets/", why: "the secrets mounted for services", secret: true},
	{match: "/run/secrets/", why: "the secrets mounted for services", secret: true},
	{match: "/etc/pam.d/", why: "the login rules (PAM)"},
	{match: "/etc/security/", why: "the login rules (PAM)"},
	{match: "/etc/crontab", why: "the system crontab"},
	{match: "/etc/cron.d/", why: "the system cron jobs"},
	{match: "/etc/cron.hourly/", why: "the system cron jobs"},
	{match: "/etc/cron.daily/", why: "the system cron jobs"},
	{match: "/etc/cron.weekly/", why: "the system cron jobs"},
	{match: "/etc/cron.monthly/", why: "the system cron jobs"},
	{match: "/var/spool/cron/", why: "the users' crontabs"},
	{match: "/etc/systemd/", why: "the systemd units"},
	{match: "/lib/systemd/", why: "the systemd units"},
	{match: "/usr/lib/systemd/", why: "the systemd units"},
	{match: "/etc/init.d/", why: "the start-up services"},
	{match: "/etc/rc.local", why: "the start-up script"},
	{match: "/etc/profile", why: "the shells' start-up file"},
	{match: "/etc/profile.d/", why: "the shells' start-up files"},
	{match: "/etc/bash.bashrc", why: "the shells' start-up file"},
	{match: "/etc/environment", why: "the system environment"},
	{match: "/etc/ld.so.preload", why: "the libraries loaded into every program"},
	{match: "/etc/ld.so.conf", why: "the library search path"},
	{match: "/etc/ld.so.conf.d/", why: "the library search path"},
	{match: "/etc/fstab", why: "the file systems mounted at boot"},
	{match: "/etc/apt/", why: "the package sources"},
	{match: "/etc/yum.repos.d/", why: "the package sources"},
	{match: "/etc/", why: "system configuration"},
	{match: "/boot/", why: "the boot loader and kernels"},
	{match: "/usr/", why: "the system's programs and libraries"},
	{match: "/bin/", why: "the system's programs"},
	{match: "/sbin/", why: "the system's programs"},
	{match: "/lib/", why: "the system's libraries"},
	{match: "/lib64/", why: "the system's libraries"},
	{match: "/var/lib/", why: "the system's data (databases, packages)"},
	{match: "/var/log/", why: "the system logs", history: true},
	{match: "/root/", why: "the root user's home"},
	{match: "/proc/sysrq-trigger", why: "the kernel's emergency controls"},
	{match: "/proc/sys/", why: "kernel settings"},
	{match: "*/environ", why: "a process's environment (tokens and keys)", secret: true},
	{match: "/sys/", why: "kernel and device settings"},
	{match: "/dev/mem", why: "the physical memory", secret: true},
	{match: "/dev/kmem", why: "the kernel memory", secret: true},
	{match: "/dev/port", why: "the I/O ports"},

	{match: "~/.ssh/", why: "SSH keys and settings", secret: true},
	{match: "*/authorized_keys", why: "the keys allowed to log in by SSH"},
	{match: "*/authorized_keys2", why: "the keys allowed to log in by SSH"},
	{match: "id_rsa*", why: "an SSH private key", secret: true},
	{match: "id_ed25519*", why: "an SSH private key", secret: true},
	{match: "id_ecdsa*", why: "an SSH private key", secret: true},
	{match: "id_dsa*", why: "an SSH private key", secret: true},
	{match: "~/.aws/", why: "cloud credentials (AWS)", secret: true},
	{match: "~/.config/gcloud/", why: "cloud credentials (Google Cloud)", secret: true},
	{match: "~/.azure/", why: "cloud credentials (Azure)", secret: true},
	{match: "~/.kube/", why: "Kubernetes credentials", secret: true},
	{match: "~/.docker/config.json", why: "registry credentials (Docker)", secret: true},
	{match: "~/.gnupg/", why: "GnuPG keys", secret: true},
	{match: "~/.password-store/", why: "stored passwords", secret: true},
	{match: "~/.vault-token", why: "a Vault token", secret: true},
	{match: "~/.config/gh/", why: "GitHub credentials", secret: true},
	{match: "~/.git-credentials", why: "git credentials", secret: true},
	{match: "~/.terraform.d/credentials.tfrc.json", why: "Terraform credentials", secret: true},
	{match: "~/.local/share/keyrings/", why: "the keyring", secret: true},
	{match: "*/.netrc", why: "login credentials (.netrc)", secret: true},
	{match: "*/.npmrc", why: "registry credentials (.npmrc)", secret: true},
	{match: "*/.pypirc", why: "registry credentials (.pypirc)", secret: true},
	{match: "*/.pgpass", why: "database passwords (.pgpass)", secret: true},
	{match: "*/.my.cnf", why: "database passwords (.my.cnf)", secret: true},
	{match: "*/.env", why: "an environment file (secrets)", secret: true},
	{match: ".env.*", why: "an environment file (secrets)", secret: true},
	{match: "*.pem", why: "a key or certificate file", secret: true},
	{match: "*.key", why: "a key file", secret: true},
	{match: "*.p12", why: "a key store", secret: true},
	{match: "*.pfx", why: "a key store", secret: true},
	{match: "*.jks", why: "a key store", secret: true},
	{match: "*.kdbx", why: "a password database", secret: true},
	{match: "*/credentials.json", why: "a credentials file", secret: true},
	{match: "*/secrets.yaml", why: "a secrets file", secret: true},
	{match: "*/secrets.yml", why: "a secrets file", secret: true},
	{match: "*.tfstate", why: "Terraform state (holds secrets)", secret: true},

	{match: "~/.bashrc", why: "a shell start-up file"},
	{match: "~/.bash_profile", why: "a shell start-up file"},
	{match: "~/.bash_login", why: "a shell start-up file"},
	{match: "~/.bash_logout", why: "a shell start-up file"},
	{match: "~/.profile", why: "a shell start-up file"},
	{match: "~/.zshrc", why: "a shell start-up file"},
	{match: "~/.zshenv", why: "a shell start-up file"},
	{match: "~/.zprofile", why: "a shell start-up file"},
	{match: "~/.zlogin", why: "a shell start-up file"},
	{match: "~/.config/fish/", why: "a shell start-up file"},
	{match: "~/.inputrc", why: "a shell start-up file"},
	{match: "~/.history", why: "the shell history", history: true},
	{match: "~/.lesshst", why: "the pager history", history: true},
	{match: "~/.config/systemd/", why: "the user's systemd units"},
	{match: "~/.config/autostart/", why: "programs started at login"},
	{match: "~/Library/LaunchAgents/", why: "programs started at login"},
	{match: "/Library/LaunchDaemons/", why: "services started at boot"},

	{match: "*/.git/hooks/", why: "git hooks (run by git)"},
	{match: "*/.git/config", why: "the repository's git configuration"},
	{match: "~/.gitconfig", why: "the user's git configuration"},
	{match: "~/.config/git/", why: "the user's git configuration"},
	{match: "*/.gitattributes", why: "git attributes (filters run by git)"},
	{match: "*/.git/info/attributes", why: "git attributes (filters run by git)"},
	{match: "*/.git/modules/", why: "a submodule's repository (its hooks and configuration)"},
	{match: "*/.git/HEAD", why: "the repository's current branch"},
	{match: "*/.git/refs/", why: "the repository's branches and tags (history can be lost)"},
	{match: "*/.git/packed-refs", why: "the repository's branches and tags (history can be lost)"},
	{match: "*/.git/objects/", why: "the repository's history"},
	{match: "*/.gitmodules", why: "the submodules (their URLs and update commands)"},
	{match: "*/.husky/", why: "git hooks (husky)"},
	{match: "*/.mcp.json", why: "the agent's MCP servers (commands it starts)"},
	{match: "*/.github/workflows/", why: "CI workflows (run with the repository's secrets)"},
	{match: "*/.gitlab-ci.yml", why: "the CI pipeline (runs with the repository's secrets)"},
	{match: "*/.cargo/config.toml", why: "cargo's configuration (runners and wrappers it runs)"},
	{match: "*/.cargo/config", why: "cargo's configuration (runners and wrappers it runs)"},
	{match: "*/.yarnrc.yml", why: "yarn's configuration (yarnPath names the code yarn runs)"},
	{match: "*/.yarnrc", why: "yarn's configuration (the code yarn runs)"},
	{match: "*/.pnpmfile.cjs", why: "pnpm's hooks (run on every install)"},
	{match: "*/.devcontainer/", why: "the dev container's definition (its commands run when it starts)"},
	{match: "*/lefthook.yml", why: "git hooks (lefthook)"},
	{match: "*/.lefthook.yml", why: "git hooks (lefthook)"},
	{match: "*/.pre-commit-config.yaml", why: "the pre-commit hooks"},

	{match: "~/.config/approve-tui/", why: "approve-tui's configuration"},
	{match: "*/approve-tui/config.yaml", why: "approve-tui's configuration"},
	{match: "~/.hermes/", why: "approve-tui's and Hermes' database and settings"},
	{match: "*/.hermes/", why: "approve-tui's and Hermes' database and settings"},
	{match: "*/state.db", why: "approve-tui's database"},
	{match: "*/state.db-wal", why: "approve-tui's database"},
	{match: "*/state.db-journal", why: "approve-tui's database"},
	{match: "approve-tui*.db", why: "approve-tui's database"},

	{match: "*/.claude/settings.json", why: "the agent's hook settings (Claude Code)"},
	{match: "*/.claude/settings.local.json", why: "the agent's hook settings (Claude Code)"},
	{match: "~/.claude/", why: "the agent's settings (Claude Code)"},
	{match: "*/.claude/hooks/", why: "the agent's hooks (Claude Code)"},
	{match: "~/.claude.json", why: "the agent's settings (Claude Code)"},
	{match: "~/.codex/", why: "the agent's settings and hooks (Codex)"},
	{match: "*/.codex/", why: "the agent's settings and hooks (Codex)"},
	{match: "~/.gemini/", why: "the agent's settings (Gemini)"},
	{match: "*/.gemini/settings.json", why: "the agent's hook settings (Gemini)"},
	{match: "*/.cursor/", why: "the agent's settings (Cursor)"},
	{match: "*/.vscode/settings.json", why: "the editor's settings (runs tasks)"},
	{match: "*/.vscode/tasks.json", why: "the editor's tasks"},
}

// blockDevice reports whether p names a disk or partition, or memory.
func blockDevice(p string) bool {
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	name := p[len("/dev/"):]
	for _, pre := range []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "md", "dm-", "loop", "mapper/", "disk/", "sr", "nbd", "zd", "rbd"} {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	return false
}

// harmlessDevice: writing or reading these does nothing to the machine.
func harmlessDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty",
		"/dev/random", "/dev/urandom", "/dev/full":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/dev/pts/")
}

// place says where a path word points.
type place struct {
	word string // as written (Raw)
	// p is the path cleaned: absolute ("/x"), in a home ("~/x"), or
	// relative to the working directory ("x", "." for it).
	p string
	// inside: proven inside the workspace.
	inside bool
	// known: the word is certain (no variable, substitution, glob ...).
	known bool
	// tmp: below /tmp or /var/tmp (scratch space, outside but not a risk
	// by itself).
	tmp bool
	// sens is the matched sensitive target, nil for none.
	sens *sensitive
	// device: a disk or partition; net: /dev/tcp or /dev/udp.
	device, net, harmless bool
	// extra names a path the operator's configuration marks sensitive.
	extra string
}

// locate places a path word. value is its best reading (shell.Word.Value),
// raw as written, known whether value is certain.
func (a *analysis) locate(raw, value string, known bool) place {
	key := locKey{raw, value, a.dir, known}
	if pl, ok := a.placed[key]; ok {
		return pl
	}
	pl := a.locate1(raw, value, known)
	if a.placed == nil {
		a.placed = map[locKey]place{}
	}
	a.placed[key] = pl
	return pl
}

type locKey struct {
	raw, value, dir string
	known           bool
}

func (a *analysis) locate1(raw, value string, known bool) place {
	pl := place{word: raw, known: known}
	v := value
	if a.dir != "" && v != "" && !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "~") && !strings.HasPrefix(v, "$") {
		// A relative word after cd: where cd went.
		if a.dir == "?" {
			pl.p = "?/" + path.Clean(v)
			pl.known = false
			pl.sens = matchSensitive(path.Clean(v), "")
			if pl.sens == nil {
				pl.sens = matchSensitiveFold(path.Clean(v))
			}
			return pl
		}
		v = path.Join(a.dir, v)
	}
	if strings.HasPrefix(v, "/") && known && a.c.Cwd != "" {
		cwd := path.Clean(a.c.Cwd)
		if c := path.Clean(v); cwd != "/" && (c == cwd || strings.HasPrefix(c, cwd+"/")) {
			pl.inside = true
		}
	}
	// $HOME and ${HOME} are a home directory like ~.
	for _, h := range []string{"$HOME", "${HOME}"} {
		if v == h || strings.HasPrefix(v, h+"/") {
			v = "~" + v[len(h):]
		}
	}
	if strings.HasPrefix(v, "~") {
		// ~ or ~/x, or ~user/x: some home, surely outside the workspace
		// (the tilde is what made the word not certain, not where it is).
		if !strings.ContainsAny(raw, "$`*?[{") {
			pl.known = true
		}
		rest := v[1:]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			rest = rest[i:]
		} else {
			rest = ""
		}
		v = "~" + path.Clean("/"+rest)
		if v == "~/" {
			v = "~"
		}
	} else if strings.HasPrefix(v, "/") {
		v = path.Clean(v)
		if h := a.c.Home; h != "" && h != "/" {
			hc := path.Clean(h)
			if v == hc {
				v = "~"
			} else if strings.HasPrefix(v, hc+"/") {
				v = "~" + v[len(hc):]
			}
		}
	} else if v != "" && !strings.HasPrefix(v, "$") {
		c := path.Clean(v)
		escapes := c == ".." || strings.HasPrefix(c, "../")
		if !escapes && known {
			pl.inside = true
		}
		if !escapes && !known && globStaysInside(raw) {
			pl.inside = true
		}
		if a.c.Cwd != "" && strings.HasPrefix(a.c.Cwd, "/") {
			// Sensitive targets are matched on the absolute path too
			// (cd /etc && rm passwd is judged where it runs).
			abs := path.Join(a.c.Cwd, c)
			pl.p = abs
			if h := a.c.Home; h != "" && strings.HasPrefix(abs, path.Clean(h)+"/") {
				pl.p = "~" + abs[len(path.Clean(h)):]
			}
		} else {
			pl.p = c
		}
	}
	if pl.p == "" {
		pl.p = v
	}
	if a.noWorkspace {
		pl.inside = false
	}
	if strings.HasPrefix(pl.p, "/tmp/") || strings.HasPrefix(pl.p, "/var/tmp/") || pl.p == "/tmp" {
		pl.tmp = true
	}
	pl.device = blockDevice(pl.p)
	pl.harmless = harmlessDevice(pl.p)
	pl.net = strings.HasPrefix(pl.p, "/dev/tcp/") || strings.HasPrefix(pl.p, "/dev/udp/")
	pl.sens = matchSensitive(pl.p, a.c.Cwd)
	if pl.sens == nil && pl.p != v {
		pl.sens = matchSensitive(v, "")
	}
	for _, x := range a.c.Paths {
		if matchExtra(x, pl.p, a.c.Home) || matchExtra(x, v, a.c.Home) {
			pl.extra = x
			break
		}
	}
	return pl
}

// globStaysInside reports whether a relative word with a glob can only
// name paths below the working directory: no .. and no component that
// may match .. (".*").
func globStaysInside(raw string) bool {
	if strings.ContainsAny(raw, "$`~") || strings.HasPrefix(raw, "/") || strings.Contains(raw, "..") {
		return false
	}
	for _, comp := range strings.Split(raw, "/") {
		if strings.HasPrefix(comp, ".") && len(comp) > 1 && strings.ContainsAny(comp[1:2], "*?[") {
			return false
		}
	}
	return true
}

// foldedTargets are sensitiveTargets with their match in lower case.
var foldedTargets = func() []sensitive {
	out := make([]sensitive, len(sensitiveTargets))
	for i, s := range sensitiveTargets {
		s.match = strings.ToLower(s.match)
		out[i] = s
	}
	return out
}()

// matchSensitiveFold matches p against the targets ignoring case: on a
// file system that ignores case (macOS, Windows) .GIT/hooks is
// .git/hooks and .Claude/settings.json the agent's settings.
func matchSensitiveFold(p string) *sensitive {
	l := strings.ToLower(p)
	if l == p {
		return nil
	}
	return matchIn(foldedTargets, l)
}

// matchSensitive finds the first built-in sensitive target p is, or is
// below, exactly or ignoring case. cwd, when known, lets "*/name" match a
// relative path.
func matchSensitive(p, cwd string) *sensitive {
	if s := matchIn(sensitiveTargets, p); s != nil {
		return s
	}
	return matchSensitiveFold(p)
}

func matchIn(targets []sensitive, p string) *sensitive {
	if p == "" {
		return nil
	}
	ix := sensitiveIndex
	if len(targets) > 0 && &targets[0] == &foldedTargets[0] {
		ix = foldedIndex
	} else if len(targets) == 0 || &targets[0] != &sensitiveTargets[0] {
		ix = indexMatchers(compileMatchers(targets))
	}
	// The first target that matches: of those matched by the whole path
	// or a directory of it (looked up), and of the others (in order).
	best := -1
	if i, ok := ix.whole[p]; ok {
		best = i
	}
	for k := 0; k <= len(p); k++ {
		if k == len(p) || p[k] == '/' {
			if i, ok := ix.dirs[p[:k]]; ok && (best < 0 || i < best) {
				best = i
			}
		}
	}
	base := path.Base(p)
	for _, i := range ix.rest {
		if best >= 0 && i > best {
			break
		}
		m := &ix.ms[i]
		ok := false
		switch m.kind {
		case matchNameDir:
			ok = base == m.s || hasComponent(p, m.s)
		case matchName:
			ok = base == m.s || strings.HasSuffix(p, m.s) && (len(p) == len(m.s) || p[len(p)-len(m.s)-1] == '/')
		case matchExt:
			ok = strings.HasSuffix(base, m.s)
		case matchStem:
			ok = strings.HasPrefix(base, m.s) && !exampleFile(base)
		}
		if ok {
			best = i
			break
		}
	}
	if best < 0 {
		return nil
	}
	return &targets[best]
}

// A matchIndex finds the targets whose match is a whole path (exact, the
// root) or a directory by map, by the first index of each; rest are the
// indexes of the others, in order.
type matchIndex struct {
	ms          []matcher
	whole, dirs map[string]int
	rest        []int
}

func indexMatchers(ms []matcher) matchIndex {
	ix := matchIndex{ms: ms, whole: map[string]int{}, dirs: map[string]int{}}
	for i, m := range ms {
		switch m.kind {
		case matchExact, matchRoot:
			if _, ok := ix.whole[m.s]; !ok {
				ix.whole[m.s] = i
			}
		case matchDir:
			if _, ok := ix.dirs[m.s]; !ok {
				ix.dirs[m.s] = i
			}
		default:
			ix.rest = append(ix.rest, i)
		}
	}
	return ix
}

// A matcher is a sensitive target's match read once: its kind and the
// string the kind compares (see sensitive.match).
type matcher struct {
	kind uint8
	s    string
}

const (
	matchExact   = iota // "/abs/file": p is s
	matchNameDir        // "*/dir/": s is base or a component of p
	matchName           // "*/name": s is base or ends p after a slash
	matchExt            // "*.ext": base ends with s (".ext")
	matchStem           // "name*": base starts with s
	matchRoot           // "/"
	matchDir            // "/abs/dir/": p is s (no slash) or below it
)

var (
	sensitiveIndex = indexMatchers(compileMatchers(sensitiveTargets))
	foldedIndex    = indexMatchers(compileMatchers(foldedTargets))
)

func compileMatchers(targets []sensitive) []matcher {
	out := make([]matcher, len(targets))
	for i, t := range targets {
		m := t.match
		switch {
		case strings.HasPrefix(m, "*/"):
			name := m[2:]
			if strings.HasSuffix(name, "/") {
				out[i] = matcher{matchNameDir, strings.TrimSuffix(name, "/")}
			} else {
				out[i] = matcher{matchName, name}
			}
		case strings.HasPrefix(m, "*."):
			out[i] = matcher{matchExt, m[1:]}
		case strings.HasSuffix(m, "*"):
			out[i] = matcher{matchStem, strings.TrimSuffix(m, "*")}
		case m == "/":
			out[i] = matcher{matchRoot, m}
		case strings.HasSuffix(m, "/"):
			out[i] = matcher{matchDir, strings.TrimSuffix(m, "/")}
		default:
			out[i] = matcher{matchExact, m}
		}
	}
	return out
}

// matchExtra matches an operator's path (absolute, or ~/; a trailing /
// for a directory) against p.
func matchExtra(x, p, home string) bool {
	if x == "" || p == "" {
		return false
	}
	if home != "" && strings.HasPrefix(x, "~/") {
		if strings.HasPrefix(p, "/") {
			x = path.Join(home, x[2:]) + map[bool]string{true: "/"}[strings.HasSuffix(x, "/")]
		}
	}
	if strings.HasSuffix(x, "/") {
		d := strings.TrimSuffix(x, "/")
		return p == d || strings.HasPrefix(p, x)
	}
	return p == path.Clean(x)
}

// describe says where a place is, for a finding's why.
func (pl place) describe() string {
	switch {
	case pl.sens != nil:
		s := pl.sens.why
		if !pl.inside {
			s += ", outside the workspace"
		}
		return s
	case pl.extra != "":
		return "a path the configuration marks sensitive (" + pl.extra + ")"
	case pl.device:
		return "a disk device"
	case pl.inside:
		return "inside the workspace"
	case !pl.known:
		return "a path not certain, not proven inside the workspace"
	case pl.tmp:
		return "in the temporary directory"
	case strings.HasPrefix(pl.p, "~"):
		return "in a home directory, outside the workspace"
	}
	return "outside the workspace"
}

// exampleFile: a public key or a template holds no secret.
func exampleFile(base string) bool {
	for _, suf := range []string{".pub", ".example", ".sample", ".template", ".dist", ".tmpl"} {
		if strings.HasSuffix(base, suf) {
			return true
		}
	}
	return false
}

// hasComponent reports whether the directory dir is a component of p.
func hasComponent(p, dir string) bool {
	for i := 0; ; {
		j := strings.Index(p[i:], dir)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(dir)
		if (j == 0 || p[j-1] == '/') && (end == len(p) || p[end] == '/') {
			return true
		}
		i = j + 1
	}
}

// systemDirs are directories no project lives in: a command that runs in
// one of them, or below, has no workspace.
var systemDirs = []string{"/etc", "/usr", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sys", "/dev", "/run", "/var/lib", "/var/log", "/var/spool"}

// isWorkspace reports whether c's working directory can be a workspace.
// The directory is the requester's claim: one that says it works in /, in
// a system directory or in a home directory itself would otherwise make
// every relative path "inside the workspace", so none of those is one.
// An unknown directory ("") is the command's own, whatever it is.
func isWorkspace(c Context) bool {
	if c.Cwd == "" {
		return true
	}
	if !strings.HasPrefix(c.Cwd, "/") {
		return false
	}
	cwd := path.Clean(c.Cwd)
	if cwd == "/" || strings.Count(cwd, "/") == 1 {
		return false // / and /srv, /home, /root, /opt, /tmp ...
	}
	if strings.HasPrefix(cwd, "/home/") && strings.Count(cwd, "/") == 2 {
		return false // /home/USER
	}
	if c.Home != "" && cwd == path.Clean(c.Home) {
		return false
	}
	for _, d := range systemDirs {
		if cwd == d || strings.HasPrefix(cwd, d+"/") {
			return false
		}
	}
	return true
}
