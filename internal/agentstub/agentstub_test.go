package agentstub

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Each stand-in asks for the command when the shell tool is offered and no
// result is in, gives its final answer once the tool's result came back
// (keeping it), and answers side requests with a short text.
func TestTurns(t *testing.T) {
	cases := []struct {
		api          API
		path         string
		first, reply string // request bodies: the first turn, after the tool ran
		wantCall     string // in the first answer
		result       string
	}{
		{Anthropic, "/v1/messages",
			`{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`,
			`{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"denied: no"}]}]}]}`,
			`"name":"Bash"`, "denied: no"},
		{Responses, "/v1/responses",
			`{"model":"m","tools":[{"type":"function","name":"exec_command"}],"input":[{"type":"message","role":"user","content":[]}]}`,
			`{"model":"m","tools":[{"type":"function","name":"exec_command"}],"input":[{"type":"message","role":"user","content":[]},{"type":"function_call","call_id":"c"},{"type":"function_call_output","call_id":"c","output":"blocked: no"}]}`,
			`"name":"exec_command"`, "blocked: no"},
		{Gemini, "/v1beta/models/m:streamGenerateContent",
			`{"contents":[{"role":"user","parts":[{"text":"go"}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]}`,
			`{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[]},{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"error":"no"}}}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]}`,
			`"name":"run_shell_command"`, `{"error":"no"}`},
	}
	for _, c := range cases {
		t.Run(string(c.api), func(t *testing.T) {
			s := Start(t, c.api, "sh -c 'touch m'", "make m")
			post := func(body string) string {
				resp, err := http.Post(s.URL+c.path, "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var b strings.Builder
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					b.WriteString(sc.Text() + "\n")
				}
				return b.String()
			}
			first := post(c.first)
			if !strings.Contains(first, c.wantCall) || !strings.Contains(first, "touch m") || s.ToolCalls() != 1 {
				t.Fatalf("first answer: %s", first)
			}
			if final := post(c.reply); !strings.Contains(final, FinalText) || s.Finished() != 1 {
				t.Fatalf("final answer: %s", final)
			}
			if got := s.ToolResults(); len(got) != 1 || got[0] != c.result {
				t.Fatalf("results %q", got)
			}
			if side := post(`{"model":"m","messages":[],"contents":[],"input":[]}`); !strings.Contains(side, "ok") {
				t.Fatalf("side answer: %s", side)
			}
		})
	}
}

// The tool call's input is the command's exact bytes, escapes included.
func TestCommandBytesKept(t *testing.T) {
	cmd := "sh -c 'touch m' # \x1b]0;x\x07"
	s := &Server{command: cmd}
	rec := &recorder{h: http.Header{}}
	s.anthropic(rec, map[string]any{"model": "m"}, turnTool, false)
	var msg struct {
		Content []struct {
			Input struct{ Command string } `json:"input"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(rec.b.String()), &msg); err != nil || msg.Content[0].Input.Command != cmd {
		t.Fatalf("%v %q", err, rec.b.String())
	}
}

type recorder struct {
	h http.Header
	b strings.Builder
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) Write(p []byte) (int, error) { return r.b.Write(p) }
func (r *recorder) WriteHeader(int)             {}
