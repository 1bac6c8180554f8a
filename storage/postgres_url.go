package storage

import (
	"net/url"
	"strings"
)

// IsPostgresURL reports whether a --db value names a PostgreSQL database.
func IsPostgresURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// RedactURL is a database URL with its password removed, for showing.
func RedactURL(db string) string {
	u, err := url.Parse(db)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}
