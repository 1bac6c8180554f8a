package risk

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/risk/catalogue"
	"github.com/approve-tui/approve-tui/shell"
)

// What keeps a command from being proven read-only beyond its words: the
// environment it is given, secrets it names outside its targets, and the
// environment it prints. A command proven read-only runs with no person
// asked (--unasked read-only), so each of these fails closed.

// proofEnv is the environment a command may be given, set on the line, and
// stay proven read-only: locale, terminal and colour settings, and
// switches that only quiet a program. Any other variable may change what
// the program loads or runs (TAR_OPTIONS, RIPGREP_CONFIG_PATH,
// TF_CLI_CONFIG_FILE, GIT_INDEX_FILE, a variable a program reads that the
// analysis has not heard of): the command is not proven.
var proofEnv = map[string]bool{
	"LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true, "COLUMNS": true, "LINES": true,
	"NO_COLOR": true, "FORCE_COLOR": true, "CLICOLOR": true, "CLICOLOR_FORCE": true, "COLORTERM": true,
	"CI": true, "GIT_OPTIONAL_LOCKS": true, "GIT_TERMINAL_PROMPT": true, "GIT_FLUSH": true,
	"POSIXLY_CORRECT": true, "TIME_STYLE": true, "QUOTING_STYLE": true, "BLOCK_SIZE": true, "LS_COLORS": true,
	"MANWIDTH": true, "SYSTEMD_COLORS": true, "SYSTEMD_URLIFY": true, "GH_NO_UPDATE_NOTIFIER": true,
	"NO_UPDATE_NOTIFIER": true, "PYTHONDONTWRITEBYTECODE": true, "PYTHONUNBUFFERED": true,
	"RUST_BACKTRACE": true, "PIP_DISABLE_PIP_VERSION_CHECK": true, "DEBIAN_FRONTEND": true,
}

// envKeepsProof says whether setting as for a command leaves its proof.
func envKeepsProof(as shell.Assign) bool {
	n := as.Name
	if proofEnv[n] || strings.HasPrefix(n, "LC_") {
		return true
	}
	switch {
	case n == "PATH" || n == "CDPATH":
		return true // the commands it changes are rated where they are found (lookupChanged, chdir)
	case strings.HasPrefix(n, "GIT_TRACE") || n == "SSLKEYLOGFILE" || n == "HISTFILE":
		return true // envAssign rates the file they name
	}
	// PAGER=cat, GIT_PAGER=, LESS=-R: the pager only prints.
	return as.Value.Known && plainPaging(n, as.Value.Value)
}

// proofEnvAssign takes the proof away for a variable the line sets that
// is not known to leave what programs do unchanged. A bare assignment
// (PAGER=x; git log) counts as well: the variable may already be
// exported, and the commands after it then get the new value.
func (a *analysis) proofEnvAssign(as shell.Assign, cmd *shell.Command) {
	if envKeepsProof(as) {
		return
	}
	a.readOnly = false
	w := assignWord(as)
	for _, f := range a.findings {
		if len(f.Words) > 0 && f.Words[0] == w {
			return // rated already (GIT_PAGER=sh, LD_PRELOAD=...)
		}
	}
	why := as.Name + " may change what the commands after it load, run or write: not proven read-only"
	if len(cmd.Words) > 0 && !envPrinters[cmd.Words[0].Value] {
		why = as.Name + " may change what " + commandName(cmd) + " loads, runs or writes: not proven read-only"
	}
	a.add(Finding{Rule: "flow", Level: low, Words: []string{w}, Why: why})
}

// searchers print the lines of files that match; recursive, they read
// every file below a directory.
var searchers = map[string]bool{"grep": true, "egrep": true, "fgrep": true, "zgrep": true, "rg": true, "ag": true, "ack": true}

// secretHolders are directories with keys and credentials somewhere below
// them: a search through all of them is a hunt for secrets (grep -r
// password /etc).
var secretHolders = map[string]bool{"/": true, "/etc": true, "/root": true, "/home": true, "/var": true, "/run": true,
	"/proc": true, "/opt": true, "/srv": true, "~": true, "~/.config": true, "~/.local": true, "~/.local/share": true}

