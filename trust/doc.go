// Package trust signs and verifies approve-tui's decisions with SSH keys,
// in the SSH signature format of OpenSSH (PROTOCOL.sshsig), so anyone can
// check them offline with ssh-keygen -Y verify.
//
// # The statement
//
// A decision signs a statement: exact bytes, one meaning. It is the line
// "approve-tui-statement-v1", then key=value lines in this fixed order,
// each ended by a newline and nothing else:
//
//	approve-tui-statement-v1
//	store=<the store's identity>
//	decision=approve|vote|deny|policy
//	id=<approval id>                     (approve, vote, deny)
//	payload_sha256=<64 lower-case hex>   (approve, vote, deny)
//	risk=low|medium|high                 (approve, vote, deny)
//	policy_sha256=<64 lower-case hex>    (policy only, instead of the three above)
//	principal=<the signer's principal>
//	time=<UTC, RFC 3339 to the second, e.g. 2026-12-05T05:07:08Z>
//
// payload_sha256 is the SHA-256 of the payload the operator read (the
// command and its impact, as the store defines it); risk is the risk
// pinned on the proposal. Store, id and principal are 1 to 256 bytes of
// visible ASCII (no space, control byte, newline or non-ASCII byte); a
// principal is also never a pattern (no , * ? ! quotes or backslash).
// Hostile values are refused, never escaped, so no field can spill into
// another. ParseStatement accepts only bytes equal to the re-encoding of
// what they say: any other spacing, order, key, time form or line end is
// malformed.
//
// # Signatures
//
// Signatures use namespace "approve-tui" and SHA-512 (ssh-keygen's
// default); verification also takes SHA-256. A signature is accepted
// only in the one armoured form ssh-keygen -Y sign writes (lines of 70,
// no header, nothing before or after, nothing appended inside the blob or
// the signature), so a stored signature has one byte form and carries
// nothing a display could be made to print; Sign writes that form. RSA
// keys under 2048 bits and DSA keys are refused, whatever GODEBUG says.
//
// A StatementSigner holds one key: from an ssh-agent (DialAgent with a
// socket path the caller takes from SSH_AUTH_SOCK, or AgentSigner with an
// agent already connected, such as a client's forwarded agent over SSH),
// chosen by fingerprint or public key, or the agent's only key; or from
// an unencrypted key file
// (KeyFileSigner; an encrypted one is refused with the advice to load it
// into ssh-agent). Security keys (sk-ssh-ed25519@openssh.com) sign through
// the agent, which asks for the touch; a security-key signature without
// the user-presence flag is refused on verification (stricter than
// ssh-keygen -Y verify, which accepts it: a decision is a person's act).
//
// # The trust model
//
// Who someone is comes from the trust file alone: an OpenSSH
// allowed_signers file (ssh-keygen(1), ALLOWED SIGNERS), stricter in what
// makes a person: each line names exactly one plain principal (no list,
// no * ? ! pattern: a pattern line's key could sign as a named
// colleague), a key is listed under one principal only (one key is one
// person), and no two principals differ only in case. A signature counts
// for the principal written in its statement only if the signing key is
// on that principal's line, whose namespaces option (if present) allows
// approve-tui, and whose valid-after/valid-before window holds both at
// the statement's time and at verification. Key comments are never
// identity. cert-authority lines are refused: a certificate authority
// would let whoever holds its key mint new signers, and approve-tui
// trusts listed keys only. Settings.PrincipalOf is the principal of a
// key's line.
//
// A trust file is used whole or not at all: any malformed line fails the
// load with FILE:LINE (errors are sanitised). The path is resolved one
// component at a time from /, following links as the kernel would, and
// LoadTrustFile (the operator's side) refuses a file, a link met on the
// way, or a directory walked through, that a user other than root or the
// current user owns or that group or others can write (a root-owned
// sticky directory such as /tmp excepted), naming which.
// LoadTrustFileForVerifier is the form for where the verifier runs as the
// agent's own user (hooks, run): there every entry must be owned by root
// or by another uid than the effective one, and none may be writable by
// the effective user, since the agent could rewrite a file its user owns.
// LoadTrustFileOwnedBy takes the owners explicitly.
//
// A valid signature is still refused unless its statement says what the
// verifier knows independently (Expect: the decisions it accepts here,
// this store, this approval id, this payload hash, this risk, or this
// policy hash), and is fresh: never dated after now plus Expect.Skew,
// and, where set, not before Expect.NotBefore (the proposal's creation
// minus the skew) nor older than Expect.MaxAge. So a signature copied to
// another approval, replayed over another payload or carried to another
// store does not count, a denial does not count as an approval, and an
// old approval is not replayed on a proposal reset long after. Quorum
// counts distinct principals of verified approve and vote signatures,
// never the requester's (neither its name, in any case, nor any key a
// trust line admits for it; an unknown requester counts nothing), and
// each key once.
//
// The package reads no configuration and depends on no environment
// variable (validity times must be UTC, so TZ cannot move them; the RSA
// floor does not follow GODEBUG), and
// the store's deciding transaction and the execution checks call it.
package trust
