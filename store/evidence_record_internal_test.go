package store

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"groundwork/grounding"
)

// TestStoredEvidenceRecord: the record a policy finding cites survives the
// evidence columns, evidence stored before it existed reads back without
// one, and a reader that predates it (an Evidence without the field, an
// older binary on the same database) still decodes the new columns.
func TestStoredEvidenceRecord(t *testing.T) {
	policy := grounding.ArgEvidence{Path: "policy", Value: json.RawMessage(`"NO6JO3"`), Role: grounding.RoleFreeText,
		Status: grounding.StatusUnsupported, Reason: grounding.ReasonUnsupported,
		Where: grounding.Evidence{Found: "policy", Message: -1, HiddenEntry: -1, HiddenMessage: -1,
			Note:   "the record of NO6JO3 (message 3) shows cabin economy",
			Record: &grounding.RecordRef{Message: 3, ID: "NO6JO3", Start: 19, End: 25}}}
	all, question, err := evidenceJSON([]grounding.ArgEvidence{policy})
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{all, question} {
		if !strings.Contains(col, `"record":{"message":3,"id":"NO6JO3","start":19,"end":25}`) {
			t.Errorf("stored evidence %s lacks the record", col)
		}
		var got []grounding.ArgEvidence
		if err := decodeJSON([]byte(col), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || !reflect.DeepEqual(got[0].Where, policy.Where) {
			t.Errorf("read back %+v, want %+v", got, policy)
		}
		// An older reader: the same fields without Record.
		var old []struct {
			Where struct {
				Found   string `json:"found"`
				Message int    `json:"message"`
				Note    string `json:"note,omitempty"`
			} `json:"where"`
		}
		if err := decodeJSON([]byte(col), &old); err != nil || len(old) != 1 || old[0].Where.Message != -1 || old[0].Where.Note != policy.Where.Note {
			t.Errorf("an older reader decodes %s as %+v, %v", col, old, err)
		}
	}
	// Stored before the field: no record, and nothing else changes.
	before := `[{"path":"policy","value":"NO6JO3","role":"free_text","status":"unsupported","reason":"vis.unsupported","where":{"found":"policy","message":-1,"start":0,"end":0,"hidden_entry":-1,"hidden_message":-1,"note":"the record of NO6JO3 (message 3) shows cabin economy"}}]`
	var got []grounding.ArgEvidence
	if err := decodeJSON([]byte(before), &got); err != nil {
		t.Fatal(err)
	}
	want := policy.Where
	want.Record = nil
	if len(got) != 1 || !reflect.DeepEqual(got[0].Where, want) {
		t.Errorf("evidence stored before the record field reads back as %+v, want %+v", got, want)
	}
}
