package cli

import (
	"context"
	"io"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/spf13/cobra"
)

func (a *app) hermesHookCmd() *cobra.Command {
	var margin, lock time.Duration
	hm := &cobra.Command{
		Use:   "hermes [--margin D]",
		Short: "Hermes approval transport: Hermes' approval prompts wait in approve-tui",
		Long: `The adapter of Hermes' approval transport. Hermes' plugin approve-tui
(integrations/hermes/approve-tui/, installed by "approve-tui hermes install")
runs it for each approval prompt Hermes hands the transport, with one JSON
object on stdin: the request's fields (schema_version, request_id, digest,
command, description, pattern_key, pattern_keys, surface, timeout_seconds,
allowed_choices), the session_key Hermes' pre_approval_request hook gave for
the same request_id, and presented_at (epoch seconds). It answers one line:

  {"choice":"once","approval_id":"hm-...","reason":"..."}
  {"choice":"deny","approval_id":"hm-...","reason":"..."}

which the plugin hands back as request.respond(choice). Never "session" or
"always": an approval is this command, once.

  - The proposal: id "hm-" and 12 characters derived from request_id (a
    repeated request joins its one row); session Hermes' session key
    (hermes:SURFACE without one); requester hermes; Hermes' description
    as its words; pinned risk the higher of approve-tui's classifier and
    the patterns Hermes flagged (a command no rule matches still waits:
    Hermes asked). The command is Hermes' redacted display: Hermes runs
    its original.
  - A hardline command: deny at once, audited, never submitted.
  - The wait ends --margin before Hermes' deadline (presented_at plus
    timeout_seconds), and the proposal expires right after: nobody can
    approve what Hermes has already refused, and an approval made in time
    reaches Hermes in time. Then the answer is deny and the proposal is
    withdrawn (denied by actor "requester").
  - One approval answers one request_id once, across processes: the store
    records the answer (request_id, approval id, decision, time) in the
    transaction that decides to give it, before it is given. The same
    request_id again, while waiting or replayed later (before or after
    Hermes' report), is answered deny, and the refusal audited ("answer").
  - A request without presented_at is stale: deny (how long Hermes has
    waited cannot be known).
  - Denied, expired, withdrawn, a request that does not validate, a missing
    or locked store, an internal error: deny, with the reason.

With {"event":"post_approval_response","request_id":...,"choice":...} (the
plugin's post_approval_response hook) it records what Hermes did with the
answer on the proposal, an audit event "report", and answers
{"recorded":true|false,...}: "once" marks an approved proposal handed_off
(Hermes runs it and reports no end); a transport failure such as
transport_timeout marks it blocked_after_consume (nothing ran).

It exits 0 with a JSON answer for everything it can see; bad flags exit 2
(the plugin denies on any other exit, no output, or output it cannot read).
` + exitCodes(ExitOK, ExitUsage),
		Args:        cobra.NoArgs,
		Annotations: map[string]string{failClosedHook: string(agent.AgentHermes)},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if margin < 0 {
				return usageErrorf("--margin must not be negative")
			}
			run := func(ctx context.Context, in io.Reader, o agent.HookOptions) agent.HookAnswer {
				return agent.HermesHook(ctx, in, o, margin)
			}
			a.writeHookAnswer(a.agentHook(cmd, agent.AgentHermes, run, hermesHookCap, lock, agent.LowPass))
			return nil
		},
	}
	hm.Flags().DurationVar(&margin, "margin", agent.HermesMargin, "answer this long before Hermes' deadline")
	parkWindowFlag(hm)
	hookLockFlag(hm, &lock)
	return hm
}

// hermesHookCap is the longest `hook hermes` waits, whatever the request
// says.
const hermesHookCap = 7 * 24 * time.Hour
