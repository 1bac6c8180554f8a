package impact

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
)

// A saved terraform plan is a zip archive: the planned changes in member
// tfplan (a protocol buffers message, terraform's tfplan.Plan), the prior
// states in tfstate and tfstate-prev, the configuration under tfconfig/.
// The preview reads the changes from it directly: terraform show would
// start the providers the plan names, which the working directory (that
// is, the agent) can supply. Only the fields the counts need are decoded;
// everything else is skipped unread.

// planFormatVersion is the tfplan format this preview reads (Plan.version);
// another is not guessed at.
const planFormatVersion = 3

// Bounds on what a plan may make the preview read: the tfplan member
// uncompressed, one resource change, the zip's central directory, the
// configuration (read for provisioners).
var (
	maxPlanBytes      int64 = 256 << 20
	maxChangeBytes    int64 = 16 << 20
	maxDirectoryBytes int64 = 16 << 20
	maxConfigBytes    int64 = 32 << 20
)

// maxAddrRunes cuts a resource address shown in a detail.
const maxAddrRunes = 200

// Field numbers of tfplan.Plan, tfplan.ResourceInstanceChange and
// tfplan.Change that the preview reads.
const (
	fieldPlanVersion         = 1
	fieldPlanResourceChanges = 3
	fieldPlanErrored         = 20
	fieldPlanActions         = 30 // action_invocations
	fieldPlanActionTargets   = 32 // action_target_addrs
	fieldChangeAddr          = 13
	fieldChangePrevRunAddr   = 14
	fieldChangeDeposedKey    = 7
	fieldChangeChange        = 9
	fieldChangeAction        = 1
)

// The fields of tfplan.Plan, tfplan.ResourceInstanceChange and
// tfplan.Change the format has (terraform 1.14). A field outside them is a
// format this preview does not understand: the plan is unknown, lest a new
// field change what the apply does.
var (
	planFields   = fieldSet(1, 2, 3, 4, 5, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 25, 26, 27, 28, 29, 30, 31, 32)
	changeFields = fieldSet(7, 8, 9, 10, 11, 12, 13, 14)
	actionFields = fieldSet(1, 2, 3, 4, 5, 6, 7, 8)
)

func fieldSet(nums ...protowire.Number) map[protowire.Number]bool {
	m := map[protowire.Number]bool{}
	for _, n := range nums {
		m[n] = true
	}
	return m
}

// unknownField is the error for a field the format does not have.
func unknownField(what string, num protowire.Number) error {
	return fmt.Errorf("%s has field %d, which this preview does not know: a plan format it does not read", what, num)
}

// planAction is tfplan.Action.
type planAction uint64

const (
	actionNoop             planAction = 0
	actionCreate           planAction = 1
	actionRead             planAction = 2
	actionUpdate           planAction = 3
	actionDelete           planAction = 5
	actionDeleteThenCreate planAction = 6
	actionCreateThenDelete planAction = 7
	actionForget           planAction = 8
	actionCreateThenForget planAction = 9
)

// planChange is one resource instance's planned change.
type planChange struct {
	addr, prev, deposed string
	action              planAction
}

// planChanges is what the preview reads of a plan.
type planChanges struct {
	version    uint64
	hasVersion bool
	errored    bool
	changes    []planChange
	// actions counts provider action invocations (terraform's actions):
	// programs the apply runs, which no count describes.
	actions int64
	// provisioners: the configuration has provisioners, programs
	// terraform runs as it applies.
	provisioners bool
}

// errPlanTime: the plan was not read within the preview's time bound.
var errPlanTime = errors.New("the plan could not be read within the preview's time bound")

// boundedReaderAt fails once more than left bytes were read through it:
// a zip's central directory is read whole, whatever size it claims.
type boundedReaderAt struct {
	r    io.ReaderAt
	left int64
	over bool // a read was refused
}

func (b *boundedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if int64(len(p)) > b.left {
		b.over = true
		return 0, errors.New("the plan's directory is larger than a plan's")
	}
	b.left -= int64(len(p))
	return b.r.ReadAt(p, off)
}