// secretName (compiled on first use, not in every process's start-up):
// a variable whose name says it holds a credential.
var secretName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(token|secret|passw|api_?key|private_?key|access_?key|credential|auth)`)
})

// secretNames and credentialOps are secretName's and credentialOp's
// alternatives, lower case, for secretNamed and credentialOpNamed.
var (
	secretNames   = []string{"token", "secret", "passw", "apikey", "api_key", "privatekey", "private_key", "accesskey", "access_key", "credential", "auth"}
	credentialOps = []string{"credential", "token", "password", "secret-value"}
)

// secretNamed is secretName().MatchString(s) without the expression for
// ASCII s: a search for its words, ASCII letters of either case alike. (A
// word with other characters goes to the expression, whose case folding
// also takes the Kelvin sign for k and the long s for s.)
func secretNamed(s string) bool {
	if !isASCII(s) {
		return secretName().MatchString(s)
	}
	return containsFoldAny(s, secretNames)
}

// credentialOpNamed is credentialOp().MatchString(s), as secretNamed is
// secretName's.
func credentialOpNamed(s string) bool {
	if !isASCII(s) {
		return credentialOp().MatchString(s)
	}
	return containsFoldAny(s, credentialOps)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// containsFoldAny reports whether ASCII s holds one of the lower-case
// words, ASCII letters of either case alike.
func containsFoldAny(s string, words []string) bool {
	for i := 0; i < len(s); i++ {
		for _, w := range words {
			if len(s)-i >= len(w) && strings.EqualFold(s[i:i+len(w)], w) {
				return true
			}
		}
	}
	return false
}

// envFilter: a jq filter that reads the environment (env, env.NAME).
var envFilter = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[^A-Za-z0-9_$.])env($|[^A-Za-z0-9_])`) })

// cloudCLIs name an operation in a word; credentialOp is one that hands
// out credentials (aws sso get-role-credentials, ... get-login-password).
var cloudCLIs = map[string]bool{"aws": true, "gcloud": true, "az": true, "doctl": true, "hcloud": true, "linode-cli": true,
	"scw": true, "oci": true, "ibmcloud": true, "vultr-cli": true, "exo": true, "civo": true, "upcloud": true, "eksctl": true}
