package cli

// config check's trust report: which trust mode is in force and why, the
// trust file as the operators' commands and as run and the hooks would
// load it, the ssh-agent this shell reaches and whether the trust file
// knows its keys, and the policy signers the trust file names.

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
	sshagent "golang.org/x/crypto/ssh/agent"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// trustReport is what config check says of the trust: section.
type trustReport struct {
	mode, why string
	file      string
	// lines: what was found, in words (sanitised).
	lines []string
	// problems stop signing (the operators' side cannot load the trust
	// file); warnings are worth knowing. systemProblems are the system
	// configuration's, each naming its file: nothing is let through
	// until they are fixed.
	problems, systemProblems, warnings []string
	agentKeys                          []*model.JSONObject
	// sources: where each side's trust settings come from.
	sources *model.JSONObject
	system  string
}

// The commands of each side, as config check names them.
const (
	agentSideWords    = "agent side (run, the hooks, submit, wait)"
	operatorSideWords = "operator side (approve, deny, policy set, the console, serve, show, audit)"
)

// checkTrust reports on the trust settings f gives each side: f's trust:
// section, or the system configuration's where f is anchored to one
// (sysErr: the system file could not be relied on).
func (a *app) checkTrust(f *config.File, sysErr error) *trustReport {
	op, opFrom := f.TrustFor(config.OperatorSide)
	ag, agFrom := f.TrustFor(config.AgentSide)
	r := &trustReport{mode: string(op.Mode), file: op.AllowedSigners, system: a.systemPath}
	where := fmt.Sprintf("line %d", op.Line)
	if opFrom.System {
		where = "system configuration " + opFrom.String()
	}
	switch {
	case op.Line == 0 && opFrom.System:
		r.why = "the system configuration " + opFrom.Path + " has no trust: section: nothing is signed or checked"
	case op.Line == 0:
		r.why = "no trust: section: nothing is signed or checked (one person on a laptop)"
	case op.Mode == trust.ModeOff && op.AllowedSigners != "":
		r.why = "trust: mode: off (" + where + "): the trust file is not used; nothing is signed or checked"
	case op.Mode == trust.ModeOff:
		r.why = "trust: has no allowed_signers (" + where + "): nothing is signed or checked"
	default:
		r.why = "trust: allowed_signers is set (" + where + "): every approve, vote and policy set is signed, and run and the hooks let nothing through without enough valid signatures"
	}
	source := func(side string, tc config.TrustConfig, from config.TrustOrigin) *model.JSONObject {
		o := model.NewJSONObject().Str("mode", string(tc.Mode)).OptStr("file", line(from.Path)).Int("line", int64(from.Line)).Bool("system", from.System)
		what := "the user configuration " + line(from.String())
		switch {
		case from.System:
			what = "the system configuration " + line(from.String())
		case from.Path == "":
			what = "the defaults (no configuration file)"
		}
		r.lines = append(r.lines, fmt.Sprintf("%s: trust %s, from %s", side, tc.Mode, what))
		return o
	}
	r.sources = model.NewJSONObject().Obj("agent", source(agentSideWords, ag, agFrom)).Obj("operator", source(operatorSideWords, op, opFrom))
	switch {
	case sysErr != nil:
		r.systemProblems = append(r.systemProblems, line(sysErr.Error()))
		return r
	case agFrom.System:
		if _, err := config.LoadSystemAt(agFrom.Path, config.AgentSide); err != nil {
			r.warnings = append(r.warnings, fmt.Sprintf("run and the hooks, if run as this user (uid %d), refuse the system configuration: %s", os.Geteuid(), line(err.Error())))
		}
	default:
		msg := fmt.Sprintf("no system configuration at %s: the agent side takes its trust settings from the user configuration, which whoever writes it (the agent's user too, or APPROVE_TUI_CONFIG and --config, which the agent sets) can turn off; anchor them: put the trust: section in %s, owned by root and writable by root only, and the user configuration can no longer weaken it",
			line(a.systemPath), line(a.systemPath))
		if ag.Mode == trust.ModeRequired {
			r.warnings = append(r.warnings, msg)
		} else {
			r.lines = append(r.lines, msg)
		}
	}
	if w := f.TrustWarning(config.OperatorSide); w != "" {
		r.warnings = append(r.warnings, line(w))
	}
	if ag.Mode == trust.ModeRequired {
		if _, err := f.TrustSettings(storage.DefaultIdentity(a.db), config.AgentSide); err != nil {
			msg := fmt.Sprintf("run and the hooks, if run as this user (uid %d), refuse the trust file: %s; give it to root (or the operators' user) so the agent's user cannot change it", os.Geteuid(), line(err.Error()))
			if agFrom.System {
				// Nothing runs on this host as this user until it is fixed.
				r.systemProblems = append(r.systemProblems, msg)
			} else {
				r.warnings = append(r.warnings, msg)
			}
		} else {
			r.lines = append(r.lines, fmt.Sprintf("run and the hooks, run as this user (uid %d), take the trust file %s", os.Geteuid(), line(ag.AllowedSigners)))
		}
	}
	if op.Mode != trust.ModeRequired {
		return r
	}
	ts, err := f.TrustSettings(storage.DefaultIdentity(a.db), config.OperatorSide)
	if err != nil {
		if opFrom.System {
			r.systemProblems = append(r.systemProblems, line(err.Error()))
		} else {
			r.problems = append(r.problems, line(err.Error()))
		}
		return r
	}
	var principals []string
	seen := map[string]bool{}
	for _, sg := range ts.Signers.Signers {
		if !seen[sg.Principals] {
			seen[sg.Principals] = true
			principals = append(principals, sg.Principals)
		}
	}
	r.lines = append(r.lines, fmt.Sprintf("trust file %s: %d keys, principals %s (owner and mode fit approve, deny and policy set run as this user)",
		line(ts.Path), len(ts.Signers.Signers), line(strings.Join(principals, ", "))))
	r.lines = append(r.lines, "store identity in statements: "+line(ts.Store))
	if tc, _ := f.TrustFor(config.AgentSide); tc.Store == "" {
		r.warnings = append(r.warnings, "trust: store is not set: statements name the store by its path or address ("+line(ts.Store)+
			"), which a store at the same path on another host, or in another PostgreSQL schema the URL does not name, shares: "+
			"a signature made for one would hold in the other; name it (trust: store: NAME, in the system configuration)")
	}
	switch {
	case len(ts.PolicySigners) == 0:
		r.warnings = append(r.warnings, "trust: policy_signers is not set: nobody may set a policy (one approver stays the rule)")
	default:
		var missing []string
		for _, p := range ts.PolicySigners {
			if !seen[p] {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			r.warnings = append(r.warnings, fmt.Sprintf("trust: policy_signers names %s, whom the trust file does not: they cannot sign a policy", line(strings.Join(missing, ", "))))
		}
		r.lines = append(r.lines, "policy signers: "+line(strings.Join(ts.PolicySigners, ", ")))
	}
	a.checkAgent(ts, r)
	return r
}

// checkAgent says whether the ssh-agent at $SSH_AUTH_SOCK holds a key the
// trust file knows (what approve, deny and policy set sign with).
func (a *app) checkAgent(ts *trust.Settings, r *trustReport) {
	sock := a.getenv("SSH_AUTH_SOCK")
	if sock == "" {
		r.warnings = append(r.warnings, "no ssh-agent (SSH_AUTH_SOCK is not set): approve, deny and policy set need one holding your key (ssh-add KEY), or --key KEY")
		return
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		r.warnings = append(r.warnings, "the ssh-agent at SSH_AUTH_SOCK cannot be reached: "+line(err.Error()))
		return
	}
	defer conn.Close()
	keys, err := sshagent.NewClient(conn).List()
	if err != nil {
		r.warnings = append(r.warnings, "the ssh-agent does not list its keys: "+line(err.Error()))
		return
	}
	known := 0
	for _, k := range keys {
		pk, err := ssh.ParsePublicKey(k.Blob)
		if err != nil {
			continue
		}
		fp := ssh.FingerprintSHA256(pk)
		o := model.NewJSONObject().Str("key", fp).Str("type", pk.Type())
		if p, err := ts.PrincipalOf(pk); err == nil {
			known++
			r.lines = append(r.lines, fmt.Sprintf("ssh-agent key %s %s: %s in the trust file", pk.Type(), fp, line(p)))
			o.Str("principal", p).Raw("problem", "null")
			if me := agent.RequesterNames(); len(me) > 0 && !slices.Contains(ts.PrincipalsOfUsers(me), p) {
				// An agent running as this user reaches this ssh-agent
				// too, and could sign as p for its own proposals.
				r.warnings = append(r.warnings, fmt.Sprintf("this user (%s) holds %s's key in its ssh-agent, but the trust configuration does not say %s signs as %s: "+
					"an agent running as %s could approve its own proposals with it; add trust: users: {%s: %s} (in the system configuration)",
					line(me[0]), line(p), line(me[0]), line(p), line(me[0]), line(me[0]), line(p)))
			}
		} else {
			r.lines = append(r.lines, fmt.Sprintf("ssh-agent key %s %s: not usable: %s", pk.Type(), fp, line(err.Error())))
			o.Raw("principal", "null").Str("problem", line(err.Error()))
		}
		r.agentKeys = append(r.agentKeys, o)
	}
	switch {
	case len(keys) == 0:
		r.warnings = append(r.warnings, "the ssh-agent holds no keys: ssh-add yours, or pass --key KEY")
	case known == 0:
		r.warnings = append(r.warnings, "none of the ssh-agent's keys is in the trust file: nothing you decide can be signed with them")
	case known > 1:
		r.warnings = append(r.warnings, fmt.Sprintf("the ssh-agent holds %d keys the trust file knows: signing needs one (keep one in this agent, or pass --key KEY)", known))
	}
}

// json is the report as config check --json gives it.
func (r *trustReport) json() *model.JSONObject {
	o := model.NewJSONObject().Str("mode", r.mode).Str("why", line(r.why)).OptStr("allowed_signers", line(r.file)).
		Strs("checks", r.lines).Strs("problems", append(append([]string(nil), r.problems...), r.systemProblems...)).Strs("warnings", r.warnings)
	o.OptStr("system_config", line(r.system))
	if r.sources != nil {
		o.Obj("sources", r.sources)
	}
	return o.Raw("agent_keys", model.JSONObjects(r.agentKeys))
}
