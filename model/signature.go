package model

// Signature is one decision signed with an SSH key (PROTOCOL.sshsig,
// namespace approve-tui): the exact statement bytes signed and the
// armored signature over them. What it proves is decided by a verifier
// against a trust file; until then Principal and Key are claims.
type Signature struct {
	// Principal is the signer's principal as the statement names it.
	Principal string
	// Key is the signing key's fingerprint (SHA256:...).
	Key string
	// Statement is the exact signed bytes (trust.Statement.Encode).
	Statement []byte
	// Armored is the -----BEGIN SSH SIGNATURE----- text.
	Armored string
}
