package trust

import (
	"bytes"
	"crypto/rsa"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"
)

// Signer is one line of an allowed_signers file.
type Signer struct {
	Line        int           // 1-based line number in its file
	Principals  string        // the line's one plain principal (the name is OpenSSH's field)
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

// Error is FILE:LINE: message, sanitised: the file and its text may be
// anyone's.
func (e *ParseError) Error() string {
	return model.Sanitize(fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg), model.Line)
}

// maxPattern is the length from which OpenSSH's match_pattern_list
// matches nothing: a pattern of 1023 bytes or more.
const maxPattern = 1023

// maxTrustFile bounds the size of a trust file.
const maxTrustFile = 1 << 20

// ParseAllowedSigners parses the OpenSSH allowed_signers format (see
// ssh-keygen(1), ALLOWED SIGNERS). Blank lines and lines starting with
// '#' are skipped. Every other line is
//
//	PRINCIPAL [OPTIONS] KEYTYPE BASE64 [COMMENT]
//
// with options namespaces="a,b", valid-after="T", valid-before="T" (T is
// YYYYMMDDZ or YYYYMMDDHHMM[SS]Z: a time without Z, which OpenSSH reads
// in the local time zone, is refused, since the environment that sets the
// zone is the agent's). The file is stricter than OpenSSH's in what makes
// a person:
//
//   - each line names exactly one plain principal, 1 to 256 bytes of
//     visible ASCII without , * ? ! quotes or backslash: a list would let
//     one key count under two names, a pattern (*@example.com) would let
//     its key sign as a named colleague;
//   - a key is on lines of one principal only (one key is one person),
//     and no two principals differ only in case;
//   - RSA keys have 2048 bits or more, DSA keys are refused;
//   - a namespaces pattern of 1023 bytes or more is refused (OpenSSH
//     would match nothing with it).
//
// cert-authority is refused: a certificate authority would let whoever
// holds its key mint signers, and approve-tui verifies plain keys only.
// Any error fails the whole file: a trust file is used whole or not at
// all. path only names the file in errors.
func ParseAllowedSigners(path string, data []byte) (*AllowedSigners, error) {
	as := &AllowedSigners{Path: path}
	if len(data) > maxTrustFile {
		return nil, &ParseError{path, 0, fmt.Sprintf("larger than %d bytes", maxTrustFile)}
	}
	text := strings.TrimSuffix(string(data), "\n")
	if text == "" {
		return as, nil
	}
	type seen struct {
		principal string
		line      int
	}
	byKey := map[string]seen{}  // key fingerprint -> its principal
	byName := map[string]seen{} // lower-case principal -> as written
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
		principal, rest := cutField(line)
		if principal == "" {
			return nil, fail("no principal")
		}
		if err := plainPrincipal(principal); err != nil {
			return nil, fail("%v", err)
		}
		s := Signer{Line: n, Principals: principal}
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
		if err := checkKeyStrength(key); err != nil {
			return nil, fail("%v", err)
		}
		s.Key = key
		s.Comment = comment
		fp := ssh.FingerprintSHA256(key)
		if prev, ok := byKey[fp]; ok && prev.principal != principal {
			return nil, fail("key %s is also on line %d, as %q: one key is one person, list it under one principal", fp, prev.line, prev.principal)
		}
		byKey[fp] = seen{principal, n}
		lower := strings.ToLower(principal)
		if prev, ok := byName[lower]; ok && prev.principal != principal {
			return nil, fail("principal %q differs only in case from %q on line %d: write each person's name one way", principal, prev.principal, prev.line)
		}
		byName[lower] = seen{principal, n}
		as.Signers = append(as.Signers, s)
	}
	return as, nil
}

