package metrics

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/internal/docstest"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// The docs' list of metrics (the **Metrics.** paragraph of
// docs/paging.md) names every approve_tui_ family the registry exports,
// with its labels, and nothing else: a metric added, renamed or relabelled
// without the docs fails here.
func TestREADMEListsEveryMetric(t *testing.T) {
	text, err := docstest.Text("..")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(text, "**Metrics.**")
	if start < 0 {
		t.Fatal("neither README.md nor docs/ has a **Metrics.** paragraph")
	}
	end := strings.Index(text[start:], "\n## ")
	if end < 0 {
		end = len(text) - start
	}
	listed := map[string]string{}
	for _, m := range regexp.MustCompile("`(approve_tui_[a-z_]+)(\\{[a-z_,]*\\})?`").FindAllStringSubmatch(text[start:start+end], -1) {
		listed[m[1]] = strings.Trim(m[2], "{}")
	}

	exported := map[string]string{}
	s, c := testStore(t)
	submit(t, s, "readme-metrics-1", "echo hi", model.RiskLow, c.Now())
	for _, o := range []Options{
		{Store: s, Version: "test", Channels: []string{"hook"}, SSH: true},
		{Store: s, Version: "test", Channels: []string{"hook"}, DecisionsFromStore: true},
	} {
		m := New(o)
		m.Delivery("hook", "page", "retry")
		m.ObserveDecision(storage.Decision{Event: storage.EventDeny, ID: "readme-metrics-1", Outcome: storage.OutcomeOK})
		fams, err := m.Registry().Gather()
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if !strings.HasPrefix(f.GetName(), "approve_tui_") {
				continue
			}
			labels := map[string]bool{}
			for _, mt := range f.GetMetric() {
				for _, l := range mt.GetLabel() {
					labels[l.GetName()] = true
				}
			}
			var names []string
			for l := range labels {
				names = append(names, l)
			}
			sort.Strings(names)
			exported[f.GetName()] = strings.Join(names, ",")
		}
	}
	for _, name := range []string{OpenProposals, OldestOpenSeconds, Decisions, DecisionSeconds, Deliveries, DeliveryFailures, SSHSessions, BuildInfo, RanWithoutApproval} {
		if _, ok := exported[name]; !ok {
			t.Errorf("%s was not exported by the registry in this test", name)
		}
	}
	for name, labels := range exported {
		got, ok := listed[name]
		if !ok {
			t.Errorf("docs/paging.md does not list %s", name)
			continue
		}
		want := strings.Split(labels, ",")
		have := strings.Split(got, ",")
		sort.Strings(have)
		if strings.Join(have, ",") != strings.Join(want, ",") {
			t.Errorf("docs/paging.md lists %s{%s}; it is exported with {%s}", name, got, labels)
		}
	}
	for name := range listed {
		if _, ok := exported[name]; !ok {
			t.Errorf("docs/paging.md lists %s, which is not exported", name)
		}
	}
}
