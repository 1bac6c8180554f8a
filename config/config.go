// Package config is approve-tui's configuration file: one YAML file (at
// $XDG_CONFIG_HOME/approve-tui/config.yaml unless --config or
// APPROVE_TUI_CONFIG says otherwise) for what belongs to an installation:
// paging channels and routes, the open hint, and settings that are flags
// too (flags win). Secrets are never in the file: each is named by an
// environment variable or a file, resolved when used, and never printed.
package config

import (
	"github.com/approve-tui/approve-tui/policy"
	"slices"
	"sort"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/trust"
)

// File is a loaded, validated configuration file. The yaml tags of its
// fields (and of the sections' structs) are the file's keys, in the
// order messages list them.
type File struct {
	// Path is where it was read from ("" when no file: the defaults).
	Path string
	// Channels by name, as the file names them.
	Channels map[string]*Channel `yaml:"channels"`
	// Routes in the file's order: a proposal follows the first that
	// matches.
	Routes []*Route `yaml:"routes"`
	// OpenHint is how a page says to open a proposal, {id} standing for
	// its id (e.g. "ssh -t -p 2222 approvals.example open {id}").
	OpenHint string `yaml:"open_hint" config:"hint"`
	// IncludeCommand is the default of every channel's include_command
	// (true when not set).
	IncludeCommand bool `yaml:"include_command"`
	// Serve and Tier2 are the settings that are flags too (serve's, and
	// approve's --phrase-limit and --lockout); zero where the file gives
	// none. A flag given on the command line wins: see Settings.
	Serve ServeSettings `yaml:"serve"`
	Tier2 Tier2Settings `yaml:"tier2"`
	// Risk is the file's risk: section: what the judgement of a command
	// adds to its built-in sensitive paths and programs, and what run and
	// the hooks let through without asking (see RiskContext).
	Risk RiskSettings `yaml:"risk"`
	// Trust is the file's trust: section (signed approvals); mode off when
	// there is none. See TrustSettings.
	Trust TrustConfig `yaml:"trust"`

	// settings: what the file gave of Serve and Tier2, as flag values.
	settings []Setting
	// system: the system configuration file (nil: none); see Anchor.
	system *System
}

// ServeSettings is the file's serve: section, named after serve's flags
// (host_key for --host-key): each field's yaml tag is its key, its flag
// tag the flag. Paths (config:"path") are made absolute against the
// file's directory.
type ServeSettings struct {
	Listen            string        `yaml:"listen" flag:"listen"`
	HostKey           string        `yaml:"host_key" flag:"host-key" config:"path"`
	Approvers         string        `yaml:"approvers" flag:"approvers" config:"path"`
	Watchers          string        `yaml:"watchers" flag:"watchers" config:"path"`
	MaxSessions       int           `yaml:"max_sessions" flag:"max-sessions"`
	MaxSessionsPerKey int           `yaml:"max_sessions_per_key" flag:"max-sessions-per-key"`
	IdleTimeout       time.Duration `yaml:"idle_timeout" flag:"idle-timeout"`
	LoginGrace        time.Duration `yaml:"login_grace" flag:"login-grace"`
	AuthFailures      int           `yaml:"auth_failures" flag:"auth-failures"`
	AuthBackoff       time.Duration `yaml:"auth_backoff" flag:"auth-backoff"`
	ShutdownGrace     time.Duration `yaml:"shutdown_grace" flag:"shutdown-grace"`
}

// Tier2Settings is the file's tier2: section (approve's --phrase-limit
// and --lockout).
type Tier2Settings struct {
	PhraseLimit int           `yaml:"phrase_limit" flag:"phrase-limit"`
	Lockout     time.Duration `yaml:"lockout" flag:"lockout"`
}

// Setting is one value of the serve: or tier2: section as the flag it
// stands for would take it.
type Setting struct {
	Section string // "serve" or "tier2"
	Key     string // as in the file: "host_key"
	Flag    string // the flag: "host-key"
	Value   string // the flag's text: "/etc/approve-tui/host_key", "5m0s", "8"
	Line    int
	Column  int
}

// Settings are the file's values of section ("serve" or "tier2"), in the
// file's order, for the flags not given on the command line.
func (f *File) Settings(section string) []Setting {
	var out []Setting
	for _, s := range f.settings {
		if s.Section == section {
			out = append(out, s)
		}
	}
	return out
}

// Defaults is the configuration when there is no file: no channels, no
// routes, commands included.
func Defaults() *File {
	return &File{Channels: map[string]*Channel{}, IncludeCommand: true, Trust: TrustConfig{Mode: trust.ModeOff}}
}

