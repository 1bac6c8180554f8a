package trust

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
)

// Signer is one line of an allowed_signers file.
type Signer struct {
	Line        int           // 1-based line number in its file
	Principals  string        // the comma-separated pattern list, as written
	Namespaces  []string      // the namespaces="..." patterns; nil when the option is absent
	ValidAfter  time.Time     // zero when absent
	ValidBefore time.Time     // zero when absent
	Key         ssh.PublicKey // the signer's public key
	Comment     string        // free text after the key; never identity
}

// AllowedSigners is a parsed allowed_signers file.
type AllowedSigners struct {
	Path    string
	Signers []Signer
}

// ParseError is a malformed allowed_signers line: FILE:LINE: message.
type ParseError struct {
	Path string
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg) }

// maxTrustFile bounds the size of a trust file.
const maxTrustFile = 1 << 20

// ParseAllowedSigners parses the OpenSSH allowed_signers format (see
// ssh-keygen(1), ALLOWED SIGNERS). Blank lines and lines starting with
// '#' are skipped. Every other line is
//
//	PRINCIPALS [OPTIONS] KEYTYPE BASE64 [COMMENT]
//
// with options namespaces="a,b", valid-after="T", valid-before="T" (T is
// YYYYMMDDZ or YYYYMMDDHHMM[SS]Z: a time without Z, which OpenSSH reads
// in the local time zone, is refused, since the environment that sets the
// zone is the agent's). cert-authority is refused: a certificate authority would let
// whoever holds its key mint signers, and approve-tui verifies plain keys
// only. Any error fails the whole file: a trust file is used whole or not
// at all. path only names the file in errors.
func ParseAllowedSigners(path string, data []byte) (*AllowedSigners, error) {
	as := &AllowedSigners{Path: path}
	if len(data) > maxTrustFile {
		return nil, &ParseError{path, 0, fmt.Sprintf("larger than %d bytes", maxTrustFile)}
	}
	text := strings.TrimSuffix(string(data), "\n")
	if text == "" {
		return as, nil
	}
	for i, raw := range strings.Split(text, "\n") {
		n := i + 1
		fail := func(format string, a ...any) error {
			return &ParseError{path, n, fmt.Sprintf(format, a...)}
		}
		for i := 0; i < len(raw); i++ {
			if c := raw[i]; c < 0x20 && c != '\t' || c == 0x7f {
				if c == '\r' && i == len(raw)-1 {
					return nil, fail("carriage return at the end of the line: save the file with Unix line ends")
				}
				return nil, fail("control byte 0x%02x at column %d", c, i+1)
			}
		}
		line := strings.TrimLeft(raw, " \t")
		if line == "" || line[0] == '#' {
			continue
		}
		principals, rest := cutField(line)
		if principals == "" {
			return nil, fail("no principals")
		}
		if principals[0] == '"' {
			return nil, fail("quoted principals are not supported")
		}
		for _, p := range strings.Split(principals, ",") {
			if p == "" || p == "!" {
				return nil, fail("empty principal in %q", clip(principals))
			}
		}
		s := Signer{Line: n, Principals: principals}
		// The key comes next, or options and then the key.
		key, comment, err := parseKey(rest)
		if err != nil {
			opts, after, oerr := cutOptions(rest)
			if oerr != nil {
				return nil, fail("%v", oerr)
			}
			if oerr := s.applyOptions(opts); oerr != nil {
				return nil, fail("%v", oerr)
			}
			if key, comment, err = parseKey(after); err != nil {
				return nil, fail("%v", err)
			}
		}
		s.Key = key
		s.Comment = comment
		as.Signers = append(as.Signers, s)
	}
	return as, nil
}

// parseKey reads "KEYTYPE BASE64 [COMMENT]" and nothing else.
func parseKey(text string) (ssh.PublicKey, string, error) {
	typ, rest := cutField(text)
	b64, comment := cutField(rest)
	if typ == "" || b64 == "" {
		return nil, "", fmt.Errorf("no public key")
	}
	if strings.HasPrefix(typ, "cert-authority") || strings.Contains(typ, "-cert-v01@openssh.com") {
		return nil, "", fmt.Errorf("certificates are not supported: list each signer's own key")
	}
	key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(typ + " " + b64))
	if err != nil {
		return nil, "", fmt.Errorf("bad public key: %v", err)
	}
	if key.Type() != typ {
		return nil, "", fmt.Errorf("key type %q does not match the key's own type %q", typ, key.Type())
	}
	return key, strings.TrimSpace(comment), nil
}