// readPlan reads the plan file r (size bytes): its format, then its
// changes. Anything it cannot read for sure is an error that says why.
func readPlan(ctx context.Context, r io.ReaderAt, size int64, deadline time.Time) (*planChanges, error) {
	br := &boundedReaderAt{r: r, left: maxDirectoryBytes}
	zr, err := zip.NewReader(br, size)
	if err != nil {
		switch {
		case errors.Is(err, zip.ErrInsecurePath):
			return nil, errors.New("not a terraform plan file (a member's name is not a plain path)")
		case br.over:
			return nil, fmt.Errorf("not a terraform plan file (its zip directory is larger than %s)", human.Bytes(maxDirectoryBytes))
		}
		return nil, errors.New("not a terraform plan file (not a zip archive)")
	}
	br.left = math.MaxInt64
	var tfplan *zip.File
	seen := map[string]int{}
	for _, f := range zr.File {
		seen[f.Name]++
		if f.Name == "tfplan" && tfplan == nil {
			tfplan = f
		}
	}
	switch {
	case tfplan == nil:
		return nil, errors.New("not a terraform plan file (no tfplan member)")
	case seen["tfplan"] > 1:
		return nil, errors.New("not a terraform plan file (two tfplan members)")
	case seen["tfstate"] == 0 || seen["tfstate-prev"] == 0 || seen["tfconfig/modules.json"] == 0:
		return nil, errors.New("a plan file in a format this preview does not read (no tfstate, tfstate-prev or tfconfig)")
	case tfplan.UncompressedSize64 > uint64(maxPlanBytes):
		return nil, fmt.Errorf("the plan is larger than %s: not read", human.Bytes(maxPlanBytes))
	}
	rc, err := tfplan.Open()
	if err != nil {
		return nil, fmt.Errorf("the plan file is damaged (%v)", err)
	}
	defer rc.Close()
	pr := &planReader{ctx: ctx, deadline: deadline, limit: maxPlanBytes}
	pr.r = bufio.NewReaderSize(&countingReader{r: rc, n: &pr.read}, 64<<10)
	p, err := pr.plan()
	if err != nil {
		return nil, err
	}
	if !p.hasVersion || p.version != planFormatVersion {
		v := "none"
		if p.hasVersion {
			v = fmt.Sprint(p.version)
		}
		return nil, fmt.Errorf("the plan's format version is %s; this preview reads version %d only", v, planFormatVersion)
	}
	if p.provisioners, err = provisioned(ctx, zr, deadline); err != nil {
		return nil, err
	}
	return p, nil
}

// provisioned reports whether the plan's configuration (its tfconfig/
// members) speaks of a provisioner: a program terraform runs as it
// creates or destroys, which no count describes. The word anywhere
// counts (a comment too): a needless "unknown" is the safe mistake.
func provisioned(ctx context.Context, zr *zip.Reader, deadline time.Time) (bool, error) {
	left := maxConfigBytes
	for _, f := range zr.File {
		if !strings.HasPrefix(f.Name, "tfconfig/") || f.Name == "tfconfig/modules.json" {
			continue
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return false, errPlanTime
		}
		rc, err := f.Open()
		if err != nil {
			return false, fmt.Errorf("the plan file is damaged (%v)", err)
		}
		b, err := io.ReadAll(io.LimitReader(rc, left+1))
		rc.Close()
		switch {
		case int64(len(b)) > left:
			return false, fmt.Errorf("the plan's configuration is larger than %s: not read for provisioners", human.Bytes(maxConfigBytes))
		case errors.Is(err, zip.ErrChecksum):
			return false, damaged("its checksum does not match")
		case err != nil:
			return false, damaged(err.Error())
		case bytes.Contains(b, []byte("provisioner")):
			return true, nil
		}
		left -= int64(len(b))
	}
	return false, nil
}

// countingReader counts what it reads into n.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	*c.n += int64(k)
	return k, err
}

// planReader decodes a tfplan.Plan message as it streams from the zip:
// only one resource change is held at a time.
type planReader struct {
	ctx      context.Context
	deadline time.Time
	r        *bufio.Reader
	read     int64 // bytes read from the member so far
	limit    int64
	buf      bytes.Buffer // the change being decoded
}

// damaged is the error for a member that does not decode.
func damaged(what string) error {
	return fmt.Errorf("the plan file is damaged (%s)", what)
}

