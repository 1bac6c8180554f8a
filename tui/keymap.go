package tui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every binding of the console; the help line and the full help
// are built from it, so what works is what is shown.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Open, Back, Focus                       key.Binding
	Approve, Deny, Filter, History, Follow  key.Binding
	Help, Quit, Submit, Cancel              key.Binding
	Redraw                                  key.Binding
}

// DefaultKeyMap is the console's keymap.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f", " "), key.WithHelp("pgdn/space", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "top")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "end")),
		Open:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details")),
		Back:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Focus:    key.NewBinding(key.WithKeys("right", "l", "left", "h"), key.WithHelp("←/→", "list/details")),
		Approve:  key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "approve")),
		Deny:     key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "deny")),
		Filter:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		History:  key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "pending/history")),
		Follow:   key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "follow another operator")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Submit:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "confirm")),
		Cancel:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		Redraw:   key.NewBinding(key.WithKeys("ctrl+l"), key.WithHelp("ctrl+l", "redraw the screen")),
	}
}

// helpItem is a binding of a help line. When the line is too narrow for
// all of its items, those of the highest drop give way first, equal ones
// together; drop 0 never does (shortHelp).
type helpItem struct {
	key.Binding
	drop int
}

// ShortHelp is the help line of the pending list and its detail.
func (k KeyMap) ShortHelp() []helpItem {
	return []helpItem{{k.Up, 6}, {k.Down, 6}, {k.Open, 1}, {k.Approve, 2}, {k.Deny, 3}, {k.Filter, 5}, {k.History, 4},
		{k.Help, 0}, {k.Quit, 7}}
}

// FullHelp is the help page of the pending list, in columns.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Open, k.Focus, k.Back, k.History, k.Filter},
		{k.Approve, k.Deny, k.Follow, k.Redraw, k.Help, k.Quit},
	}
}

// HistoryShortHelp is the help line of the history: no decision is made
// from it.
func (k KeyMap) HistoryShortHelp() []helpItem {
	return []helpItem{{k.Up, 6}, {k.Down, 6}, {k.Open, 1}, {k.Filter, 5}, {k.History, 4}, {k.Help, 0}, {k.Quit, 7}}
}

// EventShortHelp is the help line of one audit event shown whole.
func (k KeyMap) EventShortHelp() []helpItem {
	return []helpItem{{k.Up, 5}, {k.Down, 5}, {k.PageDown, 6}, {k.Back, 1}, {k.History, 4}, {k.Help, 0}, {k.Quit, 7}}
}

// HistoryFullHelp is the help page of the history, in columns.
func (k KeyMap) HistoryFullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Open, k.Back, k.History, k.Filter},
		{k.Redraw, k.Help, k.Quit},
	}
}

// HelpPageShortHelp is the help line of the help page itself.
func (k KeyMap) HelpPageShortHelp() []helpItem {
	closeHelp := k.Help
	closeHelp.SetHelp("?/esc", "close this page")
	return []helpItem{{closeHelp, 0}}
}

// promptKeys is the help shown while a prompt is open.
type promptKeys struct{ submit, cancel key.Binding }

func (p promptKeys) ShortHelp() []key.Binding  { return []key.Binding{p.submit, p.cancel} }
func (p promptKeys) FullHelp() [][]key.Binding { return [][]key.Binding{p.ShortHelp()} }