// cutField splits off the first whitespace-separated field.
func cutField(s string) (string, string) {
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeft(s[i:], " \t")
}

type option struct {
	name, value string
	hasValue    bool
}

// cutOptions reads an OpenSSH option list (name or name="value", comma
// separated, no spaces outside quotes) and returns it and the text after.
func cutOptions(s string) ([]option, string, error) {
	var opts []option
	i := 0
	for {
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ',' && s[i] != ' ' && s[i] != '\t' {
			i++
		}
		o := option{name: s[start:i]}
		if o.name == "" {
			return nil, "", fmt.Errorf("empty option at column %d", start+1)
		}
		if i < len(s) && s[i] == '=' {
			i++
			if i >= len(s) || s[i] != '"' {
				return nil, "", fmt.Errorf("option %s needs a double-quoted value", o.name)
			}
			i++
			end := strings.IndexByte(s[i:], '"')
			if end < 0 {
				return nil, "", fmt.Errorf("option %s has no closing quote", o.name)
			}
			o.value, o.hasValue = s[i:i+end], true
			if strings.ContainsAny(o.value, "\\") {
				return nil, "", fmt.Errorf("option %s: backslashes are not supported", o.name)
			}
			i += end + 1
		}
		opts = append(opts, o)
		if i < len(s) && s[i] == ',' {
			i++
			continue
		}
		if i < len(s) && s[i] != ' ' && s[i] != '\t' {
			return nil, "", fmt.Errorf("unexpected %q after option %s", s[i], o.name)
		}
		return opts, strings.TrimLeft(s[i:], " \t"), nil
	}
}

func (s *Signer) applyOptions(opts []option) error {
	seen := map[string]bool{}
	for _, o := range opts {
		name := strings.ToLower(o.name)
		if seen[name] {
			return fmt.Errorf("option %s given twice", name)
		}
		seen[name] = true
		switch name {
		case "cert-authority":
			return fmt.Errorf("cert-authority is not supported: approve-tui trusts each signer's own key only, list the keys")
		case "namespaces":
			if !o.hasValue || o.value == "" {
				return fmt.Errorf("namespaces needs a non-empty quoted list")
			}
			s.Namespaces = strings.Split(o.value, ",")
		case "valid-after", "valid-before":
			if !o.hasValue {
				return fmt.Errorf("%s needs a quoted time", name)
			}
			t, err := parseValidity(o.value)
			if err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			if name == "valid-after" {
				s.ValidAfter = t
			} else {
				s.ValidBefore = t
			}
		default:
			return fmt.Errorf("unknown option %q", clip(o.name))
		}
	}
	if !s.ValidAfter.IsZero() && !s.ValidBefore.IsZero() && !s.ValidBefore.After(s.ValidAfter) {
		return fmt.Errorf("valid-before is not after valid-after")
	}
	return nil
}

// parseValidity reads YYYYMMDDZ or YYYYMMDDHHMM[SS]Z. OpenSSH reads a
// time without its Z in the local time zone; the verifier runs with the
// agent's environment, whose TZ would then move a key's expiry, so a time
// without Z is refused.
func parseValidity(v string) (time.Time, error) {
	if !strings.HasSuffix(v, "Z") && !strings.HasSuffix(v, "z") {
		return time.Time{}, fmt.Errorf("%q has no trailing Z: write validity times in UTC, ending in Z (a local time would be read in the zone the environment sets)", clip(v))
	}
	loc := time.UTC
	v = v[:len(v)-1]
	var layout string
	switch len(v) {
	case 8:
		layout = "20060102"
	case 12:
		layout = "200601021504"
	case 14:
		layout = "20060102150405"
	default:
		return time.Time{}, fmt.Errorf("%q is not YYYYMMDDZ or YYYYMMDDHHMM[SS]Z", clip(v+"Z"))
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return time.Time{}, fmt.Errorf("%q is not all digits", clip(v))
		}
	}
	t, err := time.ParseInLocation(layout, v, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a valid time", v)
	}
	return t, nil
}

// TrustFileError says why a trust file was refused before it was read.
type TrustFileError struct {
	Path   string // the file or directory at fault
	Reason string
}

func (e *TrustFileError) Error() string {
	return fmt.Sprintf("trust file refused: %s: %s", e.Path, e.Reason)
}

