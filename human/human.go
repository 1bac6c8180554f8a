// Package human holds the words approve-tui uses for numbers people read:
// durations, ages, byte sizes, counts and plurals. Every surface (the
// console, the CLI, notifications, the impact preview, the configuration)
// says these through this package, so that one quantity is said one way
// in one place. Where two surfaces say a duration differently on purpose
// (a countdown keeps its seconds, an age does not), each way is its own
// function here, named for what it says.
//
// It imports nothing but the standard library, so model/ may use it.
package human

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is a compact duration, to the second, sign dropped:
// 45s, 3m12s, 2h05m, 3d04h. It is the countdown's and the record's word.
func Duration(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// Written is d as people write it in a setting or a flag: 5m, 1h30m, 0s
// (not 5m0s), exact to the nanosecond like time.Duration.String.
func Written(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Window is a span of time asked for (a report's window): whole hours as
// hours (24h), whole minutes under an hour as minutes (90s is 1m30s, 30m
// is 30m), anything else as Duration.
func Window(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", int(d.Hours()))
	case d%time.Minute == 0 && d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return Duration(d)
}

// Left is a time left as a notification says it: "45s", "1m39s", "1h5m",
// "2d3h". Exact to the second under an hour (a second begun counts: never
// "0s" while time is left), to the nearest minute under a day, to the
// nearest hour past it; a zero part is left out ("2m", "1h", "3d").
func Left(d time.Duration) string {
	if d < time.Hour {
		secs := int((d + time.Second - 1) / time.Second)
		if secs < 60 {
			return fmt.Sprintf("%ds", secs)
		}
		if secs < 3600 {
			if secs%60 == 0 {
				return fmt.Sprintf("%dm", secs/60)
			}
			return fmt.Sprintf("%dm%ds", secs/60, secs%60)
		}
		d = time.Hour // 59m59.5s and more
	}
	if r := d.Round(time.Minute); r < 24*time.Hour {
		h, m := int(r/time.Hour), int(r%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	}
	r := d.Round(time.Hour)
	days, h := int(r/(24*time.Hour)), int(r%(24*time.Hour)/time.Hour)
	if h == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, h)
}

// Age is how old something is (d not negative), as the console says it:
// to the second under a minute, to the minute under an hour (3m), then as
// Duration (2h05m, 3d04h). A countdown (Duration) keeps its seconds for
// its last hour: how long is left is what a decision is made against, how
// long ago something happened is context.
func Age(d time.Duration) string {
	if r := d.Round(time.Second); AgeInMinutes(r) {
		return fmt.Sprintf("%dm", int(r.Minutes()))
	}
	return Duration(d)
}

// AgeInMinutes: an age r (rounded to the second) is said to the minute
// where Duration would say seconds too.
func AgeInMinutes(r time.Duration) bool { return r >= time.Minute && r < time.Hour }

// Ago says how long before now t was: "just now" within a second, "3m
// ago", "in 2h05m" for a time still to come (see Age).
func Ago(t, now time.Time) string {
	d := now.Sub(t)
	if d < time.Second && d > -time.Second {
		return "just now"
	}
	if d < 0 {
		return "in " + Age(-d)
	}
	return Age(d) + " ago"
}

// Relative says t against now to the second: "in 4m12s", "2m10s ago".
func Relative(t, now time.Time) string {
	d := t.Sub(now)
	if d >= 0 {
		return "in " + Duration(d)
	}
	return Duration(-d) + " ago"
}

// Coarse is an age in one spelled unit, cut down (not rounded), as a
// preview of files says it: "12 s", "5 min", "30 h", "3 days". Negative
// ages are "0 s".
func Coarse(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(max(d, 0).Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h", int(d.Hours()))
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}

// Bytes is n in binary units: 2.3 GiB, 512 B.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Group writes n with thousands separators: 12,408, -1,024.
func Group(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return sign + s
}

// Plural is one when n is 1, else many: the word alone.
func Plural[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n and the word for it, n grouped: "1 file", "12,408 files".
func Count(n int64, one, many string) string {
	return Group(n) + " " + Plural(n, one, many)
}

// CountNo is Count with "no" for none and a plain "s" plural, the words of
// a check's summary: "no problems", "1 problem", "3 problems".
func CountNo(n int, word string) string {
	if n == 0 {
		return "no " + word + "s"
	}
	return strconv.Itoa(n) + " " + Plural(n, word, word+"s")
}
