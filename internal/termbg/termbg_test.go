package termbg

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

func TestParseReply(t *testing.T) {
	for in, want := range map[string][2]bool{
		"\x1b]11;rgb:0000/0000/0000\x1b\\":          {true, true},
		"\x1b]11;rgb:ffff/ffff/ffff\a":              {false, true},
		"\x1b]11;rgb:1e1e/1e1e/2e2e\x1b\\\x1b[3;1R": {true, true},
		"\x1b]11;rgb:fd/f6/e3\x1b\\":                {false, true}, // two digits each (solarized light)
		"\x1b]11;rgb:f/f/f\a":                       {false, true},
		"\x1b[24;1R":                                {false, false}, // only the cursor: no OSC 11
		"\x1b]11;rgb:ffff/ffff\a":                   {false, false},
		"\x1b]11;rgb:fffff/0/0\a":                   {false, false},
		"\x1b]11;rgb:zz/00/00\a":                    {false, false},
		"\x1b]11;rgb:ffff/ffff/ffff":                {false, false}, // not ended
	} {
		dark, ok := ParseReply([]byte(in))
		if dark != want[0] || ok != want[1] {
			t.Errorf("ParseReply(%q) = %v, %v; want %v, %v", in, dark, ok, want[0], want[1])
		}
	}
}

func TestFromEnv(t *testing.T) {
	for v, want := range map[string][2]bool{
		"15;0": {true, true}, "0;15": {false, true}, "0;default;7": {false, true}, "7;8": {true, true},
		"": {false, false}, "15": {false, false}, "15;x": {false, false}, "15;99": {false, false},
	} {
		dark, ok := FromEnv(func(k string) string {
			if k == "COLORFGBG" {
				return v
			}
			return ""
		})
		if dark != want[0] || ok != want[1] {
			t.Errorf("COLORFGBG=%q: %v, %v; want %v, %v", v, dark, ok, want[0], want[1])
		}
	}
}

// The child half of TestDarkOnARealTerminal: Dark on its controlling
// terminal, then the result, on stdout.
func TestMain(m *testing.M) {
	if os.Getenv("TERMBG_TEST_CHILD") == "1" {
		dark, asked := Dark(os.Stdin, os.Stdout, os.Getenv, Timeout)
		fmt.Printf("\r\nRESULT dark=%v asked=%v\r\n", dark, asked)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Dark on a real pseudo-terminal, as the console's process has it (its
// controlling terminal, in the foreground): the query once, the answer
// read; a terminal that never answers leaves the default, without
// waiting on (the test's context only guards against a hang); COLORFGBG
// and TERM=dumb ask nothing.
func TestDarkOnARealTerminal(t *testing.T) {
	for _, c := range []struct {
		name   string
		env    []string
		answer string // "" answers nothing
		want   string
	}{
		{"a light terminal", nil, "\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[1;1R", "dark=false asked=true"},
		{"a dark terminal", nil, "\x1b]11;rgb:1e1e/1e1e/1e1e\a\x1b[1;1R", "dark=true asked=true"},
		{"a terminal without OSC 11", nil, "\x1b[1;1R", "dark=true asked=true"},
		{"a terminal that never answers", nil, "", "dark=true asked=true"},
		{"COLORFGBG", []string{"COLORFGBG=0;15"}, "", "dark=false asked=false"},
		{"TERM=dumb", []string{"TERM=dumb"}, "", "dark=true asked=false"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append([]string{"TERMBG_TEST_CHILD=1", "TERM=xterm-256color", "PATH=" + os.Getenv("PATH")}, c.env...)
			f, err := pty.Start(cmd)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var mu sync.Mutex
			var out bytes.Buffer
			done := make(chan struct{})
			answered := false
			go func() {
				defer close(done)
				buf := make([]byte, 1024)
				for {
					n, err := f.Read(buf)
					mu.Lock()
					out.Write(buf[:n])
					if !answered && c.answer != "" && strings.Contains(out.String(), Query) {
						answered = true
						f.WriteString(c.answer) //nolint:errcheck
					}
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
			if err := cmd.Wait(); err != nil {
				t.Fatalf("child: %v", err)
			}
			<-done
			got := out.String()
			if !strings.Contains(got, "RESULT "+c.want) {
				t.Fatalf("want %q; the terminal got %q", c.want, got)
			}
			if n := strings.Count(got, Query); n != map[bool]int{true: 1, false: 0}[strings.HasSuffix(c.want, "asked=true")] {
				t.Fatalf("the query was written %d times: %q", n, got)
			}
		})
	}
}

// Not on a terminal: nothing asked.
func TestDarkWithoutATerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if dark, asked := Dark(r, w, func(string) string { return "" }, Timeout); !dark || asked {
		t.Fatalf("a pipe: dark=%v asked=%v", dark, asked)
	}
}
