package tui

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
	"github.com/lucasb-eyer/go-colorful"
	"github.com/muesli/termenv"

	"github.com/approve-tui/approve-tui/diffview"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// Styles are built once per renderer (each SSH session has its own) and
// passed down; nothing in this package styles at package level.
type Styles struct {
	r *lipgloss.Renderer

	App, Title, Subtle, Faint, Bold lipgloss.Style
	Header, Footer, Selected        lipgloss.Style
	Label, Value, Escaped           lipgloss.Style
	Banner, Warning, Error, OK      lipgloss.Style
	Suspicious, Corrupt             lipgloss.Style
	Prompt, PromptBox, Disabled     lipgloss.Style
	Button, ButtonOff               lipgloss.Style
	PaneBorder, PaneBorderFocus     lipgloss.Style
	HistoryOK, HistoryRefused       lipgloss.Style
	Help                            help.Styles
	Diff                            diffview.Styles

	// conv turns a colour into the renderer's profile once (termenv would
	// search the 256-colour palette in HSLuv on every Render); risk holds
	// the gradient's styles by level and urgency step.
	conv func(lipgloss.AdaptiveColor) lipgloss.AdaptiveColor
	risk map[riskKey]lipgloss.Style
	// markers: each marker as rendered (a list row's, every second a
	// countdown changes, would otherwise render it again).
	markers map[markerKey]string
}

type riskKey struct {
	level model.RiskLevel
	step  int
}

// profileColors converts hex colours to the renderer's colour profile, each
// once: 256- and 16-colour terminals get the palette index, which lipgloss
// then uses as it is.
func profileColors(r *lipgloss.Renderer) func(lipgloss.AdaptiveColor) lipgloss.AdaptiveColor {
	p := r.ColorProfile()
	memo := map[string]string{}
	one := func(hex string) string {
		if p == termenv.TrueColor || p == termenv.Ascii || !strings.HasPrefix(hex, "#") {
			return hex
		}
		if v, ok := memo[hex]; ok {
			return v
		}
		out := hex
		switch c := p.Color(hex).(type) {
		case termenv.ANSI256Color:
			out = strconv.Itoa(int(c))
		case termenv.ANSIColor:
			out = strconv.Itoa(int(c))
		}
		memo[hex] = out
		return out
	}
	return func(c lipgloss.AdaptiveColor) lipgloss.AdaptiveColor {
		return lipgloss.AdaptiveColor{Light: one(c.Light), Dark: one(c.Dark)}
	}
}

// risk colours: calm to alarm, each adaptive to light and dark backgrounds.
var (
	riskCalm  = lipgloss.AdaptiveColor{Light: "#2E7D32", Dark: "#81C784"}
	riskWarm  = lipgloss.AdaptiveColor{Light: "#B26A00", Dark: "#FFB74D"}
	riskAlarm = lipgloss.AdaptiveColor{Light: "#C62828", Dark: "#FF5252"}
	riskHot   = lipgloss.AdaptiveColor{Light: "#8E0000", Dark: "#FF1744"}
)

// NewStyles builds the console's styles for one renderer.
func NewStyles(r *lipgloss.Renderer) Styles {
	s := Styles{r: r, conv: profileColors(r), risk: map[riskKey]lipgloss.Style{}, markers: map[markerKey]string{}}
	subtle := s.conv(lipgloss.AdaptiveColor{Light: "#6B6B6B", Dark: "#9E9E9E"})
	faint := s.conv(lipgloss.AdaptiveColor{Light: "#9E9E9E", Dark: "#5C5C5C"})
	accent := s.conv(lipgloss.AdaptiveColor{Light: "#1565C0", Dark: "#64B5F6"})
	riskCalm, riskWarm, riskAlarm := s.conv(riskCalm), s.conv(riskWarm), s.conv(riskAlarm)
	s.App = r.NewStyle()
	s.Title = r.NewStyle().Bold(true).Foreground(accent)
	s.Subtle = r.NewStyle().Foreground(subtle)
	s.Faint = r.NewStyle().Foreground(faint)
	s.Bold = r.NewStyle().Bold(true)
	s.Header = r.NewStyle().Bold(true).Foreground(subtle)
	s.Footer = r.NewStyle().Foreground(subtle)
	s.Selected = r.NewStyle().Reverse(true)
	s.Label = r.NewStyle().Foreground(subtle)
	s.Value = r.NewStyle()
	s.Escaped = r.NewStyle().Reverse(true)
	s.Banner = r.NewStyle().Bold(true).Reverse(true).Foreground(riskAlarm)
	s.Warning = r.NewStyle().Bold(true).Foreground(riskWarm)
	s.Error = r.NewStyle().Bold(true).Foreground(riskAlarm)
	s.OK = r.NewStyle().Bold(true).Foreground(riskCalm)
	s.Suspicious = r.NewStyle().Bold(true).Foreground(riskAlarm)
	s.Corrupt = r.NewStyle().Bold(true).Reverse(true)
	s.Prompt = r.NewStyle().Bold(true)
	s.PromptBox = r.NewStyle().Border(lipgloss.NormalBorder()).BorderForeground(accent).Padding(0, 1)
	s.Disabled = r.NewStyle().Foreground(faint)
	s.Button = r.NewStyle().Bold(true).Reverse(true).Padding(0, 1)
	s.ButtonOff = r.NewStyle().Foreground(faint).Padding(0, 1)
	s.PaneBorder = r.NewStyle().Border(lipgloss.NormalBorder()).BorderForeground(faint)
	s.PaneBorderFocus = r.NewStyle().Border(lipgloss.NormalBorder()).BorderForeground(accent)
	s.HistoryOK = r.NewStyle().Foreground(riskCalm)
	s.HistoryRefused = r.NewStyle().Foreground(riskAlarm)
	s.Help = help.Styles{
		ShortKey:       r.NewStyle().Bold(true).Foreground(subtle),
		ShortDesc:      r.NewStyle().Foreground(subtle),
		ShortSeparator: r.NewStyle().Foreground(faint),
		Ellipsis:       r.NewStyle().Foreground(faint),
		FullKey:        r.NewStyle().Bold(true).Foreground(subtle),
		FullDesc:       r.NewStyle().Foreground(subtle),
		FullSeparator:  r.NewStyle().Foreground(faint),
	}
	s.Diff = diffview.NewStyles(r)
	return s
}

