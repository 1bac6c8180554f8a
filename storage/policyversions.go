package storage

import (
	"context"
	"database/sql"
)

// PolicyText is one row of approve_tui_policy as stored, nothing decoded:
// what a verifier that trusts no row reads, to hash Source itself and
// parse it itself. Version, SHA256, SetAt and SetBy are the row's claims.
type PolicyText struct {
	Version int64
	SHA256  string
	Source  string
	SetAt   float64
	SetBy   string
}

// PolicyVersions lists every policy version kept in the store, newest
// first, as stored (the rules column is not read: a verifier parses
// Source). A store made before policies has none.
func (st *Store) PolicyVersions(ctx context.Context) ([]PolicyText, error) {
	return readRows(ctx, st, "policy versions", scanPolicyTexts, `SELECT version, sha256, source, set_at, set_by FROM approve_tui_policy ORDER BY version DESC`)
}

func scanPolicyTexts(rows *sql.Rows) ([]PolicyText, error) {
	defer rows.Close()
	var out []PolicyText
	for rows.Next() {
		var v PolicyText
		var sum, src, by sql.NullString
		var at sql.NullFloat64
		if err := rows.Scan(&v.Version, &sum, &src, &at, &by); err != nil {
			return nil, err
		}
		v.SHA256, v.Source, v.SetAt, v.SetBy = sum.String, src.String, at.Float64, by.String
		out = append(out, v)
	}
	return out, rows.Err()
}
