package storage

import "context"

// AllSignatures lists every signature the store keeps, of every proposal
// and policy, oldest first (what audit --verify --signers checks). A store
// made before signatures has none.
func (st *Store) AllSignatures(ctx context.Context) ([]SignatureRecord, error) {
	return readRows(ctx, st, "signatures", scanSignatures, `SELECT seq, approval_id, event, principal, key_fp, statement, signature, at
		FROM approve_tui_signatures ORDER BY seq`)
}
