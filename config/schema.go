package config

import "reflect"

// Section is one part of the configuration file (or of the policy file)
// and the keys it takes, in the order messages list them: the same
// tables the loader checks a file against, for the generated reference.
type Section struct {
	// Path names the part as a reader finds it: "(top level)", "routes[]",
	// "channels.NAME (type: ntfy)"...
	Path string
	Keys []Key
}

// Key is one key of a section.
type Key struct {
	Name string
	// Flag is the command-line flag the key stands for ("" when none).
	Flag string
	// Kind is what its value must be, from the field's config tag: "path",
	// "url", "argv", "zero" (a duration that may be zero), "secret"
	// ("" for the others).
	Kind string
}

// Schema is every section of the configuration file and of the policy
// file, with their keys.
func Schema() (configFile, policyFile []Section) {
	plain := func(path string, keys []string) Section {
		s := Section{Path: path}
		for _, k := range keys {
			s.Keys = append(s.Keys, Key{Name: k})
		}
		return s
	}
	tagged := func(path string, t reflect.Type) Section {
		s := Section{Path: path}
		for _, f := range sectionFields(t) {
			s.Keys = append(s.Keys, Key{Name: f.key, Flag: f.flag, Kind: f.kind})
		}
		return s
	}
	configFile = []Section{
		plain("(top level)", topKeys),
	}
	for _, typ := range channelTypes {
		s := Section{Path: "channels.NAME (type: " + typ + ")"}
		for _, name := range channelKeysFor(typ) {
			k := channelKeyNamed(name)
			s.Keys = append(s.Keys, Key{Name: name, Kind: k.kind})
		}
		configFile = append(configFile, s)
	}
	configFile = append(configFile,
		plain("routes[]", routeKeys),
		plain("routes[].match", matchKeys),
		plain("routes[].steps[]", stepKeys),
		tagged("serve", reflect.TypeFor[ServeSettings]()),
		tagged("tier2", reflect.TypeFor[Tier2Settings]()),
		plain("risk", riskKeys),
		tagged("park", reflect.TypeFor[ParkSettings]()),
		plain("trust", trustKeys),
		plain("the system file's top level", systemKeys),
	)
	policyFile = []Section{
		plain("(top level)", policyTopKeys),
		plain("policy[]", policyRuleKeys),
		plain("policy[].match", policyMatchKeys),
	}
	return configFile, policyFile
}
