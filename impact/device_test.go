package impact

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// sysFixture is a sysfs tree as the kernel lays it out for a disk sdb
// (8:16, 1 GiB) with partitions sdb1 (8:17, mounted on /boot) and sdb2
// (8:18), which holds device-mapper's dm-0 (253:0, "vg-root", mounted on
// "/srv/my data"), and swap on sdb3 (8:19).
func sysFixture(t *testing.T) *host {
	t.Helper()
	sys := t.TempDir()
	write := func(p, content string) {
		full := filepath.Join(sys, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		full := filepath.Join(sys, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(sys, target), full); err != nil {
			t.Fatal(err)
		}
	}
	disk := "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sdb"
	write(disk+"/dev", "8:16")
	write(disk+"/size", "2097152")
	for i, size := range []string{"1048576", "786432", "262144"} {
		part := fmt.Sprintf("%s/sdb%d", disk, i+1)
		write(part+"/dev", fmt.Sprintf("8:%d", 17+i))
		write(part+"/size", size)
		write(part+"/partition", fmt.Sprint(i+1))
		link(part, fmt.Sprintf("class/block/sdb%d", i+1))
		link(part, fmt.Sprintf("dev/block/8:%d", 17+i))
	}
	write(disk+"/holders/.keep", "") // a file, not a holder: skipped
	dm := "devices/virtual/block/dm-0"
	write(dm+"/dev", "253:0")
	write(dm+"/size", "786432")
	write(dm+"/dm/name", "vg-root")
	link(dm, disk+"/sdb2/holders/dm-0")
	link(dm, "class/block/dm-0")
	link(dm, "dev/block/253:0")
	link(disk, "class/block/sdb")
	link(disk, "dev/block/8:16")
	info := filepath.Join(sys, "mountinfo")
	if err := os.WriteFile(info, []byte(strings.Join([]string{
		`22 1 253:0 / /srv/my\040data rw,relatime shared:1 - ext4 /dev/mapper/vg-root rw`,
		`23 22 8:17 / /boot rw,relatime shared:2 - vfat /dev/sdb1 rw`,
		`24 22 0:22 / /proc rw - proc proc rw`,
	}, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &host{sys: sys, mounts: readMountinfo(info), swaps: []string{"8:19"}}
}

// A block device is its size, its partitions and holders, and what is
// mounted from any of them; a partition says whose it is.
func TestBlockDeviceAsSysfsDescribesIt(t *testing.T) {
	h := sysFixture(t)
	var disk Target
	h.describe(&disk, "8:16")
	if disk.Op != model.OpWipe || disk.Device != "sdb" || disk.Bytes != 1<<30 || !disk.Exists {
		t.Fatalf("disk %+v", disk)
	}
	if disk.Note != "block device sdb, 1.0 GiB, 3 partitions" {
		t.Errorf("note %q", disk.Note)
	}
	wantDetails := []string{
		"partition sdb1: 512.0 MiB, mounted on /boot",
		"partition sdb2: 384.0 MiB, not mounted",
		"holder of sdb2, dm-0 (vg-root): 384.0 MiB, mounted on /srv/my data",
		"partition sdb3: 128.0 MiB, mounted on [SWAP]",
	}
	if !slices.Equal(disk.Details, wantDetails) {
		t.Errorf("details\n%q\nwant\n%q", disk.Details, wantDetails)
	}
	if want := []string{"/boot", "/srv/my data", "[SWAP]"}; !slices.Equal(disk.Mounts, want) {
		t.Errorf("mounts %q, want %q", disk.Mounts, want)
	}
	p := &Preview{Targets: []Target{disk}, Complete: true}
	if level, _ := Raise(p); level != model.RiskHigh || !p.Live() {
		t.Errorf("a mounted disk: raise %q live %v", level, p.Live())
	}
	var part Target
	h.describe(&part, "8:18")
	if part.Device != "sdb2" || part.Note != "block device sdb2, 384.0 MiB, partition 2 of sdb" ||
		!slices.Equal(part.Details, []string{"held by dm-0 (vg-root): 384.0 MiB, mounted on /srv/my data"}) {
		t.Errorf("partition %+v", part)
	}
	var gone Target
	h.describe(&gone, "9:9")
	if gone.Device != "9:9" || !strings.Contains(gone.Note, "not in sysfs") {
		t.Errorf("unknown device %+v", gone)
	}
}

// loopDevice attaches a file of size bytes as a loop device with an ext4
// file system on it, or skips the test with the reason.
func loopDevice(t *testing.T, size int64) (dev, image string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a loop device needs root: skipped (the sysfs fixture test covers the description)")
	}
	for _, prog := range []string{"losetup", "mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed: skipped", prog)
		}
	}
	image = filepath.Join(t.TempDir(), "disk image.img")
	if err := os.WriteFile(image, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(image, size); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "-f", "--show", image).CombinedOutput()
	if err != nil {
		t.Skipf("losetup refused here (%v: %s): skipped", err, strings.TrimSpace(string(out)))
	}
	dev = strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("losetup", "-d", dev).Run() })
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", dev).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v %s", err, out)
	}
	return dev, image
}

