package storage

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/trust"
)

// Signatures over decisions (SPEC: signed approvals). Each approve, vote,
// deny and policy set an actor signed is kept here, written in the
// transaction of the decision it signs; a policy's signatures are kept
// under approval_id PolicyRef. A row is a claim until a verifier checked
// it against a trust file: the agent side can write this table too.

// SignatureRecord is one stored signature.
type SignatureRecord struct {
	Seq        int64
	ApprovalID string // the proposal, or PolicyRef for a policy's
	// Event is the decision it was stored with: EventApprove, EventVote,
	// EventDeny or EventPolicySet.
	Event     string
	Principal string // as the statement claims it: hostile until verified
	Key       string // the fingerprint claimed: hostile until verified
	// Statement is the exact signed bytes.
	Statement []byte
	// Armored is the -----BEGIN SSH SIGNATURE----- text.
	Armored string
	At      float64
}

// Signature is r as the decision path takes it.
func (r SignatureRecord) Signature() *model.Signature {
	return &model.Signature{Principal: r.Principal, Key: r.Key, Statement: r.Statement, Armored: r.Armored}
}

// insertSignature keeps sig, the signature of a decision (event) on id,
// inside the deciding transaction.
func (s bound) insertSignature(ctx context.Context, id, event string, sig *model.Signature) error {
	if sig == nil {
		return nil
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, id, event, sig.Principal, sig.Key, string(sig.Statement), sig.Armored, model.Epoch(s.now()))
	return err
}

const selectSignatures = `SELECT seq, approval_id, event, principal, key_fp, statement, signature, at
	FROM approve_tui_signatures WHERE approval_id = ? ORDER BY seq`

func scanSignatures(rows *sql.Rows) ([]SignatureRecord, error) {
	defer rows.Close()
	var out []SignatureRecord
	for rows.Next() {
		var r SignatureRecord
		var stmt string
		if err := rows.Scan(&r.Seq, &r.ApprovalID, &r.Event, &r.Principal, &r.Key, &stmt, &r.Armored, &r.At); err != nil {
			return nil, err
		}
		r.Statement = []byte(stmt)
		out = append(out, r)
	}
	return out, rows.Err()
}

// Signatures lists the signatures stored for id (PolicyRef: every
// policy's), oldest first. A store made before signatures has none.
func (st *Store) Signatures(ctx context.Context, id string) ([]SignatureRecord, error) {
	return readRows(ctx, st, "signatures", scanSignatures, selectSignatures, id)
}

// keptSignatures reads the signatures kept for id through q (the
// deciding transaction's connection): none from a store made before the
// table.
func (s bound) keptSignatures(ctx context.Context, q querier, id string) ([]SignatureRecord, error) {
	rows, err := q.QueryContext(ctx, selectSignatures, id)
	if err != nil {
		if s.eng.noTable(err) {
			return nil, nil
		}
		return nil, err
	}
	return scanSignatures(rows)
}

// readRows runs query q on the reader pool and scans its rows with scan:
// none from a store made before the table (what: the read, for errors).
func readRows[T any](ctx context.Context, st *Store, what string, scan func(*sql.Rows) ([]T, error), q string, args ...any) ([]T, error) {
	s := st.bind()
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		if s.eng.noTable(err) {
			return nil, nil
		}
		return nil, s.classify(what, err)
	}
	out, err := scan(rows)
	if err != nil {
		return nil, s.classify(what, err)
	}
	return out, nil
}

// Identity is the store identity every signed statement about this store
// names: the operator's configured name (Options.Trust.Store), else
// DefaultIdentity of the database as opened. It is never read from a
// row, so that a signature made for one store is refused by another.
func (st *Store) Identity() string {
	if t := st.opt.Trust; t != nil && t.Store != "" {
		return t.Store
	}
	return DefaultIdentity(st.dsn)
}

// Trust is the trust configuration the Store was opened with (nil: off).
func (st *Store) Trust() *trust.Settings { return st.opt.Trust }

// DefaultIdentity is a store's identity when none is configured: for
// SQLite "sqlite:" and the file's absolute path; for PostgreSQL
// "postgres://HOST/DATABASE", with the URL's search_path and options
// parameters when it has them (they choose the schema, so two stores in
// one database differ there), and no user, password or other parameter. Bytes a
// statement cannot carry (space, controls, non-ASCII) are percent-encoded.
func DefaultIdentity(db string) string {
	if IsPostgresURL(db) {
		u, err := url.Parse(db)
		if err != nil {
			return "postgres://unparsable"
		}
		id := "postgres://" + u.Host + u.EscapedPath()
		// The parameters that choose the schema the store lives in: two
		// stores in one database differ only there, and a signature made
		// for one must be refused by the other.
		q := u.Query()
		var sel []string
		for _, k := range []string{"search_path", "options"} {
			for _, v := range q[k] {
				sel = append(sel, url.QueryEscape(k)+"="+url.QueryEscape(v))
			}
		}
		if len(sel) > 0 {
			id += "?" + strings.Join(sel, "&")
		}
		return identityText(id)
	}
	p := strings.TrimPrefix(strings.TrimPrefix(db, "sqlite://"), "sqlite:")
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return identityText("sqlite:" + p)
}

// identityText percent-encodes every byte outside visible ASCII, and "%".
func identityText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
