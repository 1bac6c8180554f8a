package impact

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
)

// mount is one line of /proc/self/mountinfo: where, from which device
// (major:minor, and the source the kernel names) and of what type.
type mount struct {
	point, dev, source, fstype string
}

// host is where block devices are looked up: sysfs, the mounts and the
// swap areas in use (the real ones in a preview; a fixture in tests).
type host struct {
	sys    string
	mounts []mount
	swaps  []string // the devices /proc/swaps lists, as major:minor
}

// thisHost reads the host's mounts and swaps (none where they cannot be
// read: a preview then names no mount, and says nothing is mounted only
// where it read that).
func thisHost() *host {
	h := &host{sys: "/sys", mounts: readMountinfo("/proc/self/mountinfo")}
	if data, err := os.ReadFile("/proc/swaps"); err == nil {
		for _, l := range strings.Split(string(data), "\n")[1:] {
			if f := strings.Fields(l); len(f) > 0 {
				if dev, ok := blockNumber(unescapeMount(f[0])); ok {
					h.swaps = append(h.swaps, dev)
				}
			}
		}
	}
	return h
}

// readMountinfo parses a mountinfo file: "36 35 98:0 / /mnt … - ext3
// /dev/root rw".
func readMountinfo(path string) []mount {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		m := mount{point: unescapeMount(fields[4]), dev: fields[2]}
		if i := slices.Index(fields, "-"); i > 0 && i+2 < len(fields) {
			m.fstype, m.source = fields[i+1], unescapeMount(fields[i+2])
		}
		out = append(out, m)
	}
	return out
}

// blockNumber is path's block device number as major:minor (ok false: not
// a block device). Symlinks are followed: /dev/disk/by-id/… name devices.
func blockNumber(path string) (string, bool) {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return "", false
	}
	return fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev)), true
}

// blockDevice is what sysfs says of one block device.
type blockDevice struct {
	name, dev string
	size      int64
	dir       string
}

// device reads the device numbered dev (major:minor) from sysfs.
func (h *host) device(dev string) (blockDevice, bool) {
	dir, err := filepath.EvalSymlinks(filepath.Join(h.sys, "dev", "block", dev))
	if err != nil {
		return blockDevice{}, false
	}
	d := blockDevice{name: filepath.Base(dir), dev: dev, dir: dir}
	if s, err := os.ReadFile(filepath.Join(dir, "size")); err == nil {
		sectors, _ := strconv.ParseInt(strings.TrimSpace(string(s)), 10, 64)
		d.size = sectors * 512 // sysfs counts 512-byte sectors whatever the device's own
	}
	return d, true
}

// byName reads the block device a holders/ or partition entry names.
func (h *host) byName(name string) (blockDevice, bool) {
	data, err := os.ReadFile(filepath.Join(h.sys, "class", "block", name, "dev"))
	if err != nil {
		return blockDevice{}, false
	}
	return h.device(strings.TrimSpace(string(data)))
}

// mountsOf are the mount points mounted from d: by device number, or by
// the source the kernel names (btrfs reports anonymous numbers).
func (h *host) mountsOf(d blockDevice) []string {
	var out []string
	for _, m := range h.mounts {
		if m.dev == d.dev || m.source == "/dev/"+d.name {
			out = append(out, m.point)
		}
	}
	if slices.Contains(h.swaps, d.dev) {
		out = append(out, "[SWAP]")
	}
	return out
}

// children are d's partitions (entries of its sysfs directory with a
// partition file), in the kernel's order.
func (h *host) children(d blockDevice) []blockDevice {
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return nil
	}
	var out []blockDevice
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(d.dir, e.Name(), "partition")); err != nil {
			continue
		}
		if p, ok := h.byName(e.Name()); ok {
			out = append(out, p)
		}
	}
	return out
}

// holders are the devices built on d (device-mapper, md RAID), named
// "dm-0 (vg-root)" where device-mapper gives a name.
func (h *host) holders(d blockDevice) []blockDevice {
	entries, err := os.ReadDir(filepath.Join(d.dir, "holders"))
	if err != nil {
		return nil
	}
	var out []blockDevice
	for _, e := range entries {
		hd, ok := h.byName(e.Name())
		if !ok {
			continue
		}
		if n, err := os.ReadFile(filepath.Join(hd.dir, "dm", "name")); err == nil {
			hd.name += " (" + strings.TrimSpace(string(n)) + ")"
		}
		out = append(out, hd)
	}
	return out
}

// describe fills t, a block device numbered dev: its kernel name and size,
// its partitions and holders, what is mounted from any of them (Mounts:
// live), a loop device's backing file.
func (h *host) describe(t *Target, dev string) {
	d, ok := h.device(dev)
	t.Op, t.Exists, t.Complete = model.OpWipe, true, true
	if !ok {
		t.Device = dev
		t.Note = "block device " + dev + " (not in sysfs: its size and mounts are not known)"
		return
	}
	t.Device, t.Bytes = d.name, d.size
	t.Note = "block device " + d.name + ", " + human.Bytes(d.size)
	if n, err := os.ReadFile(filepath.Join(d.dir, "partition")); err == nil {
		t.Note += ", partition " + strings.TrimSpace(string(n)) + " of " + filepath.Base(filepath.Dir(d.dir))
	}
	if b, err := os.ReadFile(filepath.Join(d.dir, "loop", "backing_file")); err == nil {
		t.Details = append(t.Details, "loop device backed by "+strings.TrimSpace(string(b)))
	}
	t.Mounts = h.mountsOf(d)
	parts := h.children(d)
	if len(parts) > 0 {
		t.Note += ", " + human.Count(int64(len(parts)), "partition", "partitions")
	}
	layer := func(what string, c blockDevice) {
		line := what + " " + c.name + ": " + human.Bytes(c.size)
		if ms := h.mountsOf(c); len(ms) > 0 {
			line += ", mounted on " + strings.Join(ms, ", ")
			t.Mounts = append(t.Mounts, ms...)
		} else {
			line += ", not mounted"
		}
		t.Details = append(t.Details, line)
	}
	for _, p := range parts {
		layer("partition", p)
		for _, hd := range h.holders(p) {
			layer("holder of "+p.name+",", hd)
		}
	}
	for _, hd := range h.holders(d) {
		layer("held by", hd)
	}
	t.Details = capDetails(t.Details, int64(len(t.Details)))
}