// ChannelNames are the channels' names, sorted.
func (f *File) ChannelNames() []string {
	names := make([]string, 0, len(f.Channels))
	for n := range f.Channels {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Route is the first route that matches a proposal of effective risk
// risk, session key session and requester requester (nil: none).
func (f *File) Route(risk model.RiskLevel, session, requester string) *Route {
	for _, r := range f.Routes {
		if ok, _ := r.Match.Check(policy.Subject{Risk: risk, Session: session, Requester: requester}); ok {
			return r
		}
	}
	return nil
}

// DefaultTimeout bounds one delivery when a channel sets no timeout.
const DefaultTimeout = 10 * time.Second

// DefaultPagerDutyEventsURL is PagerDuty's Events API v2 endpoint.
const DefaultPagerDutyEventsURL = "https://events.pagerduty.com/v2/enqueue"

// The channel types.
const (
	TypeNtfy      = "ntfy"
	TypeSlack     = "slack"
	TypePagerDuty = "pagerduty"
	TypeWebhook   = "webhook"
	TypeExec      = "exec"
)

// Channel is one place pages go. It is written once, here: each
// field's yaml tag is its key (secret:"NAME" a secret named by NAME_env
// or NAME_file), types the channel types that take it (none: every
// type), and the keys a channel allows, in the order messages list them,
// come from the fields' order.
type Channel struct {
	Name string
	Type string `yaml:"type"`
	// IncludeCommand: whether pages on this channel carry the command
	// (include_command; the file's default when not set).
	IncludeCommand bool `yaml:"include_command"`
	// Timeout bounds one delivery (timeout; default 10s).
	Timeout time.Duration `yaml:"timeout"`
	// Parallel bounds the deliveries the channel sends at once
	// (parallel; 0: the notifier's default). Each channel has its own:
	// a receiver that hangs delays only its own channel.
	Parallel int `yaml:"parallel"`
	// URL is the service's URL when it is not a secret (ntfy's topic URL,
	// a webhook's); URLSecret names it when it is one (Slack's incoming
	// webhook URL: url_env / url_file). One of the two, for the types that
	// take a URL.
	URL       string `yaml:"url" types:"ntfy,webhook" config:"url"`
	URLSecret Secret `secret:"url" types:"ntfy,slack,webhook"`
	// Token: ntfy's access token (token_env / token_file), sent as a
	// bearer token.
	Token Secret `secret:"token" types:"ntfy"`
	// RoutingKey: PagerDuty's integration key (routing_key_env /
	// routing_key_file).
	RoutingKey Secret `secret:"routing_key" types:"pagerduty"`
	// EventsURL: PagerDuty's Events API v2 endpoint (events_url; default
	// https://events.pagerduty.com/v2/enqueue).
	EventsURL string `yaml:"events_url" types:"pagerduty" config:"url"`
	// SigningSecret: the webhook's HMAC-SHA256 key (secret_env /
	// secret_file).
	SigningSecret Secret `secret:"secret" types:"webhook"`
	// Command: exec's argv (command), run with the event as JSON on
	// stdin, no shell.
	Command []string `yaml:"command" types:"exec" config:"argv"`
	// Line is where the channel is defined in the file, for messages.
	Line int
}

// NamedSecret is one of a channel's secrets with what it is for.
type NamedSecret struct {
	// Role says what it is: "token", "url", "routing key", "signing secret".
	Role   string
	Secret Secret
}

// Secrets are the channel's secrets that are named, in a fixed order.
func (c *Channel) Secrets() []NamedSecret {
	var out []NamedSecret
	for _, s := range []NamedSecret{{"url", c.URLSecret}, {"token", c.Token}, {"routing key", c.RoutingKey}, {"signing secret", c.SigningSecret}} {
		if s.Secret.Set() {
			out = append(out, s)
		}
	}
	return out
}

// Secret names a secret by environment variable or file; the value is
// read when needed (Resolve) and never kept in the File.
type Secret struct {
	Env string
	// File is absolute (a relative path in the file is taken from the
	// configuration file's directory).
	File string
	// Key, Line and Column: the key that names it (token_env) and where.
	Key          string
	Line, Column int
}

// Set reports whether the secret is named at all.
func (s Secret) Set() bool { return s.Env != "" || s.File != "" }

// Route sends the proposals it matches through its steps.
type Route struct {
	Match Match  `yaml:"match"`
	Steps []Step `yaml:"steps"`
	// RemindBeforeExpiry: a reminder this long before expiry to every
	// channel paged so far (remind_before_expiry; 0: none).
	RemindBeforeExpiry time.Duration `yaml:"remind_before_expiry" config:"zero"`
	// Events are the kinds of page the route sends (events; empty: every
	// kind), from EventKinds: a route with [ran_without_approval] pages
	// only the calls run without approval. A proposal's pages of a kind
	// follow the first route that matches it and sends that kind.
	Events []string `yaml:"events" config:"kinds"`
	// Line is where the route is defined in the file.
	Line int
}

// EventKinds are the kinds of page a route may select (Route.Events): the
// first page and its escalations, the reminder before expiry, the
// resolution, a vote that leaves a proposal short, an approval refused at
// execution (refused), and a call its agent ran without approval
// (ran_without_approval).
var EventKinds = []string{"page", "escalation", "reminder", "resolved", "vote", "refused", "ran_without_approval"}

// Sends reports whether r sends pages of kind (every kind when its events
// are not given).
func (r *Route) Sends(kind string) bool {
	return r != nil && (len(r.Events) == 0 || slices.Contains(r.Events, kind))
}

// Match says which proposals a route takes: risk at or above Risk ("":
// any), session and requester matching their globs ("": any). It is the
// policy's match; a route takes risk, session and requester only.
type Match = policy.Match

// Step is one paging step: After this long since the proposal opened,
// notify these channels (by name).
type Step struct {
	After  time.Duration `yaml:"after" config:"zero"`
	Notify []string      `yaml:"notify" config:"names"`
	// Line is where the step is in the file.
	Line int
}
