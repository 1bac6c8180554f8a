package impact

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/approve-tui/approve-tui/internal/latency"
	"github.com/approve-tui/approve-tui/model"
)

// tfChange encodes one tfplan.ResourceInstanceChange, as terraform writes
// it: the change's values come with it (skipped by the reader).
func tfChange(addr string, action planAction, extra ...func([]byte) []byte) []byte {
	var change []byte
	if action != actionNoop {
		change = protowire.AppendTag(change, fieldChangeAction, protowire.VarintType)
		change = protowire.AppendVarint(change, uint64(action))
	}
	change = protowire.AppendTag(change, 2, protowire.BytesType) // values
	change = protowire.AppendBytes(change, []byte("\x0a\x04\x81\xa2id"))
	var b []byte
	b = protowire.AppendTag(b, fieldChangeAddr, protowire.BytesType)
	b = protowire.AppendString(b, addr)
	b = protowire.AppendTag(b, 8, protowire.BytesType) // provider
	b = protowire.AppendString(b, `provider["registry.terraform.io/hashicorp/aws"]`)
	b = protowire.AppendTag(b, fieldChangeChange, protowire.BytesType)
	b = protowire.AppendBytes(b, change)
	for _, f := range extra {
		b = f(b)
	}
	return b
}

// tfString appends string field num.
func tfString(num protowire.Number, s string) func([]byte) []byte {
	return func(b []byte) []byte {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendString(b, s)
	}
}

// tfPlan encodes a tfplan.Plan of version with changes (fields, when
// given, are appended raw).
func tfPlan(version uint64, changes ...[]byte) []byte {
	var b []byte
	b = protowire.AppendTag(b, fieldPlanVersion, protowire.VarintType)
	b = protowire.AppendVarint(b, version)
	for _, c := range changes {
		b = protowire.AppendTag(b, fieldPlanResourceChanges, protowire.BytesType)
		b = protowire.AppendBytes(b, c)
	}
	b = protowire.AppendTag(b, 14, protowire.BytesType)
	return protowire.AppendString(b, "1.11.4")
}

type member struct {
	name   string
	data   []byte
	stored bool
}

// planMembers are a plan file's members around tfplan.
func planMembers(tfplan []byte) []member {
	return []member{{name: "tfplan", data: tfplan}, {name: "tfstate", data: []byte("{}")},
		{name: "tfstate-prev", data: []byte("{}")}, {name: "tfconfig/modules.json", data: []byte("[]")},
		{name: ".terraform.lock.hcl", data: nil}}
}

