package human

import (
	"testing"
	"time"
)

func TestDurations(t *testing.T) {
	s, m, h, day := time.Second, time.Minute, time.Hour, 24*time.Hour
	cases := []struct {
		name string
		f    func(time.Duration) string
		d    time.Duration
		want string
	}{
		{"Duration", Duration, 0, "0s"},
		{"Duration", Duration, 45 * s, "45s"},
		{"Duration", Duration, -45 * s, "45s"},
		{"Duration", Duration, 3*m + 12*s, "3m12s"},
		{"Duration", Duration, 3*m + 1500*time.Millisecond, "3m02s"},
		{"Duration", Duration, 2*h + 5*m, "2h05m"},
		{"Duration", Duration, 3*day + 4*h, "3d04h"},
		{"Written", Written, 5 * m, "5m"},
		{"Written", Written, h + 30*m, "1h30m"},
		{"Written", Written, 2 * h, "2h"},
		{"Written", Written, 0, "0s"},
		{"Written", Written, h + 30*m + 15*s, "1h30m15s"},
		{"Window", Window, 24 * h, "24h"},
		{"Window", Window, 30 * m, "30m"},
		{"Window", Window, 90 * m, "1h30m"},
		{"Window", Window, 90 * s, "1m30s"},
		{"Left", Left, 500 * time.Millisecond, "1s"},
		{"Left", Left, 45 * s, "45s"},
		{"Left", Left, 2 * m, "2m"},
		{"Left", Left, m + 39*s, "1m39s"},
		{"Left", Left, 59*m + 59*s + 500*time.Millisecond, "1h"},
		{"Left", Left, h + 5*m, "1h5m"},
		{"Left", Left, 2*day + 3*h, "2d3h"},
		{"Left", Left, 3 * day, "3d"},
		{"Age", Age, 45 * s, "45s"},
		{"Age", Age, 3*m + 12*s, "3m"},
		{"Age", Age, 59*m + 59*s + 600*time.Millisecond, "1h00m"},
		{"Age", Age, 2*h + 5*m + 40*s, "2h05m"},
		{"Coarse", Coarse, -s, "0 s"},
		{"Coarse", Coarse, 12 * s, "12 s"},
		{"Coarse", Coarse, 5*m + 59*s, "5 min"},
		{"Coarse", Coarse, 30 * h, "30 h"},
		{"Coarse", Coarse, 3*day + 23*h, "3 days"},
	}
	for _, c := range cases {
		if got := c.f(c.d); got != c.want {
			t.Errorf("%s(%v) = %q, want %q", c.name, c.d, got, c.want)
		}
	}
}

func TestAgoAndRelative(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		at       time.Time
		ago, rel string
	}{
		{now.Add(-500 * time.Millisecond), "just now", "1s ago"},
		{now.Add(-3*time.Minute - 12*time.Second), "3m ago", "3m12s ago"},
		{now.Add(4*time.Minute + 12*time.Second), "in 4m", "in 4m12s"},
		{now.Add(-2*time.Hour - 5*time.Minute), "2h05m ago", "2h05m ago"},
		{now, "just now", "in 0s"},
	} {
		if got := Ago(c.at, now); got != c.ago {
			t.Errorf("Ago(%v) = %q, want %q", now.Sub(c.at), got, c.ago)
		}
		if got := Relative(c.at, now); got != c.rel {
			t.Errorf("Relative(%v) = %q, want %q", now.Sub(c.at), got, c.rel)
		}
	}
}

func TestNumbers(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Bytes(0), "0 B"},
		{Bytes(512), "512 B"},
		{Bytes(1024), "1.0 KiB"},
		{Bytes(2469606195), "2.3 GiB"},
		{Group(0), "0"},
		{Group(999), "999"},
		{Group(12408), "12,408"},
		{Group(1234567), "1,234,567"},
		{Group(-1024), "-1,024"},
		{Group(-123), "-123"},
		{Plural(1, "line", "lines"), "line"},
		{Plural(0, "line", "lines"), "lines"},
		{Plural(int64(18), "line", "lines"), "lines"},
		{Count(1, "file", "files"), "1 file"},
		{Count(0, "file", "files"), "0 files"},
		{Count(12408, "file", "files"), "12,408 files"},
		{CountNo(0, "problem"), "no problems"},
		{CountNo(1, "problem"), "1 problem"},
		{CountNo(3, "problem"), "3 problems"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// Time left is never cut down to a smaller number: exact to the second
// under an hour, to the nearest minute under a day, the nearest hour past.
func TestLeft(t *testing.T) {
	cases := map[time.Duration]string{
		45 * time.Second:                                   "45s",
		99 * time.Second:                                   "1m39s",
		2*time.Minute + 59*time.Second:                     "2m59s",
		time.Hour:                                          "1h",
		time.Hour + 5*time.Minute:                          "1h5m",
		time.Hour + 5*time.Minute + 31*time.Second:         "1h6m",
		49 * time.Hour:                                     "2d1h",
		48 * time.Hour:                                     "2d",
		500 * time.Millisecond:                             "1s",
		time.Nanosecond:                                    "1s",
		23*time.Hour + 59*time.Minute:                      "23h59m",
		23*time.Hour + 59*time.Minute + 45*time.Second:     "1d",
		59*time.Minute + 59*time.Second:                    "59m59s",
		59*time.Minute + 59*time.Second + time.Millisecond: "1h",
		24*time.Hour + 30*time.Minute:                      "1d1h",
		24*time.Hour + 29*time.Minute:                      "1d",
		72*time.Hour + 23*time.Hour:                        "3d23h",
		time.Minute:                                        "1m",
		time.Minute - time.Nanosecond:                      "1m",
		3*time.Hour + 29*time.Second:                       "3h",
		10*time.Minute + 30*time.Second:                    "10m30s",
		100*time.Hour + 59*time.Minute:                     "4d5h",
		1*time.Second + 999*time.Millisecond:               "2s",
	}
	for d, want := range cases {
		if got := Left(d); got != want {
			t.Errorf("Left(%v) = %q, want %q", d, got, want)
		}
	}
}
