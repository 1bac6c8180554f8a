package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

const cursorStatic = cursor.CursorStatic

type promptKind int

const (
	promptApprove promptKind = iota
	promptDeny
)

// maxTypedChunk is the most runes one key message may carry in the approve
// prompt. A terminal without bracketed paste delivers a paste as one long
// chunk; a person typing, even over a slow link that batches keystrokes,
// delivers one to three.
const maxTypedChunk = 3

// prompt is the approve or deny dialog for one proposal.
type prompt struct {
	kind    promptKind
	id      string
	phrase  string // a tier-2 proposal's VERB TARGET NONCE: typed instead of the id
	rec     *storage.Record
	st      Styles
	input   textinput.Model
	message string
	// pasted: the last text offered to the approve prompt was pasted (and
	// refused); typing clears it.
	pasted bool
	keys   promptKeys
	// votes: what the approve prompt says of the policy (which vote this
	// approval is, or why the store will refuse it), from the last load.
	votes []promptLine
	// signing: the decision is being signed (the store requires it); typed
	// is the text entered, as it was at enter; info says what the signing
	// waits for ("touch your security key").
	signing bool
	typed   string
	info    string
	// width is the screen's (setSize): the dialog is laid out within it.
	width int
}

// setVotes takes where the proposal stands against the policy.
func (p *prompt) setVotes(v votesView) {
	if p.kind != promptApprove {
		p.votes = v.denyLines(p.st)
		return
	}
	p.votes = v.promptLines(p.st)
}

func newPrompt(kind promptKind, rec *storage.Record, st Styles, width int) *prompt {
	in := textinput.New()
	in.Cursor.SetMode(cursorStatic)
	in.Prompt = "› "
	in.Width = max(min(width-12, 60), 10)
	p := &prompt{kind: kind, id: rec.ApprovalID, rec: rec, st: st, input: in, width: width}
	if kind == promptApprove && rec.RequiresTextConfirm {
		p.phrase = rec.Phrase()
		p.input.CharLimit = len(p.phrase) + 16
		p.input.Placeholder = "type the phrase shown above"
		p.keys = promptKeys{
			submit: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "approve (a wrong phrase counts, as in Hermes)")),
			cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		}
	} else if kind == promptApprove {
		p.input.CharLimit = len(rec.ApprovalID) + 16
		p.input.Placeholder = "type the id shown above"
		p.keys = promptKeys{
			submit: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "approve (once the id matches)")),
			cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		}
	} else {
		p.input.CharLimit = 500
		p.input.Placeholder = "reason (optional)"
		p.keys = promptKeys{
			submit: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "deny")),
			cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		}
	}
	return p
}

// matches reports whether approve is enabled: the typed text is the id,
// exactly. The store checks it again; this only drives the display.
func (p *prompt) matches() bool {
	if p.phrase != "" {
		return model.NormalizePhrase(p.input.Value()) == p.phrase
	}
	return p.input.Value() == p.id
}

// pasteRefused is what the approve prompt says to pasted text.
const pasteRefused = "pasted text refused: type the id yourself, character by character"

// refuses reports whether the prompt refuses k as pasted text.
func (p *prompt) refuses(k tea.KeyMsg) bool {
	return p.kind == promptApprove && (k.Paste || (k.Type == tea.KeyRunes && len(k.Runes) > maxTypedChunk))
}

// setSize takes the screen's size: the dialog is laid out within its
// width (its input keeps the width it opened with).
func (p *prompt) setSize(w, _ int) { p.width = w }

// update edits the input with a key. In the approve prompt pasted text is
// refused: the id must be typed, which is what makes the operator read it.
// Enter, esc and signing are the console's (Model.promptKey): they decide.
func (p *prompt) update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil
	}
	if p.refuses(k) {
		p.message, p.pasted = pasteRefused, true
		return nil
	}
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(k)
	p.message, p.pasted = "", false
	return cmd
}

// voteLines appends what the prompt says of the votes to b, wrapped to
// inner, never cut: it says what the decision will do.
func (p *prompt) voteLines(b []string, inner int) []string {
	for _, l := range p.votes {
		for _, w := range strings.Split(ansi.Wrap(l.text, inner, ""), "\n") {
			b = append(b, l.style(w))
		}
	}
	return b
}

// view renders the dialog within the screen's width.
func (p *prompt) view() string {
	st, width := p.st, p.width
	inner := max(min(width-4, 76), 20)
	var b []string
	cmdLine := fitWidth(model.Sanitize(p.rec.Command, model.Line), inner-5)
	if p.kind == promptApprove {
		b = append(b,
			st.Prompt.Render("Approve this command, once"),
			st.Marker(p.rec, 0)+" "+cmdLine,
		)
		b = append(p.voteLines(b, inner), "")
		// The whole id (or phrase), wrapped if it must be: never cut.
		label, id := "Type the approval id to enable approve:", model.Sanitize(p.id, model.Line)
		if p.phrase != "" {
			label, id = "Tier-2: type the phrase to approve:", model.Sanitize(p.phrase, model.Line)
		}
		if lipgloss.Width(label)+2+lipgloss.Width(id) <= inner {
			b = append(b, label+"  "+st.Bold.Render(id))
		} else {
			b = append(b, label)
			for _, l := range strings.Split(ansi.Hardwrap(id, inner, false), "\n") {
				b = append(b, st.Bold.Render(l))
			}
		}
		b = append(b, p.input.View(), "")
		btn := st.ButtonOff.Render("approve (disabled)")
		if p.matches() {
			btn = st.Button.Render("approve: press enter")
		}
		b = append(b, btn+"  "+st.Subtle.Render("esc cancel"))
	} else {
		b = append(b,
			st.Prompt.Render("Deny "+model.Sanitize(p.id, model.Line)+"?"),
			st.Marker(p.rec, 0)+" "+cmdLine,
		)
		b = p.voteLines(b, inner)
		b = append(b,
			"",
			"Reason (optional), then enter to deny:",
			p.input.View(),
			"",
			st.Button.Render("deny: press enter")+"  "+st.Subtle.Render("esc cancel"),
		)
	}
	if p.info != "" {
		b = append(b, st.Warning.Render(fitWidth(p.info, inner)))
	}
	if p.message != "" {
		// Wrapped, never cut: it says why nothing was decided.
		for _, w := range strings.Split(ansi.Wrap(p.message, inner, ""), "\n") {
			b = append(b, st.Error.Render(w))
		}
	}
	for i := range b {
		b[i] = fitWidth(b[i], inner)
	}
	return st.PromptBox.Render(lipgloss.JoinVertical(lipgloss.Left, strings.Join(b, "\n")))
}