func zipOf(t testing.TB, members []member) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, m := range members {
		method := zip.Deflate
		if m.stored {
			method = zip.Store
		}
		f, err := w.CreateHeader(&zip.FileHeader{Name: m.name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(m.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// previewPlan writes data as plan.tfplan in a new directory and previews
// terraform apply of it.
func previewPlan(t testing.TB, data []byte) *Preview {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plan.tfplan"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return Compute(context.Background(), "terraform apply plan.tfplan", Options{Cwd: dir})
}

// unknownPlan asserts p previews nothing and names the plan unknown,
// saying why.
func unknownPlan(t testing.TB, what string, p *Preview, why string) {
	t.Helper()
	if len(p.Targets) != 0 || len(p.Unknown) != 1 || !strings.HasPrefix(p.Unknown[0], "terraform apply plan.tfplan (") ||
		!strings.Contains(p.Unknown[0], why) {
		t.Errorf("%s: %+v %q, want one unknown part saying %q", what, p.Targets, p.Unknown, why)
	}
}

// The plan is read as terraform counts it: replacements count as a create
// and a destroy, reads, no-ops and forgets as nothing; the names are
// sorted, destroys first, cut at MaxImpactDetails; moves and deposed
// objects are said.
func TestTerraformPlanCounts(t *testing.T) {
	changes := [][]byte{
		tfChange("aws_instance.web", actionDeleteThenCreate),
		tfChange("aws_instance.db", actionCreateThenDelete),
		tfChange("data.aws_ami.x", actionRead),
		tfChange("aws_s3_bucket.logs", actionNoop),
		tfChange("aws_iam_role.r", actionUpdate, tfString(fieldChangePrevRunAddr, "aws_iam_role.old")),
		tfChange("aws_iam_role.r", actionDelete, tfString(fieldChangeDeposedKey, "00000001")),
		tfChange("aws_s3_bucket.kept", actionForget),
		tfChange("aws_s3_bucket.swap", actionCreateThenForget),
	}
	for i := range 30 {
		changes = append(changes, tfChange(fmt.Sprintf("aws_route.r[%d]", 29-i), actionDelete))
	}
	p := previewPlan(t, zipOf(t, planMembers(tfPlan(3, changes...))))
	if len(p.Targets) != 1 || len(p.Unknown) != 0 {
		t.Fatalf("%+v %q", p.Targets, p.Unknown)
	}
	tg := p.Targets[0]
	if tg.Creates != 3 || tg.Updates != 1 || tg.Destroys != 33 {
		t.Errorf("counts %d %d %d", tg.Creates, tg.Updates, tg.Destroys)
	}
	if len(tg.Details) != model.MaxImpactDetails || tg.Details[0] != "destroy aws_iam_role.r (deposed object 00000001)" ||
		tg.Details[1] != "destroy aws_route.r[0]" || tg.Details[len(tg.Details)-1] != "and 17 more" {
		t.Errorf("details %q", tg.Details)
	}
	// Under the cut, every kind is named, in order.
	p = previewPlan(t, zipOf(t, planMembers(tfPlan(3, changes[:8]...))))
	want := []string{"destroy aws_iam_role.r (deposed object 00000001)", "replace aws_instance.db", "replace aws_instance.web",
		"update aws_iam_role.r (moved from aws_iam_role.old)",
		"create aws_s3_bucket.swap (the object it replaces is forgotten, not destroyed)",
		"forget aws_s3_bucket.kept (terraform stops managing it; not destroyed)"}
	if len(p.Targets) != 1 || !slices.Equal(p.Targets[0].Details, want) {
		t.Errorf("details %+v", p.Targets)
	}
	// A plan that errored says so; a plan that invokes provider actions
	// is counted and also named unknown.
	errored := protowire.AppendVarint(protowire.AppendTag(tfPlan(3, changes[0]), fieldPlanErrored, protowire.VarintType), 1)
	if p := previewPlan(t, zipOf(t, planMembers(errored))); len(p.Targets) != 1 || p.Targets[0].Note != "the plan errored: terraform will not apply it" {
		t.Errorf("errored: %+v", p.Targets)
	}
	invokes := protowire.AppendBytes(protowire.AppendTag(tfPlan(3, changes[0]), fieldPlanActions, protowire.BytesType), []byte("\x0a\x01x"))
	p = previewPlan(t, zipOf(t, planMembers(invokes)))
	if len(p.Targets) != 1 || p.Targets[0].Destroys != 1 || len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], "invokes 1 provider action") {
		t.Errorf("actions: %+v %q", p.Targets, p.Unknown)
	}
	// A configuration with a provisioner (a program run on apply): the
	// counts, and the provisioner named unknown.
	withProv := append(planMembers(tfPlan(3, changes[0])), member{name: "tfconfig/m-/main.tf",
		data: []byte("resource \"terraform_data\" \"x\" {\n  provisioner \"local-exec\" { command = \"rm -rf /srv\" }\n}\n")})
	p = previewPlan(t, zipOf(t, withProv))
	if len(p.Targets) != 1 || p.Targets[0].Destroys != 1 || len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], "has provisioners") {
		t.Errorf("provisioner: %+v %q", p.Targets, p.Unknown)
	}
	// An empty plan (no changes) is a target that touches nothing new.
	p = previewPlan(t, zipOf(t, planMembers(tfPlan(3))))
	if len(p.Targets) != 1 || len(p.Unknown) != 0 || p.Summary != "applies plan.tfplan: 0 to add, 0 to change, 0 to destroy" {
		t.Errorf("empty: %+v %q %q", p.Targets, p.Unknown, p.Summary)
	}
}

// Resource addresses are hostile text: what the preview names is
// sanitised onto one line and cut.
func TestTerraformPlanHostileAddresses(t *testing.T) {
	hostile := []string{
		"aws_instance.x\x1b]0;owned\x07\x1b[2J",
		"aws_instance.y\nPlan: 0 to add, 0 to change, 0 to destroy",
		"aws_instance.\u202egnp.z",
		"aws_instance.w\u009b31m\r",
		"aws_instance.long[\"" + strings.Repeat("A", 5000) + "\"]",
	}
	var changes [][]byte
	for _, h := range hostile {
		changes = append(changes, tfChange(h, actionDelete, tfString(fieldChangeDeposedKey, "k\x1b[1m")))
	}
	p := previewPlan(t, zipOf(t, planMembers(tfPlan(3, changes...))))
	if len(p.Targets) != 1 || p.Targets[0].Destroys != int64(len(hostile)) {
		t.Fatalf("%+v %q", p.Targets, p.Unknown)
	}
	for _, d := range p.Targets[0].Details {
		if strings.ContainsAny(d, "\x1b\x07\n\r\u202e\u009b") || model.Suspicious(d) || len(d) > 400 {
			t.Errorf("detail not sanitised: %q", d)
		}
	}
	if !strings.Contains(strings.Join(p.Targets[0].Details, " "), `aws_instance.x\x1b]0;owned\x07`) {
		t.Errorf("the escape is not shown: %q", p.Targets[0].Details)
	}
	// Not UTF-8: terraform's own reader refuses it, and so does the preview.
	unknownPlan(t, "invalid UTF-8", previewPlan(t, zipOf(t, planMembers(tfPlan(3, tfChange("aws_instance.\xff", actionDelete))))), "not UTF-8")
}

