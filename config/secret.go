package config

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"unicode/utf8"
)

// maxSecretSize bounds a secret file: a token, a key, a URL.
const maxSecretSize = 64 << 10

// Resolve reads the secret's value: the environment variable's (an error
// when it is unset or empty), or the file's without one trailing newline
// (an error when it cannot be read or is empty, or when it is not kept as
// a secret must be: its group or others may read or write it, another
// user than the one running or root owns it, or another user may replace
// it (a directory on its way they may write): CheckTrustedFile). A value
// of more than one
// line is refused: it would not fit in a header. Errors name the variable
// or the file, never the value; keep the value out of every message and
// log.
func (s Secret) Resolve() (string, error) {
	switch {
	case s.Env != "":
		v, ok := os.LookupEnv(s.Env)
		switch {
		case !ok:
			return "", fmt.Errorf("%s is not set", s.Env)
		case strings.TrimSpace(v) == "":
			return "", fmt.Errorf("%s is set but empty", s.Env)
		case strings.ContainsAny(v, "\r\n"):
			return "", fmt.Errorf("%s holds more than one line", s.Env)
		}
		return v, nil
	case s.File != "":
		fh, err := os.Open(s.File)
		if err != nil {
			return "", fmt.Errorf("secret file %s cannot be read: %v", s.File, bare(err))
		}
		defer fh.Close()
		// The file read, not the path (which may have changed since).
		fi, err := fh.Stat()
		if err != nil {
			return "", fmt.Errorf("secret file %s cannot be read: %v", s.File, bare(err))
		}
		if err := checkTrustedFile("secret file "+s.File, s.File, fi, os.Geteuid(), true); err != nil {
			return "", err
		}
		b, err := io.ReadAll(io.LimitReader(fh, maxSecretSize+1))
		if err != nil {
			return "", fmt.Errorf("secret file %s cannot be read: %v", s.File, bare(err))
		}
		if len(b) > maxSecretSize {
			return "", fmt.Errorf("secret file %s is larger than %d KiB: not a secret", s.File, maxSecretSize>>10)
		}
		v := strings.TrimSuffix(string(b), "\n")
		v = strings.TrimSuffix(v, "\r")
		switch {
		case strings.TrimSpace(v) == "":
			return "", fmt.Errorf("secret file %s is empty", s.File)
		case strings.ContainsAny(v, "\r\n"):
			return "", fmt.Errorf("secret file %s holds more than one line", s.File)
		}
		return v, nil
	}
	return "", errors.New("no secret named (want NAME_env or NAME_file)")
}

// Source is where the secret is, for messages: "$NTFY_TOKEN" or
// "file /etc/approve-tui/ntfy-token".
func (s Secret) Source() string {
	switch {
	case s.Env != "":
		return "$" + s.Env
	case s.File != "":
		return "file " + s.File
	}
	return "(none)"
}

// SecretStatus is what may be said of a secret: where it is, whether it
// resolves and how long it is, never the value.
type SecretStatus struct {
	Source string
	// OK: it resolves; Length is then its length in characters.
	OK     bool
	Length int
	// Problem is Resolve's error when not OK.
	Problem string
}

// Status resolves the secret and keeps only what may be said of it.
func (s Secret) Status() SecretStatus {
	st := SecretStatus{Source: s.Source()}
	v, err := s.Resolve()
	if err != nil {
		st.Problem = err.Error()
		return st
	}
	st.OK, st.Length = true, utf8.RuneCountInString(v)
	return st
}

// String is the status in words: "$NTFY_TOKEN (set, 24 characters)",
// "file /etc/x (readable, 32 characters)", "$NTFY_TOKEN (NTFY_TOKEN is not
// set)".
func (st SecretStatus) String() string {
	if !st.OK {
		// "$NTFY_TOKEN (not set)", not "$NTFY_TOKEN (NTFY_TOKEN is not set)".
		p := st.Problem
		name := strings.TrimPrefix(st.Source, "$")
		for _, pre := range []string{name + " is ", name + " ", "secret " + st.Source + " is ", "secret " + st.Source + " "} {
			if strings.HasPrefix(p, pre) {
				p = p[len(pre):]
				break
			}
		}
		return fmt.Sprintf("%s (%s)", st.Source, p)
	}
	state := "set"
	if strings.HasPrefix(st.Source, "file ") {
		state = "readable"
	}
	return fmt.Sprintf("%s (%s, %d characters)", st.Source, state, st.Length)
}

// Redacted says where the secret is and whether it resolves, never its
// value: for anything that must show a secret's presence.
func (s Secret) Redacted() string { return s.Status().String() }

// Redacted marks what a printed URL leaves out.
const Redacted = "…redacted…"

// RedactURL is raw as it may be printed: no user info, every query value
// replaced by …redacted… (ntfy's ?auth=, a token), no fragment; with
// secretPath (a URL that is itself the secret, such as Slack's incoming
// webhook), the path too but for a first segment that is a plain word
// followed by more: https://hooks.slack.com/services/…redacted….
func RedactURL(raw string, secretPath bool) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "(not a URL)"
	}
	var b strings.Builder
	b.WriteString(u.Scheme + "://")
	if u.User != nil {
		b.WriteString(Redacted + "@")
	}
	b.WriteString(u.Host)
	if secretPath {
		segs := strings.Split(strings.Trim(u.EscapedPath(), "/"), "/")
		if len(segs) > 1 && plainWord(segs[0]) {
			b.WriteString("/" + segs[0])
		}
		if u.EscapedPath() != "" && u.EscapedPath() != "/" {
			b.WriteString("/" + Redacted)
		}
	} else {
		b.WriteString(u.EscapedPath())
	}
	if u.RawQuery != "" {
		var qs []string
		for _, kv := range strings.Split(u.RawQuery, "&") {
			k, _, _ := strings.Cut(kv, "=")
			if !plainWord(strings.ToLower(k)) {
				k = Redacted
			}
			qs = append(qs, k+"="+Redacted)
		}
		b.WriteString("?" + strings.Join(qs, "&"))
	}
	return b.String()
}

// plainWord: 1 to 32 lower-case letters, '_' or '-' (a path word such as
// "services", a query name such as "auth"), never a token.
func plainWord(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
