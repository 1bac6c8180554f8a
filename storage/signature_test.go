package storage

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// Signatures an actor carries are kept with the decision they sign, in its
// transaction, and read back byte for byte.
func TestSignaturesKeptWithDecision(t *testing.T) {
	s, c := newStore(t)
	ctx := context.Background()
	mustSubmit(t, s, proposal("sig-approve-0001", "rm -rf build", model.RiskHigh, c.Now(), time.Hour))
	mustSubmit(t, s, proposal("sig-deny-0000001", "rm -rf dist", model.RiskHigh, c.Now(), time.Hour))
	sig := func(who string) *model.Signature {
		return &model.Signature{Principal: who, Key: "SHA256:" + who, Statement: []byte("approve-tui-statement-v1\nprincipal=" + who + "\n"),
			Armored: "-----BEGIN SSH SIGNATURE-----\n" + who + "\n-----END SSH SIGNATURE-----\n"}
	}
	alice := model.Actor{Surface: model.SurfaceCLI, Name: "alice@host", Person: "alice", Signature: sig("alice")}
	if _, err := s.ConsumeRead(ctx, "sig-approve-0001", "sig-approve-0001", "", alice); err != nil {
		t.Fatal(err)
	}
	bob := model.Actor{Surface: model.SurfaceCLI, Name: "bob@host", Person: "bob", Signature: sig("bob")}
	if _, err := s.Deny(ctx, "sig-deny-0000001", bob, ""); err != nil {
		t.Fatal(err)
	}
	got, err := s.Signatures(ctx, "sig-approve-0001")
	if err != nil || len(got) != 1 {
		t.Fatalf("signatures = %v, %v", got, err)
	}
	g := got[0]
	if g.Event != EventApprove || g.Principal != "alice" || g.Key != "SHA256:alice" ||
		string(g.Statement) != string(alice.Signature.Statement) || g.Armored != alice.Signature.Armored {
		t.Fatalf("kept %+v", g)
	}
	got, err = s.Signatures(ctx, "sig-deny-0000001")
	if err != nil || len(got) != 1 || got[0].Event != EventDeny || got[0].Principal != "bob" {
		t.Fatalf("deny signatures = %+v, %v", got, err)
	}
	// A refused decision keeps no signature: it rolled back with it.
	if _, err := s.ConsumeRead(ctx, "sig-deny-0000001", "sig-deny-0000001", "", alice); err == nil {
		t.Fatal("approved a denied proposal")
	}
	if got, _ := s.Signatures(ctx, "sig-deny-0000001"); len(got) != 1 {
		t.Fatalf("a refused approval kept its signature: %+v", got)
	}
}

// Two stores in one PostgreSQL database, each in its own schema (the URL's
// search_path), are two stores: a signature made for one must not verify
// for the other, so their identities differ.
func TestDefaultIdentity(t *testing.T) {
	for in, want := range map[string]string{
		"/var/lib/a b/state.db": "sqlite:/var/lib/a%20b/state.db",
		"sqlite:/srv/x.db":      "sqlite:/srv/x.db",
		"postgres://u:secret@db.example:5432/appr?sslmode=disable":                           "postgres://db.example:5432/appr",
		"postgres://u:secret@db.example:5432/appr?sslmode=disable&search_path=prod":          "postgres://db.example:5432/appr?search_path=prod",
		"postgres://db.example:5432/appr?search_path=staging":                                "postgres://db.example:5432/appr?search_path=staging",
		"postgres://db.example:5432/appr?options=-c%20search_path%3Dprod&application_name=x": "postgres://db.example:5432/appr?options=-c+search_path%253Dprod",
	} {
		got := DefaultIdentity(in)
		if got != want {
			t.Errorf("DefaultIdentity(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(got, "secret") || strings.Contains(got, " ") {
			t.Errorf("identity carries the password: %q", got)
		}
	}
}
