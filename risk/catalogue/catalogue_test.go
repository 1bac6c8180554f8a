package catalogue

import "testing"

func TestDefaultLoads(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Programs()) < 50 {
		t.Fatalf("only %d programs", len(c.Programs()))
	}
}