// plainPrincipal says why p cannot name one person in a trust file, or
// returns nil.
func plainPrincipal(p string) error {
	switch {
	case p[0] == '"':
		return fmt.Errorf("quoted principals are not supported: write one plain principal")
	case strings.Contains(p, ","):
		return fmt.Errorf("%q is a list of principals: approve-tui needs exactly one principal per line, so that one key counts for one person (give each person their own line)", clip(p))
	case strings.ContainsAny(p, "*?"):
		return fmt.Errorf("principal %q is a pattern: approve-tui needs one plain principal per line (a pattern line's key could sign as any name it matches, a named colleague's too)", clip(p))
	case strings.HasPrefix(p, "!"):
		return fmt.Errorf("principal %q is negated: approve-tui needs one plain principal per line", clip(p))
	}
	if len(p) > maxField {
		return fmt.Errorf("principal %q is longer than %d bytes", clip(p), maxField)
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x21 || c > 0x7e || c == '\'' || c == '\\' {
			return fmt.Errorf("principal %q has byte 0x%02x at %d: a principal is visible ASCII without quotes or backslash (what a signed statement can carry)", clip(p), c, i+1)
		}
	}
	return nil
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
		return nil, "", fmt.Errorf("key type %q does not match the key's own type %q", clip(typ), key.Type())
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
				return nil, "", fmt.Errorf("option %q needs a double-quoted value", clip(o.name))
			}
			i++
			end := strings.IndexByte(s[i:], '"')
			if end < 0 {
				return nil, "", fmt.Errorf("option %q has no closing quote", clip(o.name))
			}
			o.value, o.hasValue = s[i:i+end], true
			if strings.ContainsAny(o.value, "\\") {
				return nil, "", fmt.Errorf("option %q: backslashes are not supported", clip(o.name))
			}
			i += end + 1
		}
		opts = append(opts, o)
		if i < len(s) && s[i] == ',' {
			i++
			continue
		}
		if i < len(s) && s[i] != ' ' && s[i] != '\t' {
			return nil, "", fmt.Errorf("unexpected %q after option %q", s[i], clip(o.name))
		}
		return opts, strings.TrimLeft(s[i:], " \t"), nil
	}
}