// LoadTrustFile reads and parses an allowed_signers file, refusing one
// that someone other than root or the current user could change:
//
//   - the file must be a regular file owned by root or the effective
//     user, not writable by group or others;
//   - every directory above it, up to /, must be owned by root or the
//     effective user and not writable by group or others, except a
//     root-owned directory with the sticky bit (/tmp), where nobody else
//     can rename or remove what is not theirs;
//   - a symbolic link is followed, and the directories that hold each
//     link are checked as well as those of the final file (so whoever
//     could swap the link is held to the same rule). The file is then
//     opened without following links and checked again through its open
//     descriptor.
//
// Where the verifier runs as the agent's own user (a hook, run), a file
// that user owns is a file the agent can rewrite: use LoadTrustFileOwnedBy
// with the owners that are not the agent (root, the operators' uid).
func LoadTrustFile(path string) (*AllowedSigners, error) {
	return LoadTrustFileOwnedBy(path, uint32(os.Geteuid()))
}

// LoadTrustFileOwnedBy is LoadTrustFile with the owners allowed for the
// file, the links to it and every directory above them given explicitly:
// root and the uids listed (none: root alone). Group- and world-writable
// entries are refused as there.
func LoadTrustFileOwnedBy(path string, owners ...uint32) (*AllowedSigners, error) {
	c := checker{owners: append([]uint32{0}, owners...)}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &TrustFileError{path, err.Error()}
	}
	// Check the directories of the path as given (the link's home).
	if err := c.checkAncestors(filepath.Dir(abs)); err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, &TrustFileError{path, fmt.Sprintf("cannot resolve: %v", err)}
	}
	if real != abs {
		// Each intermediate link: check the directory holding it.
		cur := abs
		for i := 0; i < 40; i++ {
			fi, err := os.Lstat(cur)
			if err != nil || fi.Mode()&os.ModeSymlink == 0 {
				break
			}
			if err := c.checkOwnerMode(cur, fi, false); err != nil {
				return nil, err
			}
			target, err := os.Readlink(cur)
			if err != nil {
				return nil, &TrustFileError{cur, err.Error()}
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			if err := c.checkAncestors(filepath.Dir(target)); err != nil {
				return nil, err
			}
			cur = target
		}
		if err := c.checkAncestors(filepath.Dir(real)); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &TrustFileError{real, fmt.Sprintf("cannot open: %v", err)}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &TrustFileError{real, err.Error()}
	}
	if !fi.Mode().IsRegular() {
		return nil, &TrustFileError{real, "not a regular file"}
	}
	if err := c.checkOwnerMode(real, fi, false); err != nil {
		return nil, err
	}
	data := make([]byte, 0, fi.Size())
	buf := bytes.NewBuffer(data)
	if _, err := buf.ReadFrom(&limitedReader{f, maxTrustFile + 1}); err != nil {
		return nil, &TrustFileError{real, fmt.Sprintf("cannot read: %v", err)}
	}
	return ParseAllowedSigners(path, buf.Bytes())
}

type limitedReader struct {
	f *os.File
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("larger than %d bytes", maxTrustFile)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}

func (c checker) checkAncestors(dir string) error {
	for {
		fi, err := os.Stat(dir)
		if err != nil {
			return &TrustFileError{dir, err.Error()}
		}
		if err := c.checkOwnerMode(dir, fi, true); err != nil {
			return err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
}

type checker struct{ owners []uint32 }

func (c checker) checkOwnerMode(path string, fi os.FileInfo, isDir bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &TrustFileError{path, "cannot read its owner"}
	}
	if !slices.Contains(c.owners, st.Uid) {
		return &TrustFileError{path, fmt.Sprintf("owned by uid %d, not by root or another allowed owner (uids %v)", st.Uid, c.owners)}
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil // a link's own mode means nothing; its directory is checked
	}
	perm := fi.Mode().Perm()
	if perm&0o022 == 0 {
		return nil
	}
	if isDir && fi.Mode()&os.ModeSticky != 0 && st.Uid == 0 {
		return nil
	}
	who := "group"
	if perm&0o002 != 0 {
		who = "world"
	}
	kind := "file"
	if isDir {
		kind = "directory"
	}
	return &TrustFileError{path, fmt.Sprintf("%s is %s-writable (mode %04o)", kind, who, perm)}
}