// A file that is not a plan terraform writes, in a format this preview
// does not read, or damaged, is unknown, never "no change".
func TestTerraformPlanUnreadable(t *testing.T) {
	valid := tfPlan(3, tfChange("aws_instance.web", actionDelete), tfChange("aws_instance.db", actionCreate))
	without := func(name string) []member {
		return slices.DeleteFunc(planMembers(valid), func(m member) bool { return m.name == name })
	}
	cases := []struct {
		what string
		data []byte
		why  string
	}{
		{"empty", nil, "not a zip archive"},
		{"text", []byte("Plan: 0 to add, 0 to change, 0 to destroy.\n"), "not a zip archive"},
		{"cloud plan", []byte(`{"remote_plan_format":1,"run_id":"run-x","hostname":"app.terraform.io"}`), "not a zip archive"},
		{"old format", []byte("tfplan\x00\x00\x00\x02"), "not a zip archive"},
		{"no tfplan", zipOf(t, without("tfplan")), "no tfplan member"},
		{"tfplan renamed", zipOf(t, append(without("tfplan"), member{name: "TFPLAN", data: valid})), "no tfplan member"},
		{"two tfplan", zipOf(t, append(planMembers(valid), member{name: "tfplan", data: tfPlan(3)})), "two tfplan members"},
		{"no tfstate", zipOf(t, without("tfstate")), "format this preview does not read"},
		{"no tfconfig", zipOf(t, without("tfconfig/modules.json")), "format this preview does not read"},
		{"version 4", zipOf(t, planMembers(tfPlan(4, tfChange("a.b", actionDelete)))), "format version is 4"},
		{"version 2", zipOf(t, planMembers(tfPlan(2))), "format version is 2"},
		{"no version", zipOf(t, planMembers(nil)), "format version is none"},
		{"action 4", zipOf(t, planMembers(tfPlan(3, tfChange("a.b", 4)))), "action 4"},
		{"action 99", zipOf(t, planMembers(tfPlan(3, tfChange("a.b", 99)))), "action 99"},
		{"action 2^32+5", zipOf(t, planMembers(tfPlan(3, tfChange("a.b", 1<<32+5)))), "action 4294967301"},
		{"no address", zipOf(t, planMembers(tfPlan(3, tfChange("", actionDelete)))), "no address"},
		{"no change", zipOf(t, planMembers(tfPlan(3, tfString(fieldChangeAddr, "a.b")(nil)))), "no action"},
		{"a newer plan field", zipOf(t, planMembers(protowire.AppendVarint(protowire.AppendTag(tfPlan(3), 33, protowire.VarintType), 1))), "the plan has field 33"},
		{"an old change field", zipOf(t, planMembers(tfPlan(3, tfChange("a.b", actionDelete, tfString(1, "managed"))))), "a resource change has field 1"},
		{"a newer change field", zipOf(t, planMembers(tfPlan(3, tfChange("a.b", actionDelete, tfString(9, "\x48\x01"))))), "a change has field 9"},
		{"not protobuf", zipOf(t, planMembers([]byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"))), "damaged"},
		{"a group", zipOf(t, planMembers(append(tfPlan(3), 0x1b))), "wire type 3"},
		{"changes as a varint", zipOf(t, planMembers(protowire.AppendVarint(protowire.AppendTag(tfPlan(3), 3, protowire.VarintType), 1))), "wire type 0"},
	}
	for _, c := range cases {
		p := previewPlan(t, c.data)
		unknownPlan(t, c.what, p, c.why)
		if !strings.Contains(p.Summary, "could not preview: terraform apply plan.tfplan") {
			t.Errorf("%s: summary %q", c.what, p.Summary)
		}
	}

	// Cut anywhere, the file is unknown (the zip's directory and the
	// member's checksum see to it), never a smaller plan.
	whole := zipOf(t, planMembers(valid))
	dir := t.TempDir()
	for n := 0; n < len(whole); n++ {
		path := filepath.Join(dir, "plan.tfplan")
		if err := os.WriteFile(path, whole[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		p := Compute(context.Background(), "terraform apply plan.tfplan", Options{Cwd: dir})
		if len(p.Targets) != 0 || len(p.Unknown) != 1 {
			t.Fatalf("cut at %d of %d: %+v %q", n, len(whole), p.Targets, p.Unknown)
		}
	}
	// A byte of the stored member changed: its checksum does not match.
	stored := planMembers(valid)
	stored[0].stored = true
	bad := zipOf(t, stored)
	i := bytes.Index(bad, valid)
	bad[i+len(valid)-1] ^= 0x20
	unknownPlan(t, "flipped byte", previewPlan(t, bad), "checksum")
}

// What the agent can put where the plan is expected is refused before it
// is read: a directory, a FIFO (opened without waiting for a writer), a
// device, a path whose .. leads through a symlink elsewhere.
func TestTerraformPlanNotAFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "plan.tfplan"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := Compute(context.Background(), "terraform apply plan.tfplan", Options{Cwd: dir})
	unknownPlan(t, "directory", p, "not a regular file")

	dir = t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "plan.tfplan"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan *Preview, 1)
	go func() { done <- Compute(context.Background(), "terraform apply plan.tfplan", Options{Cwd: dir}) }()
	select {
	case p := <-done:
		unknownPlan(t, "fifo", p, "not a regular file")
	case <-time.After(10 * time.Second):
		t.Fatal("the preview waits on a FIFO")
	}
	p = Compute(context.Background(), "terraform apply /dev/zero", Options{Cwd: dir})
	if len(p.Targets) != 0 || len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], "not a regular file") {
		t.Errorf("device: %+v %q", p.Targets, p.Unknown)
	}

	// link/../plan.tfplan: the kernel reads elsewhere/../plan.tfplan.
	dir = t.TempDir()
	for _, d := range []string{"elsewhere/sub", "here"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	plan := zipOf(t, planMembers(tfPlan(3, tfChange("a.b", actionDelete))))
	for _, f := range []string{"elsewhere/plan.tfplan", "here/plan.tfplan"} {
		if err := os.WriteFile(filepath.Join(dir, f), plan, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "elsewhere", "sub"), filepath.Join(dir, "here", "link")); err != nil {
		t.Fatal(err)
	}
	p = Compute(context.Background(), "terraform apply link/../plan.tfplan", Options{Cwd: filepath.Join(dir, "here")})
	if len(p.Targets) != 0 || len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], "symlink and ..") {
		t.Errorf("link/..: %+v %q", p.Targets, p.Unknown)
	}
	// Without a symlink, .. is what it says.
	p = Compute(context.Background(), "terraform apply ../here/plan.tfplan", Options{Cwd: filepath.Join(dir, "here")})
	if len(p.Targets) != 1 || p.Targets[0].Path != filepath.Join(dir, "here", "plan.tfplan") || p.Targets[0].Destroys != 1 {
		t.Errorf("..: %+v %q", p.Targets, p.Unknown)
	}
}

