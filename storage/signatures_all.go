package storage

import "context"

// AllSignatures lists every signature the store keeps, of every proposal
// and policy, oldest first (what audit --verify --signers checks). A store
// made before signatures has none.
func (st *Store) AllSignatures(ctx context.Context) ([]SignatureRecord, error) {
	s := st.bind()
	rows, err := s.rdb.QueryContext(ctx, `SELECT seq, approval_id, event, principal, key_fp, statement, signature, at
		FROM approve_tui_signatures ORDER BY seq`)
	if err != nil {
		if s.eng.noTable(err) {
			return nil, nil
		}
		return nil, s.classify("signatures", err)
	}
	out, err := scanSignatures(rows)
	if err != nil {
		return nil, s.classify("signatures", err)
	}
	return out, nil
}
