package grounding

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadProfileShipped(t *testing.T) {
	for _, name := range EmbeddedProfiles() {
		t.Run(name, func(t *testing.T) {
			p, err := LoadProfile(name)
			if err != nil {
				t.Fatalf("LoadProfile(%q) = %v", name, err)
			}
			if p.Name != name || p.Version == "" {
				t.Errorf("LoadProfile(%q) = name %q version %q", name, p.Name, p.Version)
			}
		})
	}
}

func TestProfileFor(t *testing.T) {
	tests := []struct{ domain, want string }{
		{"airline", "airline"},
		{"tau-airline", "airline"},
		{"Retail", "retail"},
		{"swe-bench", "swe"},
		{"openhands", "swe"},
		{"my-airline-v2", "airline"},
		{"", "generic"},
		{"banking", "generic"},
	}
	for _, tt := range tests {
		if got := ProfileFor(tt.domain).Name; got != tt.want {
			t.Errorf("ProfileFor(%q) = %s, want %s", tt.domain, got, tt.want)
		}
	}
}

func TestLoadProfileFromFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bank.json")
	body := `{"name": "bank", "version": "3", "tools_given": false,
		"tools": {"transfer_money": {"action": "irreversible_write", "args": {"to_account": {"role": "identifier", "kind": "account"}, "amount": "amount"}}},
		"kinds": {"account": {"paths": ["accounts[*]"], "choice": true}},
		"workflow": {"confirm": {"actions": ["irreversible_write"]}}}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadProfile(path)
	if err != nil {
		t.Fatalf("LoadProfile(%s) = %v", path, err)
	}
	if p.Name != "bank" || p.Tools["transfer_money"].Args["amount"].Role != RoleAmount {
		t.Errorf("LoadProfile(%s) = %+v", path, p)
	}
	if _, err := LoadProfile("no-such-profile"); err == nil || !strings.Contains(err.Error(), "airline") {
		t.Errorf("LoadProfile(unknown name) = %v, want an error listing the shipped profiles", err)
	}
}

// TestParseProfileErrors: a refused profile names the file, the key and the
// problem.
func TestParseProfileErrors(t *testing.T) {
	tests := []struct {
		name, in, key, problem string
	}{
		{"syntax", `{"name": "x", "version": "1",}`, "", "line 1"},
		{"missing name", `{"version": "1"}`, "name", "required"},
		{"unknown top key", `{"name": "x", "version": "1", "tool": {}}`, "tool", "unknown key"},
		{"bad action", `{"name": "x", "version": "1", "tools": {"t": {"action": "delete"}}}`, "tools.t.action", `unknown value "delete"`},
		{"bad role", `{"name": "x", "version": "1", "tools": {"t": {"action": "read", "args": {"flights[*].date": "dattime"}}}}`,
			`tools.t.args["flights[*].date"]`, `unknown value "dattime"`},
		{"unknown kind", `{"name": "x", "version": "1", "tools": {"t": {"action": "read", "args": {"id": {"role": "identifier", "kind": "order"}}}}}`,
			"tools.t.args.id.kind", `"order"`},
		{"bad path", `{"name": "x", "version": "1", "tools": {"t": {"action": "read", "args": {"a[x]": "identifier"}}}}`, `tools.t.args["a[x]"]`, "index"},
		{"bad regexp", `{"name": "x", "version": "1", "errors": {"patterns": ["(unclosed"]}}`, "errors.patterns[0]", "regular expression"},
		{"bad level", `{"name": "x", "version": "1", "workflow": {"order": [{"tools": ["a"], "arg": "id", "after": ["b"], "level": "global"}]}}`,
			"workflow.order[0].level", `unknown value "global"`},
		{"condition without hours", `{"name": "x", "version": "1", "workflow": {"conditions": [{"tools": ["cancel"], "arg": "id", "within": {"field": "created_at", "hours": 0}}]}}`,
			"workflow.conditions[0].within.hours", "positive"},
		{"allow field without values", `{"name": "x", "version": "1", "workflow": {"conditions": [{"tools": ["cancel"], "arg": "id", "allow": [{"field": "cabin"}]}]}}`,
			"workflow.conditions[0].allow[0].values", "required"},
		{"policy claim without groups", `{"name": "x", "version": "1", "policy_claims": [{"all": [], "note": "n"}]}`, "policy_claims[0].all", "non-empty"},
		{"policy claim counting neither statements nor questions", `{"name": "x", "version": "1", "policy_claims": [{"all": [["a"]], "statements": true, "questions": true, "note": "n"}]}`, "policy_claims[0].questions", "cannot be true with statements"},
		{"same day closed without status", `{"name": "x", "version": "1", "same_day": [{"field": "reservation_id", "dates": "flights[*].date", "closed": ["cancelled"], "claims": ["same day"]}]}`, "same_day[0].closed", "needs status"},
		{"same day without claims", `{"name": "x", "version": "1", "same_day": [{"field": "reservation_id", "dates": "flights[*].date"}]}`, "same_day[0].claims", "is required"},
		{"condition without arg", `{"name": "x", "version": "1", "workflow": {"conditions": [{"tools": ["t"], "rule": "r", "route": {"flights": "flights[*].flight_number"}}]}}`, "workflow.conditions[0].arg", "is required"},
		{"route of_call not a boolean", `{"name": "x", "version": "1", "workflow": {"conditions": [{"tools": ["t"], "route": {"flights": "f", "of_call": "yes"}}]}}`, "workflow.conditions[0].route.of_call", "true or false"},
		{"policy claim statements not a boolean", `{"name": "x", "version": "1", "policy_claims": [{"all": [["a"]], "statements": "yes", "note": "n"}]}`, "policy_claims[0].statements", "true or false"},
		{"route without flights", `{"name": "x", "version": "1", "workflow": {"conditions": [{"tools": ["change"], "arg": "id", "route": {"origin": "from"}}]}}`, "workflow.conditions[0].route.flights", "required"},
		{"policy claim with_user not phrases", `{"name": "x", "version": "1", "policy_claims": [{"all": [["a"]], "with_user": 3, "note": "n"}]}`, "policy_claims[0].with_user", "array"},
		{"policy claim with_user_any without with_user", `{"name": "x", "version": "1", "policy_claims": [{"all": [["a"]], "with_user_any": true, "note": "n"}]}`, "policy_claims[0].with_user_any", "needs with_user"},
		{"original payment without phrases", `{"name": "x", "version": "1", "original_payment": [{"field": "order_id", "history": "payment_history", "method": "payment_method_id"}]}`, "original_payment[0].phrases", "is required"},
		{"original payment without method", `{"name": "x", "version": "1", "original_payment": [{"field": "order_id", "history": "payment_history", "phrases": ["original payment method"]}]}`, "original_payment[0].method", "required"},
		{"record fact without key", `{"name": "x", "version": "1", "record_facts": [{"field": "reservation_id", "value": "basic_economy", "phrases": ["basic economy"]}]}`, "record_facts[0].key", "required"},
		{"record fact without phrases", `{"name": "x", "version": "1", "record_facts": [{"field": "reservation_id", "key": "cabin", "value": "basic_economy"}]}`, "record_facts[0].phrases", "is required"},
		{"quoted phrases not a boolean", `{"name": "x", "version": "1", "quoted_phrases": "yes"}`, "quoted_phrases", "true or false"},
		{"original payment with an unknown key", `{"name": "x", "version": "1", "original_payment": [{"field": "order_id", "history": "h", "method": "m", "phrases": ["p"], "card": "c"}]}`, "original_payment[0].card", "unknown key"},
		{"policy claim replies_only not a boolean", `{"name": "x", "version": "1", "policy_claims": [{"all": [["a"]], "replies_only": "yes", "note": "n"}]}`, "policy_claims[0].replies_only", "true or false"},
		{"policy claim with not phrases", `{"name": "x", "version": "1", "policy_claims": [{"all": [["a"]], "with": "cannot", "note": "n"}]}`, "policy_claims[0].with", "array"},
		{"policy claim unless_reply not phrases", `{"name": "x", "version": "1", "policy_claims": [{"all": [["a"]], "unless_reply": [3], "note": "n"}]}`, "policy_claims[0].unless_reply[0]", "string"},
		{"charges without history", `{"name": "x", "version": "1", "charges": [{"tools": ["pay"], "amount": "amount"}]}`, "charges[0].history", "required"},
		{"charges with no tools", `{"name": "x", "version": "1", "charges": [{"tools": [], "history": "h", "amount": "a"}]}`, "charges[0].tools", "empty"},
		{"confirm priced not phrases", `{"name": "x", "version": "1", "workflow": {"confirm": {"actions": ["write"], "priced": "book"}}}`, "workflow.confirm.priced", "array"},
		{"allowance without tier", `{"name": "x", "version": "1", "allowances": [{"tools": ["book"], "total": "bags", "charged": "paid", "per": "passengers", "class": "cabin", "tier_of": "user_id", "free": {"gold": {"economy": 3}}}]}`,
			"allowances[0].tier", "required"},
		{"allowance free count not whole", `{"name": "x", "version": "1", "allowances": [{"tools": ["book"], "total": "bags", "charged": "paid", "per": "passengers", "class": "cabin", "tier_of": "user_id", "tier": "membership", "free": {"gold": {"economy": 1.5}}}]}`,
			"allowances[0].free.gold.economy", "whole number"},
		{"allowance free not by class", `{"name": "x", "version": "1", "allowances": [{"tools": ["book"], "total": "bags", "charged": "paid", "per": "passengers", "class": "cabin", "tier_of": "user_id", "tier": "membership", "free": {"gold": 3}}]}`,
			"allowances[0].free.gold", "must be an object"},
		{"compensation without cases", `{"name": "x", "version": "1", "compensations": [{"tools": ["send"], "amount": "amount", "owner": "user_id", "record": "reservation_id", "per": "passengers"}]}`,
			"compensations[0].cases", "non-empty array"},
		{"compensation unit not positive", `{"name": "x", "version": "1", "compensations": [{"tools": ["send"], "amount": "amount", "owner": "user_id", "record": "reservation_id", "per": "passengers", "cases": [{"name": "a delay", "unit": 0}]}]}`,
			"compensations[0].cases[0].unit", "positive amount"},
		{"compensation eligible of unknown", `{"name": "x", "version": "1", "compensations": [{"tools": ["send"], "amount": "amount", "owner": "user_id", "record": "reservation_id", "per": "passengers", "cases": [{"name": "a delay", "unit": 50}], "eligible": [{"field": "membership", "of": "user", "values": ["gold"]}]}]}`,
			"compensations[0].eligible[0].of", `must be "record" or "owner"`},
		{"compensation without owner", `{"name": "x", "version": "1", "compensations": [{"tools": ["send"], "amount": "amount", "record": "reservation_id", "per": "passengers", "cases": [{"name": "a delay", "unit": 50}]}]}`,
			"compensations[0].owner", "required"},
		{"bad threshold", `{"name": "x", "version": "1", "success": {"reward_threshold": "high"}}`, "success.reward_threshold", "must be a number"},
		{"bad schema", `{"name": "x", "version": "1", "schemas": [{"name": "t", "parameters": {"type": "objekt"}}]}`, "schemas[0].parameters", "JSON Schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseProfile("profiles/x.json", []byte(tt.in))
			var pe *ProfileError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseProfile(%s) = %v, want a *ProfileError", tt.name, err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("ParseProfile(%s) error does not wrap ErrInvalid", tt.name)
			}
			msg := err.Error()
			if pe.File != "profiles/x.json" || !strings.Contains(msg, "profiles/x.json") {
				t.Errorf("ParseProfile(%s) = %q, want the file named", tt.name, msg)
			}
			if pe.Key != tt.key {
				t.Errorf("ParseProfile(%s) key = %q, want %q (%s)", tt.name, pe.Key, tt.key, msg)
			}
			if !strings.Contains(msg, tt.problem) {
				t.Errorf("ParseProfile(%s) = %q, want it to say %q", tt.name, msg, tt.problem)
			}
		})
	}
}

// TestGenericRoles: without a profile entry the role comes from the schema,
// then the name, then the value's shape.
func TestGenericRoles(t *testing.T) {
	c := newChecker()
	c.reset(&Trajectory{}, ProfileFor(""))
	schema := compileToolSchema([]byte(`{"type":"object","properties":{"mode":{"enum":["a","b"]},"n":{"type":"integer"},"on":{"type":"boolean"},"when":{"type":"string","format":"date"}}}`))
	tests := []struct {
		key  string
		kind byte
		s    string
		want string
	}{
		{"mode", 's', "a", RoleEnum},
		{"n", 'n', "", RoleAmount},
		{"on", 'b', "true", RoleBoolean},
		{"when", 's', "2024-05-01", RoleDatetime},
		{"order_id", 's', "#W123", RoleIdentifier},
		{"summary", 's', "help", RoleFreeText},
		{"departure_date", 's', "tomorrow", RoleDatetime},
		{"total_price", 'n', "", RoleAmount},
		{"x", 's', "2024-05-01", RoleDatetime},
		{"x", 's', "a long sentence with many words in it", RoleFreeText},
		{"x", 's', "ABC123", RoleIdentifier},
		{"x", 'n', "", RoleAmount},
	}
	for _, tt := range tests {
		l := argLeaf{path: tt.key, npath: tt.key, segs: []jsonSeg{{key: tt.key, index: -1}}, kind: tt.kind, s: tt.s}
		if got := c.roleOf(nil, schema, l).Role; got != tt.want {
			t.Errorf("roleOf(%s=%q) = %s, want %s", tt.key, tt.s, got, tt.want)
		}
	}
}