// capDetails is the first of total items, at most MaxImpactDetails lines:
// past that, the last line says how many more there are.
func capDetails(items []string, total int64) []string {
	if total <= model.MaxImpactDetails && int64(len(items)) == total {
		return items
	}
	keep := min(len(items), model.MaxImpactDetails-1)
	return append(items[:keep:keep], fmt.Sprintf("and %s more", human.Group(total-int64(keep))))
}

// ddArgs: dd of=FILE overwrites FILE (a block device: wipes it). dd
// without of= writes its output.
func ddArgs(a *analysis, _ string, args []string) {
	for _, arg := range args {
		if p, ok := strings.CutPrefix(arg, "of="); ok && p != "" {
			a.target(p, "overwrite", false, "", nil)
		}
	}
}

// mkfsValues are, per mkfs family, the options that take a value: what is
// left is the device, then (ignored) a size.
var mkfsValues = map[string]map[string]bool{
	"ext": set("-b", "-C", "-d", "-E", "-e", "-g", "-G", "-i", "-I", "-J", "-l", "-L", "-m", "-M", "-N", "-o", "-O", "-r", "-t", "-T", "-U", "-z"),
	"xfs": set("-b", "-d", "-i", "-l", "-L", "-m", "-n", "-p", "-r", "-s", "-c"),
	"fat": set("-a", "-b", "-D", "-f", "-F", "-g", "-h", "-i", "-l", "-m", "-M", "-n", "-r", "-R", "-s", "-S", "--codepage", "--invariant", "--offset", "--variant"),
	"btrfs": set("-d", "-m", "-L", "--label", "-n", "--nodesize", "-s", "--sectorsize", "-O", "--features", "-R", "--runtime-features",
		"-U", "--uuid", "-b", "--byte-count", "-r", "--rootdir", "--checksum", "--csum", "--data", "--metadata"),
	"swap": set("-L", "--label", "-U", "--uuid", "-p", "--pagesize", "-e", "--endianness", "--lock", "-o", "--offset", "-s", "--size"),
}

// set is keys as a set (options that take a value, and the like).
func set(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// mkfsFamily is the family of a mkfs program (mkfs.ext4, mke2fs, mkswap,
// mkfs -t TYPE).
func mkfsFamily(name string, args []string) string {
	typ := strings.TrimPrefix(strings.TrimPrefix(name, "mkfs"), ".")
	if name == "mkfs" {
		if v := valueOf(args, "-t", "--type"); v != "" {
			typ = v
		}
	}
	switch {
	case name == "mke2fs" || strings.HasPrefix(typ, "ext"):
		return "ext"
	case name == "mkswap":
		return "swap"
	case name == "mkdosfs" || typ == "vfat" || typ == "fat" || typ == "msdos" || typ == "exfat":
		return "fat"
	case typ == "xfs" || typ == "btrfs":
		return typ
	}
	return ""
}

// mkfsArgs: mkfs* DEVICE [SIZE] wipes DEVICE (with -t, and the family's
// options that take values, read).
func mkfsArgs(a *analysis, name string, args []string) {
	fam := mkfsFamily(name, args)
	if fam == "" {
		fam = "ext" // another family: read as mke2fs reads its options
	}
	values := mkfsValues[fam]
	if name == "mkfs" {
		values = set(append(slices.Collect(maps.Keys(values)), "-t", "--type")...)
	}
	ops := operands(args, values)
	if len(ops) == 0 {
		return
	}
	a.target(ops[0], model.OpWipe, false, "", nil)
}

// wipefsArgs: wipefs -a or -o OFFSET erases signatures; without them (or
// with -n) it only lists them.
func wipefsArgs(a *analysis, name string, args []string) {
	opts, _, ops, _ := a.opts(name, args, set("-o", "-t", "-O"))
	if opts["-n"] || opts["--no-act"] || !(opts["-a"] || opts["--all"] || opts["-o"] || opts["--offset"]) {
		return
	}
	for _, p := range ops {
		a.target(p, model.OpWipe, false, "", nil)
	}
}

// blkdiscardArgs: blkdiscard DEVICE discards every block of it.
func blkdiscardArgs(a *analysis, name string, args []string) {
	_, _, ops, _ := a.opts(name, args, set("-o", "-l", "-p"))
	for _, p := range ops {
		a.target(p, model.OpWipe, false, "", nil)
	}
}

// device adds the block device numbered dev, at abs.
func (a *analysis) device(abs, dev string) {
	t := Target{Path: abs, LiveLinks: []string{}}
	a.host().describe(&t, dev)
	a.targets = append(a.targets, t)
}

// host is read once per preview, when a device is first met.
func (a *analysis) host() *host {
	if a.dev == nil {
		a.dev = thisHost()
	}
	return a.dev
}