var credentialOp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(credential|token|password|secret-value)`) })

// contentReaders print what they read: of a disk device, every file on it.
var contentReaders = map[string]bool{"cat": true, "tac": true, "head": true, "tail": true, "strings": true, "od": true,
	"xxd": true, "hexdump": true, "base64": true, "less": true, "more": true, "grep": true, "egrep": true, "fgrep": true,
	"rg": true, "nl": true, "cut": true, "sort": true, "uniq": true, "fold": true, "column": true, "bat": true, "diff": true, "cmp": true}

func prog0(words []string) string { return path.Base(words[0]) }

// envPrinters print the environment, or one variable of it.
var envPrinters = map[string]bool{"env": true, "printenv": true, "export": true, "set": true, "declare": true, "typeset": true}

// proofSecrets rates what a command the catalogue proves read-only names
// besides its targets: a path of a secret in any word or option value
// (last -f /etc/shadow, du --files0-from=~/.ssh/id_rsa), a variable whose
// name says it holds a credential printed (echo $GITHUB_TOKEN, printenv
// AWS_SECRET_ACCESS_KEY), the whole environment printed (env, printenv:
// tokens and keys are in it), and getent's password databases. A read of
// a secret is MEDIUM, as cat ~/.ssh/id_rsa is; printing the whole
// environment is LOW but not proven read-only.
func (a *analysis) proofSecrets(cmd *shell.Command, words []string, res *catalogue.Result) {
	if !res.ReadOnly || len(words) == 0 {
		return
	}
	for k, w := range words[1:] {
		if slices.ContainsFunc(res.Targets, func(t catalogue.Target) bool {
			return t.Word == w && (t.Kind == catalogue.KindPattern || t.Kind == catalogue.KindScript || t.Kind == catalogue.KindCode)
		}) {
			continue // jq .env, grep ~/.ssh: a filter or a pattern, not a path
		}
		v := w
		if i := strings.IndexByte(v, '='); strings.HasPrefix(v, "-") && i > 0 {
			v = v[i+1:]
		} else if len(v) > 2 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v[2:3], "/~.") {
			v = v[2:] // -f/etc/shadow
		}
		if v == "" || !strings.ContainsAny(v[:1], "/~.$") {
			continue
		}
		raw, known := v, a.wordKnown(cmd, w)
		if cmd != nil && k+1 < len(cmd.Words) && cmd.Words[k+1].Value == w {
			raw = cmd.Words[k+1].Raw
		}
		pl := a.locate(raw, v, known)
		switch {
		case pl.sens != nil && pl.sens.secret || pl.extra != "":
			a.rateTarget(catalogue.Read, pl, false, res.Program)
		case pl.device && contentReaders[prog0(words)]:
			a.secretRead = append(a.secretRead, pl.word)
			a.add(Finding{Rule: "target", Level: medium, Effect: string(catalogue.Read), Words: []string{pl.word},
				Why: "reads " + pl.word + ", a disk device (every file on it, secrets too)"})
		}
	}
	prog := path.Base(words[0])
	if searchers[prog] && (prog == "rg" || prog == "ag" || prog == "ack" || recursiveFlag(words)) {
		for _, t := range res.Targets {
			if t.Kind != catalogue.KindPath || t.From != "arg" {
				continue
			}
			raw := t.Word
			if sw, ok := a.shellWord(cmd, t.Word); ok {
				raw = sw.Raw
			}
			if pl := a.locate(raw, t.Word, a.wordKnown(cmd, t.Word)); secretHolders[pl.p] {
				a.secretRead = append(a.secretRead, pl.word)
				a.add(Finding{Rule: "target", Level: medium, Effect: string(catalogue.Read), Words: []string{words[0], pl.word},
					Why: "searches every file below " + pl.word + ", which holds keys and credentials"})
			}
		}
	}
	switch {
	case prog == "jq" || prog == "yq" || prog == "gojq":
		for _, w := range words[1:] {
			if strings.Contains(w, "$ENV") || strings.Contains(w, "env") && envFilter().MatchString(w) {
				lvl, why := low, "prints the environment (tokens and keys in it too): not proven read-only"
				if secretNamed(w) {
					lvl, why = medium, "prints a variable of the environment that holds a credential"
					a.secretRead = append(a.secretRead, w)
				}
				a.readOnly = false
				a.add(Finding{Rule: "target", Level: lvl, Effect: string(catalogue.Read), Words: []string{words[0], w}, Why: why})
				break
			}
		}
	case prog == "ps":
		for _, w := range words[1:] {
			if !strings.HasPrefix(w, "-") && strings.ContainsRune(w, 'e') || w == "-E" {
				a.secretRead = append(a.secretRead, w)
				a.add(Finding{Rule: "target", Level: medium, Effect: string(catalogue.Read), Words: []string{words[0], w},
					Why: "prints the environment of every process shown (tokens and keys in it too)"})
				break
			}
		}
	case prog == "terraform" || prog == "tofu":
		// -json prints every value, the sensitive ones in clear; -raw
		// NAME one value, in clear even when it is sensitive (which the
		// line does not tell): not proven read-only.
		for _, sub := range []string{"output", "show"} {
			switch {
			case !slices.Contains(words[1:], sub):
			case slices.Contains(words, "-json"):
				a.secretRead = append(a.secretRead, words[0])
				a.add(Finding{Rule: "target", Level: medium, Effect: string(catalogue.Read), Words: []string{words[0], sub, "-json"},
					Why: "terraform " + sub + " -json prints the sensitive values in clear too"})
			case sub == "output" && slices.Contains(words, "-raw"):
				a.readOnly = false
				a.add(Finding{Rule: "target", Level: low, Effect: string(catalogue.Read), Words: []string{words[0], sub, "-raw"},
					Why: "terraform output -raw prints the value in clear even when it is sensitive: not proven read-only"})
			}
		}
	case prog == "helm":
		if len(words) > 2 && words[1] == "get" && (words[2] == "manifest" || words[2] == "all") {
			a.secretRead = append(a.secretRead, words[0])
			a.add(Finding{Rule: "target", Level: medium, Effect: string(catalogue.Read), Words: words[:3],
				Why: "prints the release's manifests, its Secrets' data too"})
		}
	case prog == "kubectl" || prog == "oc":
		// kubectl get Secret, secrets.v1, secret,configmap -o yaml: the
		// lower-case plain forms are rated where secrets are printed.
		out := slices.ContainsFunc(words, func(w string) bool {
			return w == "-o" || strings.HasPrefix(w, "-o") || strings.HasPrefix(w, "--output")
		})
		for _, w := range words[1:] {
			if !out || strings.HasPrefix(w, "-") || w == "secret" || w == "secrets" || strings.HasPrefix(w, "secret/") {
				continue
			}
			for _, part := range strings.Split(strings.ToLower(w), ",") {
				part, _, _ = strings.Cut(part, "/")
				part, _, _ = strings.Cut(part, ".")
				if part == "secret" || part == "secrets" {
					a.secretRead = append(a.secretRead, w)
					a.add(Finding{Rule: "target", Level: medium, Effect: string(catalogue.Read), Words: []string{words[0], w},
						Why: "prints Kubernetes secrets' data (" + w + ")"})
					break
				}
			}
		}
	case cloudCLIs[prog]:
		for _, w := range words[1:] {
			if !strings.HasPrefix(w, "-") && credentialOpNamed(w) {
				a.secretRead = append(a.secretRead, w)
				a.add(Finding{Rule: "target", Level: medium, Effect: string(catalogue.Read), Words: []string{words[0], w},
					Why: w + " prints credentials"})
				break
			}
		}
	case prog == "getent" && len(words) > 1 && (words[1] == "shadow" || words[1] == "gshadow"):
		a.secretRead = append(a.secretRead, words[0])
		a.add(Finding{Rule: "target", Level: medium, Effect: string(catalogue.Read), Words: words[:2],
			Why: "prints the password hashes"})
	case envPrinters[prog]:
		names := 0
		for _, w := range words[1:] {
			if strings.HasPrefix(w, "-") {
				continue
			}
			names++
			if n, _, _ := strings.Cut(w, "="); prog == "printenv" && secretNamed(n) {
				a.secretRead = append(a.secretRead, w)
				a.add(Finding{Rule: "target", Level: medium, Effect: string(catalogue.Read), Words: []string{words[0], w},
					Why: "prints " + w + ", a variable that holds a credential"})
			}
		}
		if names == 0 && (prog == "env" || prog == "printenv") {
			a.readOnly = false
			a.add(Finding{Rule: "target", Level: low, Effect: string(catalogue.Read), Words: []string{words[0]},
				Why: "prints the whole environment (tokens and keys in it too): not proven read-only"})
		}
	}
	if cmd == nil || !printers[prog] && prog != "printf" {
		return
	}
	for _, w := range cmd.Words[1:] {
		for _, n := range varNames(w.Raw) {
			if secretNamed(n) {
				a.secretRead = append(a.secretRead, w.Raw)
				a.add(Finding{Rule: "target", Level: medium, Effect: string(catalogue.Read), Words: []string{words[0], w.Raw},
					Why: "prints $" + n + ", a variable that holds a credential"})
			}
		}
	}
}

// varNames lists the variables a word expands ($NAME, ${NAME...}).
func varNames(raw string) []string {
	var out []string
	for i := 0; i < len(raw); i++ {
		if raw[i] != '$' || i+1 >= len(raw) {
			continue
		}
		j := i + 1
		if raw[j] == '{' {
			j++
		}
		k := j
		for k < len(raw) && (raw[k] == '_' || raw[k] >= 'A' && raw[k] <= 'Z' || raw[k] >= 'a' && raw[k] <= 'z' || k > j && raw[k] >= '0' && raw[k] <= '9') {
			k++
		}
		if k > j {
			out = append(out, raw[j:k])
		}
		i = k - 1
	}
	return out
}

// fromWord is the word that gave a target: the option, or for an operand
// the program.
func fromWord(from string, words []string) string {
	if from == "arg" || from == "" {
		return words[0]
	}
	return from
}

// asWritten puts each word that is not certain ($(cat list), "$D"/x, a
// process substitution) back as the line writes it: its best reading may
// be empty or a guess. ws is not changed.
func (a *analysis) asWritten(cmd *shell.Command, ws []string) []string {
	if cmd == nil {
		return ws
	}
	var out []string
	for k, w := range ws {
		if sw, ok := a.shellWord(cmd, w); ok && !sw.Known && sw.Raw != w {
			if out == nil {
				out = slices.Clone(ws)
			}
			out[k] = sw.Raw
		}
	}
	if out == nil {
		return ws
	}
	return out
}

// arithVar: an arithmetic context that names a variable: $((x)), $[x],
// an array index ${a[x]}, a substring offset ${s:x}.
var arithVar = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$(\(\(|\[)[^)\]]*[A-Za-z_]|\$\{[#!]?[A-Za-z_][A-Za-z0-9_]*(\[[^]]*[A-Za-z_]|:([A-Za-z_]|[^-=?+}][^}]*[A-Za-z_]))`)
})