// The preview's reading is bounded: a member larger than the bound
// (declared or found), a change larger than its bound, a length that
// claims more than there is, a directory larger than a plan's, the time.
func TestTerraformPlanBounds(t *testing.T) {
	was := [3]int64{maxPlanBytes, maxChangeBytes, maxDirectoryBytes}
	t.Cleanup(func() { maxPlanBytes, maxChangeBytes, maxDirectoryBytes = was[0], was[1], was[2] })
	maxPlanBytes, maxChangeBytes, maxDirectoryBytes = 1<<20, 64<<10, 64<<10

	// 2 MiB of zeros in a field the preview skips (function_results):
	// deflated small, read to the bound and no further.
	huge := protowire.AppendBytes(protowire.AppendTag(tfPlan(3), 22, protowire.BytesType), make([]byte, 2<<20))
	unknownPlan(t, "huge member", previewPlan(t, zipOf(t, planMembers(huge))), "larger than 1.0 MiB")
	// Whatever size the directory declares, the read stops at the bound.
	pr := &planReader{ctx: context.Background(), deadline: time.Now().Add(time.Minute), limit: maxPlanBytes}
	pr.r = bufio.NewReader(&countingReader{r: bytes.NewReader(huge), n: &pr.read})
	if _, err := pr.plan(); err == nil || !strings.Contains(err.Error(), "larger than 1.0 MiB") || pr.read > 3<<20 {
		t.Errorf("streamed: %v after %d bytes", err, pr.read)
	}
	// A length prefix claiming a terabyte.
	claim := protowire.AppendVarint(protowire.AppendTag(tfPlan(3), 22, protowire.BytesType), 1<<40)
	unknownPlan(t, "claimed length", previewPlan(t, zipOf(t, planMembers(claim))), "larger than 1.0 MiB")
	// One change over its bound.
	big := tfChange("a.b", actionDelete, tfString(10, strings.Repeat("p", 100<<10)))
	unknownPlan(t, "huge change", previewPlan(t, zipOf(t, planMembers(tfPlan(3, big)))), "resource change is larger than 64.0 KiB")
	// A central directory of 5,000 members.
	many := planMembers(tfPlan(3))
	for i := range 5000 {
		many = append(many, member{name: fmt.Sprintf("tfconfig/m-/f%d.tf", i)})
	}
	unknownPlan(t, "many members", previewPlan(t, zipOf(t, many)), "zip directory is larger than 64.0 KiB")

	// A configuration larger than its bound is not read for provisioners.
	wasConfig := maxConfigBytes
	t.Cleanup(func() { maxConfigBytes = wasConfig })
	maxConfigBytes = 64 << 10
	bigConfig := append(planMembers(tfPlan(3)), member{name: "tfconfig/m-/main.tf", data: bytes.Repeat([]byte("# x\n"), 20<<10)})
	unknownPlan(t, "big configuration", previewPlan(t, zipOf(t, bigConfig)), "configuration is larger than 64.0 KiB")

	// Out of time: the preview's deadline passed.
	maxPlanBytes = was[0]
	data := zipOf(t, planMembers(tfPlan(3, tfChange("a.b", actionDelete))))
	_, err := readPlan(context.Background(), bytes.NewReader(data), int64(len(data)), time.Now().Add(-time.Second))
	if err != errPlanTime {
		t.Errorf("past the deadline: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readPlan(ctx, bytes.NewReader(data), int64(len(data)), time.Now().Add(time.Hour)); err != errPlanTime {
		t.Errorf("cancelled: %v", err)
	}
}

// BenchmarkTerraformPlanPreview previews terraform apply of a saved plan
// of 10,000 resource changes (each with 1 KiB of values), read from the
// file as a submit reads it.
func BenchmarkTerraformPlanPreview(b *testing.B) {
	values := bytes.Repeat([]byte{0xa5}, 1<<10)
	changes := make([][]byte, 10_000)
	for i := range changes {
		changes[i] = tfChange(fmt.Sprintf("module.m[%d].aws_instance.web[%d]", i/100, i%100), planAction([]planAction{actionCreate, actionUpdate, actionDelete, actionNoop}[i%4]),
			tfString(10, string(values)))
	}
	dir := b.TempDir()
	data := zipOf(b, planMembers(tfPlan(3, changes...)))
	if err := os.WriteFile(filepath.Join(dir, "plan.tfplan"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	latency.Each(b, func(int) {
		p := Compute(context.Background(), "terraform apply plan.tfplan", Options{Cwd: dir})
		if len(p.Targets) != 1 || p.Targets[0].Destroys != 2500 {
			b.Fatalf("%+v %q", p.Targets, p.Unknown)
		}
	})
}

// FuzzTerraformPlanMember feeds the tfplan decoder arbitrary bytes: it
// returns a plan or an error, never panics, and never holds a change
// larger than its bound.
func FuzzTerraformPlanMember(f *testing.F) {
	f.Add(tfPlan(3, tfChange("aws_instance.web", actionDelete), tfChange("a.b", actionCreate, tfString(fieldChangePrevRunAddr, "a.c"))))
	f.Add(tfPlan(3, tfChange("a.b", 4)))
	f.Add([]byte{0x1a, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add(append(tfPlan(3), 0x1b))
	f.Fuzz(func(t *testing.T, data []byte) {
		pr := &planReader{ctx: context.Background(), deadline: time.Now().Add(time.Minute), limit: 1 << 20}
		pr.r = bufio.NewReader(&countingReader{r: bytes.NewReader(data), n: &pr.read})
		p, err := pr.plan()
		if (p == nil) == (err == nil) {
			t.Fatalf("plan %v, error %v", p, err)
		}
		if p != nil {
			var tg Target
			p.count(&tg)
			for _, d := range tg.Details {
				if strings.ContainsAny(d, "\x1b\n\r") {
					t.Fatalf("detail not sanitised: %q", d)
				}
			}
		}
	})
}
