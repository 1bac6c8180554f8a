// Package agentstub is a loopback stand-in for the model APIs of the real
// coding agents (Claude Code's Anthropic Messages API, Codex's OpenAI
// Responses API, Gemini CLI's generateContent API), for end-to-end tests
// of approve-tui's hooks with the agents' own programs.
//
// A Server plays a model that asks for one shell command (the test's) and,
// once the agent sends the tool's result back, answers with a final text.
// Each tool call has an id of its own (a model's calls do), so that a
// resumed session that asks again makes another call.
// It keeps every tool result it received, so a test can check what the
// model was told (a deny's reason), and a log of every request for
// failure messages. It speaks only what the agents were seen to need.
package agentstub

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// API is the model API a Server speaks.
type API string

// The APIs.
const (
	Anthropic API = "anthropic" // POST /v1/messages, streaming (SSE) or not
	Responses API = "responses" // POST /v1/responses, streaming (SSE)
	Gemini    API = "gemini"    // POST /v1beta/models/M:generateContent or :streamGenerateContent
)

// FinalText is the model's last answer, after the tool's result.
const FinalText = "All done."

// Server is one stand-in model on 127.0.0.1.
type Server struct {
	// URL is the server's base URL (http://127.0.0.1:PORT).
	URL string
	api API
	// command and description are the tool call's.
	command, description string

	mu sync.Mutex
	// also is a second tool call asked in the same reply (AlsoAsk).
	also     *[2]string
	log      []string
	results  []string
	calls    int
	finished int
}

// Start starts a stand-in of api whose model asks to run command (with
// description, the agent's words about it); it stops with the test.
func Start(t testing.TB, api API, command, description string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), api: api, command: command, description: description}
	srv := &http.Server{Handler: http.HandlerFunc(s.serve)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// AlsoAsk makes the model ask, in the same reply as the command, for a
// second shell call running command (with description): a turn of two
// tool calls. Anthropic only.
func (s *Server) AlsoAsk(command, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.also = &[2]string{command, description}
}

// second is the second tool call of the reply (nil: none).
func (s *Server) second() *[2]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.also
}

// ToolResults is every tool result the agent sent back, in order.
func (s *Server) ToolResults() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.results...)
}

// ToolCalls is how many times the model asked for the command.
func (s *Server) ToolCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Finished is how many times the model gave its final answer.
func (s *Server) Finished() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finished
}

// Log is one line per request received (method, path, what was answered).
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.log, "\n")
}

func (s *Server) logf(format string, args ...any) {
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

// turn is what the model does for one request.
type turn int

const (
	turnText  turn = iota // a side request (a title, a summary): a short text
	turnTool              // the conversation offers the shell tool: ask for the command
	turnFinal             // the tool's result is in: the final answer
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if r.Method != http.MethodPost {
		s.logf("%s %s: 404", r.Method, r.URL.Path)
		// Agents probe for models and updates; none is needed.
		http.NotFound(w, r)
		return
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		s.logf("%s %s: not JSON (%v)", r.Method, r.URL.Path, err)
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	var (
		results []string
		tool    bool
		stream  bool
	)
	switch s.api {
	case Anthropic:
		if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
			s.logf("POST %s: 404", r.URL.Path)
			http.NotFound(w, r)
			return
		}
		results, tool = anthropicState(req)
		stream, _ = req["stream"].(bool)
	case Responses:
		if !strings.HasSuffix(r.URL.Path, "/responses") {
			s.logf("POST %s: 404", r.URL.Path)
			http.NotFound(w, r)
			return
		}
		results, tool = responsesState(req)
		stream = true
	case Gemini:
		if !strings.Contains(r.URL.Path, ":generateContent") && !strings.Contains(r.URL.Path, ":streamGenerateContent") {
			s.logf("POST %s: 404", r.URL.Path)
			http.NotFound(w, r)
			return
		}
		results, tool = geminiState(req)
		stream = strings.Contains(r.URL.Path, ":streamGenerateContent")
	}
	t := turnText
	switch {
	case len(results) > 0:
		t = turnFinal
	case tool:
		t = turnTool
	}
	s.mu.Lock()
	switch t {
	case turnFinal:
		s.results = append(s.results, results...)
		s.finished++
	case turnTool:
		s.calls++
	}
	s.mu.Unlock()
	s.logf("POST %s stream=%v: turn %d (%d tool results)", r.URL.Path, stream, t, len(results))
	switch s.api {
	case Anthropic:
		s.anthropic(w, req, t, stream)
	case Responses:
		s.responses(w, t)
	case Gemini:
		s.gemini(w, t, stream)
	}
}

// text is the text of a tool result's content: a string, a list of text
// parts, or any other JSON as it is.
func text(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if m, ok := p.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					b.WriteString(s)
					continue
				}
			}
			b.WriteString(text(p))
		}
		return b.String()
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// sse writes one server-sent event (event may be "").
func sse(w io.Writer, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