// RiskMarker is the fixed-width marker of a risk level, coloured along the
// gradient: calm for low, alarm for high, hotter as expiry nears (urgency
// from 0, plenty of time, to 1, about to expire). Without colour it still
// reads: HIGH, MED, LOW, UNKN.
func (s Styles) RiskMarker(r model.RiskLevel, urgency float64) string {
	return s.marker(markerKey{riskKey{r, riskStep(urgency)}, false})
}

// Marker is a proposal's marker: HARD for a command that matches a hardline
// rule (above HIGH: it can only be denied), else its effective risk.
func (s Styles) Marker(rec *storage.Record, urgency float64) string {
	if rec.Hardline {
		return s.marker(markerKey{riskKey{model.RiskHigh, riskSteps}, true})
	}
	return s.RiskMarker(rec.EffectiveRisk, urgency)
}

// markerKey is what a marker is drawn from: its risk and urgency's step,
// and whether it is HARD.
type markerKey struct {
	risk riskKey
	hard bool
}

func (s Styles) marker(k markerKey) string {
	if m, ok := s.markers[k]; ok {
		return m
	}
	m := s.riskStyle(k.risk.level, float64(k.risk.step)/riskSteps).Render(markerLabel(k.risk.level, k.hard))
	if s.markers != nil {
		s.markers[k] = m
	}
	return m
}

// riskStep is urgency (0 to 1) on riskStyle's scale.
func riskStep(urgency float64) int { return int(clamp01(urgency) * riskSteps) }

// markerText is Marker's text, four cells wide, for a line styled as a
// whole (the selected row).
func markerText(rec *storage.Record) string { return markerLabel(rec.EffectiveRisk, rec.Hardline) }

// markerLabel is a marker's four cells: HARD, or the risk's short name.
func markerLabel(r model.RiskLevel, hard bool) string {
	if hard {
		return "HARD"
	}
	return padRight(r.Short(), 4)
}

// riskSteps is how finely the gradient follows urgency.
const riskSteps = 20

func (s Styles) riskStyle(r model.RiskLevel, urgency float64) lipgloss.Style {
	k := riskKey{r, riskStep(urgency)}
	if st, ok := s.risk[k]; ok {
		return st
	}
	urgency = float64(k.step) / riskSteps
	var base, to lipgloss.AdaptiveColor
	switch r {
	case model.RiskLow:
		base, to = riskCalm, riskWarm
	case model.RiskMedium:
		base, to = riskWarm, riskAlarm
	default:
		base, to = riskAlarm, riskHot
	}
	c := blend(base, to, urgency*0.8)
	if s.conv != nil {
		c = s.conv(c)
	}
	st := s.r.NewStyle().Foreground(c)
	if r != model.RiskLow {
		st = st.Bold(true)
	}
	if r == model.RiskHigh || r == model.RiskUnknown {
		st = st.Reverse(urgency > 0.75)
	}
	if s.risk != nil {
		s.risk[k] = st
	}
	return st
}

// blend mixes two adaptive colours in Lab space.
func blend(a, b lipgloss.AdaptiveColor, t float64) lipgloss.AdaptiveColor {
	mix := func(x, y string) string {
		cx, err1 := colorful.Hex(x)
		cy, err2 := colorful.Hex(y)
		if err1 != nil || err2 != nil {
			return x
		}
		return cx.BlendLab(cy, clamp01(t)).Clamped().Hex()
	}
	return lipgloss.AdaptiveColor{Light: mix(a.Light, b.Light), Dark: mix(a.Dark, b.Dark)}
}

func clamp01(t float64) float64 {
	switch {
	case t < 0:
		return 0
	case t > 1:
		return 1
	}
	return t
}