// proofWords rates what the shell itself runs while it expands a read-only
// command's words: ${X@P} expands X as a prompt, running the command
// substitutions in its value; test -v 'a[$(cmd)]' evaluates the array
// subscript, running cmd (bash does both, quoted or not).
func (a *analysis) proofWords(cmd *shell.Command) {
	for k, w := range cmd.Words {
		if (strings.Contains(w.Raw, "$((") || strings.Contains(w.Raw, "$[") || strings.Contains(w.Raw, "${")) && arithVar().MatchString(w.Raw) {
			// $((x)): x's value is evaluated as an expression, and an
			// array subscript in it runs its command substitutions.
			a.readOnly = false
			a.add(Finding{Rule: "opaque", Level: low, Words: []string{w.Raw},
				Why: "arithmetic on a variable evaluates the variable's value, which can run commands: not proven read-only"})
		}
		if k > 0 && strings.Contains(w.Raw, "#(") && path.Base(cmd.Words[0].Value) == "tmux" {
			a.readOnly = false
			a.add(Finding{Rule: "opaque", Level: medium, Effect: string(catalogue.ExecArg), Words: []string{w.Raw},
				Why: "tmux runs the shell command in a #(...) of a format"})
		}
		if strings.Contains(w.Raw, "@P}") {
			a.readOnly = false
			a.add(Finding{Rule: "opaque", Level: medium, Effect: string(catalogue.ExecArg), Words: []string{w.Raw},
				Why: "expands a variable as a prompt, which runs the command substitutions its value holds"})
		}
		if k == 0 || k+1 >= len(cmd.Words) || w.Value != "-v" {
			continue
		}
		if name := cmd.Words[0].Value; name != "test" && name != "[" && (name != "builtin" || len(cmd.Words) < 2 || cmd.Words[1].Value != "test") {
			continue
		}
		if next := cmd.Words[k+1]; strings.Contains(next.Value, "[") {
			a.readOnly = false
			a.add(Finding{Rule: "opaque", Level: medium, Effect: string(catalogue.ExecArg), Words: []string{w.Raw, next.Raw},
				Why: "test -v evaluates the array subscript in " + next.Raw + ", which runs the command substitutions in it"})
		}
	}
}

// assignWord is an assignment as the line writes it: NAME=VALUE (env's
// NAME=VALUE operand is the whole word already).
func assignWord(as shell.Assign) string {
	if strings.HasPrefix(as.Value.Raw, as.Name+"=") {
		return as.Value.Raw
	}
	return as.Name + "=" + as.Value.Raw
}