// The analysers of dd of=, mkfs*, wipefs and blkdiscard name a real loop
// device: its size, its backing file, and where it is mounted, which makes
// it live; mounted after the approval, the wipe is refused.
func TestLoopDeviceWipes(t *testing.T) {
	dev, image := loopDevice(t, 16<<20)
	name := filepath.Base(dev)
	cmds := []string{
		"dd if=/dev/zero of=" + dev + " bs=1M",
		"mkfs.ext4 -L data -b 4096 " + dev + " 1000",
		"mkfs -t ext4 -L data " + dev,
		"mkfs.xfs -f -L x " + dev,
		"mkswap -L s " + dev,
		"wipefs -a " + dev,
		"wipefs --offset 0x438 " + dev,
		"blkdiscard -f " + dev,
		"shred -n 1 " + dev,
		"cat /dev/zero > " + dev,
		"sudo wipefs -a " + dev,
		"cp disk.img " + dev,
		"truncate -s 0 " + dev,
	}
	check := func(mounted string) {
		t.Helper()
		for _, cmd := range cmds {
			p := Compute(context.Background(), cmd, Options{Cwd: "/"})
			if len(p.Targets) != 1 || len(p.Unknown) != 0 {
				t.Errorf("%s: targets %+v, unknown %q", cmd, p.Targets, p.Unknown)
				continue
			}
			tg := p.Targets[0]
			if tg.Op != model.OpWipe || tg.Device != name || tg.Bytes != 16<<20 || !tg.Exists ||
				!slices.Contains(tg.Details, "loop device backed by "+image) {
				t.Errorf("%s: %+v", cmd, tg)
			}
			if level, _ := Raise(p); level != model.RiskHigh {
				t.Errorf("%s: a wiped device raises to %q", cmd, level)
			}
			if mounted == "" && (len(tg.Mounts) != 0 || p.Live()) || mounted != "" && (!slices.Equal(tg.Mounts, []string{mounted}) || !p.Live()) {
				t.Errorf("%s: mounts %q, want %q", cmd, tg.Mounts, mounted)
			}
			want := "wipes " + dev + " (block device " + name + ", 16.0 MiB"
			if !strings.HasPrefix(p.Summary, want) || mounted != "" && !strings.Contains(p.Summary, "mounted on "+mounted) {
				t.Errorf("%s: summary %q", cmd, p.Summary)
			}
		}
	}
	check("")
	// Its node changed or removed, not its blocks: no wipe.
	for _, cmd := range []string{"chmod 666 " + dev, "chown nobody " + dev, "rm " + dev} {
		p := Compute(context.Background(), cmd, Options{Cwd: "/"})
		if len(p.Targets) != 1 || p.Targets[0].Device != "" || p.Targets[0].Op == model.OpWipe {
			t.Errorf("%s: %+v", cmd, p.Targets)
		}
	}
	approved := Compute(context.Background(), "wipefs -a "+dev, Options{Cwd: "/"})
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", dev, mnt).CombinedOutput(); err != nil {
		t.Skipf("mount refused here (%v: %s): the mounted half is skipped", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	check(mnt)
	grew := Grew(approved, Compute(context.Background(), "wipefs -a "+dev, Options{Cwd: "/"}))
	if len(grew) != 1 || grew[0] != dev+" is mounted on "+mnt+" now" {
		t.Errorf("grew %q", grew)
	}
}

// What wipes nothing names nothing: wipefs listing, dd to its output or
// to /dev/null; an image file is a file wiped.
func TestWipesThatAreNoDevice(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"disk.img": strings.Repeat("x", 4096)}, nil)
	for _, cmd := range []string{"wipefs /dev/zero", "wipefs -n -a disk.img", "dd if=disk.img", "dd if=disk.img of=/dev/null", "mkfs.ext4 -F /dev/null"} {
		if p := Compute(context.Background(), cmd, Options{Cwd: dir}); len(p.Targets) != 0 {
			t.Errorf("%s: %+v", cmd, p.Targets)
		}
	}
	for cmd, op := range map[string]string{"mkfs.ext4 -F disk.img": model.OpWipe, "wipefs -a disk.img": model.OpWipe, "dd if=/dev/zero of=disk.img": "overwrite"} {
		p := Compute(context.Background(), cmd, Options{Cwd: dir})
		if len(p.Targets) != 1 || p.Targets[0].Op != op || p.Targets[0].Device != "" || p.Targets[0].Bytes != 4096 || p.Targets[0].Entries != 1 {
			t.Errorf("%s: %+v", cmd, p.Targets)
		}
	}
}