// check stops reading past the bounds.
func (pr *planReader) check() error {
	switch {
	case pr.read > pr.limit:
		return fmt.Errorf("the plan is larger than %s: not read", human.Bytes(pr.limit))
	case pr.ctx.Err() != nil || time.Now().After(pr.deadline):
		return errPlanTime
	}
	return nil
}

// ioErr names a read error: the bounds first, then a short member.
func (pr *planReader) ioErr(err error) error {
	if e := pr.check(); e != nil {
		return e
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return damaged("cut short")
	}
	if errors.Is(err, zip.ErrChecksum) {
		return damaged("its checksum does not match")
	}
	return damaged(err.Error())
}

func (pr *planReader) plan() (*planChanges, error) {
	p := &planChanges{}
	for {
		if err := pr.check(); err != nil {
			return nil, err
		}
		tag, err := binary.ReadUvarint(pr.r)
		if errors.Is(err, io.EOF) && pr.r.Buffered() == 0 {
			// A clean end: the member's checksum was verified by the
			// read that reported it.
			return p, nil
		}
		if err != nil {
			return nil, pr.ioErr(err)
		}
		if tag>>3 > math.MaxInt32 {
			return nil, damaged("a field number out of range")
		}
		num, typ := protowire.Number(tag>>3), protowire.Type(tag&7)
		if !num.IsValid() {
			return nil, damaged("a field number out of range")
		}
		if !planFields[num] {
			return nil, unknownField("the plan", num)
		}
		switch typ {
		case protowire.VarintType:
			v, err := binary.ReadUvarint(pr.r)
			if err != nil {
				return nil, pr.ioErr(err)
			}
			switch num {
			case fieldPlanVersion:
				p.version, p.hasVersion = v, true
			case fieldPlanErrored:
				p.errored = v != 0
			}
		case protowire.Fixed64Type:
			if err := pr.skip(8); err != nil {
				return nil, err
			}
		case protowire.Fixed32Type:
			if err := pr.skip(4); err != nil {
				return nil, err
			}
		case protowire.BytesType:
			n, err := binary.ReadUvarint(pr.r)
			if err != nil {
				return nil, pr.ioErr(err)
			}
			if n > uint64(pr.limit) {
				return nil, fmt.Errorf("the plan is larger than %s: not read", human.Bytes(pr.limit))
			}
			switch num {
			case fieldPlanResourceChanges:
				if n > uint64(maxChangeBytes) {
					return nil, fmt.Errorf("a resource change is larger than %s: not read", human.Bytes(maxChangeBytes))
				}
				// The buffer grows as the bytes arrive (a length is only a
				// claim) and is reused: decodeChange copies what it keeps.
				pr.buf.Reset()
				if _, err := io.CopyN(&pr.buf, pr.r, int64(n)); err != nil {
					return nil, pr.ioErr(err)
				}
				c, err := decodeChange(pr.buf.Bytes())
				if err != nil {
					return nil, err
				}
				p.changes = append(p.changes, c)
			case fieldPlanActions, fieldPlanActionTargets:
				p.actions++
				fallthrough
			default:
				if err := pr.skip(int64(n)); err != nil {
					return nil, err
				}
			}
		default:
			// Groups are not in terraform's format (proto3); a field
			// this preview does not know how to skip is not guessed at.
			return nil, damaged(fmt.Sprintf("field %d has wire type %d", num, typ))
		}
		if (num == fieldPlanVersion || num == fieldPlanErrored) && typ != protowire.VarintType ||
			(num == fieldPlanResourceChanges || num == fieldPlanActions) && typ != protowire.BytesType {
			return nil, damaged(fmt.Sprintf("field %d has wire type %d", num, typ))
		}
	}
}

// skip reads n bytes past, a MiB at a time so the bounds hold while it does.
func (pr *planReader) skip(n int64) error {
	for n > 0 {
		if err := pr.check(); err != nil {
			return err
		}
		step := min(n, 1<<20)
		k, err := pr.r.Discard(int(step))
		n -= int64(k)
		if err != nil {
			return pr.ioErr(err)
		}
	}
	return nil
}

