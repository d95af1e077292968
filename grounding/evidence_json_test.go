package grounding

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// marshalStd is encoding/json's rendering with HTML escaping off, as the
// store wrote evidence before AppendEvidenceJSON.
func marshalStd(t testing.TB, v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TestAppendEvidenceJSON: the evidence of every decision of a generated
// pool and of the real τ-bench log renders byte for byte as encoding/json
// renders it, and so do hand-made values with every escape.
func TestAppendEvidenceJSON(t *testing.T) {
	var all [][]ArgEvidence
	for tr := range Generate(GenOptions{Trajectories: 600, Seed: 5, Kind: "mixed"}) {
		for _, d := range Check(tr, nil).Decisions {
			all = append(all, d.Args)
		}
	}
	if f, err := os.Open(tauAirline); err == nil {
		for tr, err := range Read(f, tauAirline, FormatAuto) {
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range Check(tr, nil).Decisions {
				all = append(all, d.Args)
			}
		}
		f.Close()
	} else {
		t.Logf("real τ-bench log not available (%v): generated pool and hand-made values only", err)
	}
	tricky := "quote \" backslash \\ \b\f\n\r\t \x01\x1f <html>&amp; \u2028\u2029 é 日本 \xff\xfe bad utf-8"
	all = append(all, nil, []ArgEvidence{}, []ArgEvidence{{
		Path: tricky, Value: json.RawMessage(" { \"a\" : [ 1 , \"x y\" , null ] ,\n\"b\":\"\\u00e9\\n\" } "), Role: tricky, Status: tricky, Reason: tricky,
		Where: Evidence{Found: tricky, Message: -1, Start: 1 << 40, End: -7, JSONPath: tricky, Normalization: tricky,
			Derivation: tricky, Hidden: tricky, HiddenEntry: -1, HiddenMessage: 3, Note: tricky,
			Record: &RecordRef{Message: 7, ID: tricky, Start: -1, End: 1 << 40}},
	}, {Path: "p", Value: nil}, {Path: "q", Value: json.RawMessage(`"<&>"`)}})
	n := 0
	for _, args := range all {
		got, err := AppendEvidenceJSON(nil, args)
		if err != nil {
			t.Fatalf("AppendEvidenceJSON(%+v): %v", args, err)
		}
		if want := marshalStd(t, args); !bytes.Equal(got, want) {
			t.Fatalf("evidence renders\n got %s\nwant %s", got, want)
		}
		n += len(args)
	}
	if n < 1000 {
		t.Errorf("only %d argument evidences compared", n)
	}
	if _, err := AppendEvidenceJSON(nil, []ArgEvidence{{Value: json.RawMessage(`{"a":`)}}); err == nil {
		t.Error("an invalid raw value rendered without error")
	}
}

func BenchmarkEvidenceJSON(b *testing.B) {
	var all [][]ArgEvidence
	for tr := range Generate(GenOptions{Trajectories: 300, Seed: 1, Kind: "tau"}) {
		for _, d := range Check(tr, nil).Decisions {
			all = append(all, d.Args)
		}
	}
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			for _, a := range all {
				marshalStd(b, a)
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			for _, a := range all {
				buf, _ = AppendEvidenceJSON(buf[:0], a)
			}
		}
	})
}