func (s *Signer) applyOptions(opts []option) error {
	seen := map[string]bool{}
	for _, o := range opts {
		name := strings.ToLower(o.name)
		if seen[name] {
			return fmt.Errorf("option %q given twice", clip(name))
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
			for _, ns := range s.Namespaces {
				if len(ns) >= maxPattern {
					return fmt.Errorf("namespaces has a pattern of %d bytes: OpenSSH matches nothing with a pattern of 1023 bytes or more", len(ns))
				}
			}
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
	Path   string // the file, link or directory at fault
	Reason string
}

// Error is sanitised: the path may come from anyone's configuration.
func (e *TrustFileError) Error() string {
	return model.Sanitize(fmt.Sprintf("trust file refused: %s: %s", e.Path, e.Reason), model.Line)
}

// LoadTrustFile reads and parses an allowed_signers file on the
// operator's side, refusing one that someone other than root or the
// current user could change:
//
//   - the file must be a regular file owned by root or the effective
//     user, not writable by group or others;
//   - the path is resolved one component at a time from / (symbolic
//     links in any position are followed as the kernel would, ".." taken
//     from where a link leads), and every directory walked through must
//     be owned by root or the effective user and not writable by group
//     or others, except a root-owned directory with the sticky bit
//     (/tmp), where nobody else can rename or remove what is not theirs;
//   - every symbolic link met must be owned by such an owner, and its
//     directory is one of those walked through, so whoever could swap
//     the link is held to the same rule;
//   - the file is then opened without following links and checked again
//     through its open descriptor.
//
// Where the verifier runs as the agent's own user (a hook, run), a file
// that user owns is a file the agent can rewrite: use
// LoadTrustFileForVerifier there.
func LoadTrustFile(path string) (*AllowedSigners, error) {
	return LoadTrustFileOwnedBy(path, uint32(os.Geteuid()))
}

// LoadTrustFileOwnedBy is LoadTrustFile with the owners allowed for the
// file, the links to it and every directory above them given explicitly:
// root and the uids listed (none: root alone). Group- and world-writable
// entries are refused as there.
func LoadTrustFileOwnedBy(path string, owners ...uint32) (*AllowedSigners, error) {
	return ownedByChecker(owners).load(path)
}

// ownedByChecker is LoadTrustFileOwnedBy's rule: root and owners.
func ownedByChecker(owners []uint32) checker {
	allowed := append([]uint32{0}, owners...)
	return checker{
		owned: func(uid uint32) string {
			if slices.Contains(allowed, uid) {
				return ""
			}
			return fmt.Sprintf("owned by uid %d, not by root or another allowed owner (uids %v)", uid, allowed)
		},
	}
}

// LoadTrustFileForVerifier loads the trust file where approvals are
// verified, which runs as the agent's user (run, the hooks): the file,
// every link on the way and every directory above must be owned by root
// or by a uid other than the effective user's (an operator's), and none
// may be writable by the effective user (through its group or an ACL
// too), since the agent could then rewrite who counts as whom. Where the
// effective user is root, root-owned entries are fine. Group- and
// world-writable entries are refused as in LoadTrustFile.
func LoadTrustFileForVerifier(path string) (*AllowedSigners, error) {
	return verifierChecker().load(path)
}

// verifierChecker is LoadTrustFileForVerifier's rule for the effective
// user.
func verifierChecker() checker {
	euid := uint32(os.Geteuid())
	return checker{
		owned: func(uid uint32) string {
			if uid == 0 || uid != euid {
				return ""
			}
			return fmt.Sprintf("owned by uid %d, the user this verifier runs as: the agent, which runs as that user, could rewrite it; give it to root (or to the operators' user) and make it read-only for others", uid)
		},
		noWrite: euid != 0,
	}
}

// maxLinks bounds the symbolic links followed while resolving a path, as
// the kernel's own limit does.
const maxLinks = 40

// checker holds the ownership rule of one load.
type checker struct {
	// owned returns "" when uid may own an entry of the path, else why not.
	owned func(uid uint32) string
	// noWrite: also refuse entries the effective user can write (asked of
	// the kernel, so groups and ACLs count), except root-owned sticky
	// directories.
	noWrite bool
}

func (c checker) load(path string) (*AllowedSigners, error) {
	data, err := c.read(path, maxTrustFile)
	if err != nil {
		return nil, err
	}
	return ParseAllowedSigners(path, data)
}

// ReadFileForVerifier reads the file at path, of at most max bytes, under
// LoadTrustFileForVerifier's rules (owner and mode of the file, of every
// link on the way and of every directory above it): for another file the
// verifier relies on, such as the system configuration that names the
// trust file. Refusals are *TrustFileError.
func ReadFileForVerifier(path string, max int64) ([]byte, error) {
	return verifierChecker().read(path, max)
}

// ReadFileOwnedBy reads the file at path, of at most max bytes, under
// LoadTrustFileOwnedBy's rules: the file, the links to it and every
// directory above owned by root or one of owners, none group- or
// world-writable. Refusals are *TrustFileError.
func ReadFileOwnedBy(path string, max int64, owners ...uint32) ([]byte, error) {
	return ownedByChecker(owners).read(path, max)
}

// read resolves path under c's rules and returns the file's contents, of
// at most max bytes.
func (c checker) read(path string, max int64) ([]byte, error) {
	real, lfi, err := c.resolve(path)
	if err != nil {
		return nil, err
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
	if !os.SameFile(fi, lfi) {
		return nil, &TrustFileError{real, "changed while it was being checked"}
	}
	if !fi.Mode().IsRegular() {
		return nil, &TrustFileError{real, "not a regular file"}
	}
	if err := c.checkOwnerMode(real, fi, false); err != nil {
		return nil, err
	}
	data := make([]byte, 0, min(fi.Size(), max))
	buf := bytes.NewBuffer(data)
	if _, err := buf.ReadFrom(&limitedReader{f, max + 1, max}); err != nil {
		return nil, &TrustFileError{real, fmt.Sprintf("cannot read: %v", err)}
	}
	return buf.Bytes(), nil
}

// resolve walks path from / one component at a time with Lstat, checking
// every directory it passes through and every link it follows, and
// returns the path of the final entry (not a link) and its Lstat.
func (c checker) resolve(path string) (string, os.FileInfo, error) {
	if path == "" {
		return "", nil, &TrustFileError{path, "no path"}
	}
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return "", nil, &TrustFileError{path, fmt.Sprintf("relative path and no working directory: %v", err)}
		}
		path = wd + "/" + path
	}
	root, err := os.Lstat("/")
	if err != nil {
		return "", nil, &TrustFileError{"/", err.Error()}
	}
	if err := c.checkOwnerMode("/", root, true); err != nil {
		return "", nil, err
	}
	todo := splitPath(path)
	cur := "/"
	links := 0
	for len(todo) > 0 {
		comp := todo[0]
		todo = todo[1:]
		switch comp {
		case ".":
			continue
		case "..":
			// cur was reached physically, so its parent is the real
			// one, and was checked on the way in.
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, comp)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", nil, &TrustFileError{next, fmt.Sprintf("cannot resolve: %v", unwrapPathError(err))}
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			if links++; links > maxLinks {
				return "", nil, &TrustFileError{next, fmt.Sprintf("more than %d symbolic links on the way (a loop?)", maxLinks)}
			}
			// The link's directory, cur, is checked; the link's owner
			// could still remove it in a sticky directory.
			if err := c.checkOwnerMode(next, fi, false); err != nil {
				return "", nil, err
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", nil, &TrustFileError{next, err.Error()}
			}
			if target == "" {
				return "", nil, &TrustFileError{next, "empty symbolic link"}
			}
			if filepath.IsAbs(target) {
				cur = "/"
			}
			todo = append(splitPath(target), todo...)
			continue
		}
		if len(todo) == 0 {
			return next, fi, nil
		}
		if !fi.IsDir() {
			return "", nil, &TrustFileError{next, "not a directory"}
		}
		if err := c.checkOwnerMode(next, fi, true); err != nil {
			return "", nil, err
		}
		cur = next
	}
	return "", nil, &TrustFileError{cur, "not a regular file (a directory)"}
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

type limitedReader struct {
	f     *os.File
	n     int64
	limit int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("larger than %d bytes", l.limit)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}

func (c checker) checkOwnerMode(path string, fi os.FileInfo, isDir bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &TrustFileError{path, "cannot read its owner"}
	}
	if why := c.owned(st.Uid); why != "" {
		return &TrustFileError{path, why}
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil // a link's own mode means nothing; its directory is checked
	}
	sticky := isDir && fi.Mode()&os.ModeSticky != 0 && st.Uid == 0
	perm := fi.Mode().Perm()
	if perm&0o022 != 0 && !sticky {
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
	if c.noWrite && !sticky && unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS) == nil {
		return &TrustFileError{path, fmt.Sprintf("writable by uid %d, the user this verifier runs as: the agent, which runs as that user, could rewrite who counts as whom", os.Geteuid())}
	}
	return nil
}

// minRSABits is the smallest RSA modulus accepted, in the trust file and
// in a signature, whatever GODEBUG lets crypto/rsa accept.
const minRSABits = 2048

// checkKeyStrength refuses RSA keys under minRSABits and DSA keys.
func checkKeyStrength(key ssh.PublicKey) error {
	switch key.Type() {
	case ssh.KeyAlgoDSA:
		return fmt.Errorf("DSA keys are not accepted: use ed25519")
	case ssh.KeyAlgoRSA:
		ck, ok := key.(ssh.CryptoPublicKey)
		if !ok {
			return fmt.Errorf("cannot read the RSA key's size")
		}
		rk, ok := ck.CryptoPublicKey().(*rsa.PublicKey)
		if !ok {
			return fmt.Errorf("cannot read the RSA key's size")
		}
		if bits := rk.N.BitLen(); bits < minRSABits {
			return fmt.Errorf("RSA key %s has %d bits: approve-tui needs %d or more (or use ed25519)", ssh.FingerprintSHA256(key), bits, minRSABits)
		}
	}
	return nil
}