// decodeChange decodes one tfplan.ResourceInstanceChange.
func decodeChange(b []byte) (planChange, error) {
	var c planChange
	hasChange := false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return c, damaged("a resource change: " + protowire.ParseError(n).Error())
		}
		b = b[n:]
		if !changeFields[num] {
			return c, unknownField("a resource change", num)
		}
		switch num {
		case fieldChangeAddr, fieldChangePrevRunAddr, fieldChangeDeposedKey, fieldChangeChange:
			if typ != protowire.BytesType {
				return c, damaged(fmt.Sprintf("a resource change's field %d has wire type %d", num, typ))
			}
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return c, damaged("a resource change: " + protowire.ParseError(n).Error())
			}
			b = b[n:]
			if num == fieldChangeChange {
				hasChange = true
				if err := decodeAction(v, &c); err != nil {
					return c, err
				}
				continue
			}
			if !utf8.Valid(v) {
				return c, damaged("a resource address is not UTF-8")
			}
			switch num {
			case fieldChangeAddr:
				c.addr = string(v)
			case fieldChangePrevRunAddr:
				c.prev = string(v)
			case fieldChangeDeposedKey:
				c.deposed = string(v)
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return c, damaged("a resource change: " + protowire.ParseError(n).Error())
			}
			b = b[n:]
		}
	}
	switch {
	case c.addr == "":
		return c, errors.New("a resource change names no address: a plan format this preview does not read")
	case !hasChange:
		return c, errors.New("a resource change has no action: a plan format this preview does not read")
	}
	return c, nil
}

// decodeAction reads tfplan.Change's action into c (a message given twice
// merges: the last action given counts).
func decodeAction(b []byte, c *planChange) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return damaged("a change: " + protowire.ParseError(n).Error())
		}
		b = b[n:]
		if !actionFields[num] {
			return unknownField("a change", num)
		}
		if num == fieldChangeAction {
			if typ != protowire.VarintType {
				return damaged(fmt.Sprintf("a change's action has wire type %d", typ))
			}
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return damaged("a change: " + protowire.ParseError(n).Error())
			}
			b = b[n:]
			c.action = planAction(v)
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return damaged("a change: " + protowire.ParseError(n).Error())
		}
		b = b[n:]
	}
	switch c.action {
	case actionNoop, actionCreate, actionRead, actionUpdate, actionDelete, actionDeleteThenCreate,
		actionCreateThenDelete, actionForget, actionCreateThenForget:
		return nil
	}
	return fmt.Errorf("a resource change has action %d, which this preview does not know", uint64(c.action))
}

// count counts p's changes into t as terraform's "Plan: 1 to add, 2 to
// change, 3 to destroy" does (a replacement is one create and one
// destroy; a read, a no-op and a forget are none), and names destroys
// first, then replacements, updates, creates and forgets, each sorted.
func (p *planChanges) count(t *Target) {
	var destroys, replaces, updates, creates, forgets []string
	for _, c := range p.changes {
		addr := planAddr(c.addr)
		if c.prev != "" && c.prev != c.addr {
			addr += " (moved from " + planAddr(c.prev) + ")"
		}
		if c.deposed != "" {
			addr += " (deposed object " + planAddr(c.deposed) + ")"
		}
		switch c.action {
		case actionCreate:
			t.Creates++
			creates = append(creates, "create "+addr)
		case actionUpdate:
			t.Updates++
			updates = append(updates, "update "+addr)
		case actionDelete:
			t.Destroys++
			destroys = append(destroys, "destroy "+addr)
		case actionDeleteThenCreate, actionCreateThenDelete:
			t.Creates++
			t.Destroys++
			replaces = append(replaces, "replace "+addr)
		case actionCreateThenForget:
			t.Creates++
			creates = append(creates, "create "+addr+" (the object it replaces is forgotten, not destroyed)")
		case actionForget:
			forgets = append(forgets, "forget "+addr+" (terraform stops managing it; not destroyed)")
		}
	}
	for _, s := range [][]string{destroys, replaces, updates, creates, forgets} {
		slices.Sort(s)
	}
	all := slices.Concat(destroys, replaces, updates, creates, forgets)
	t.Details = capDetails(all, int64(len(all)))
	if p.errored {
		t.Note = "the plan errored: terraform will not apply it"
	}
}

// planAddr is a resource address fit to show: sanitised on one line, cut.
func planAddr(s string) string {
	if utf8.RuneCountInString(s) > maxAddrRunes {
		s = string([]rune(s)[:maxAddrRunes]) + "…"
	}
	return strings.TrimSpace(model.Sanitize(s, model.Line))
}
