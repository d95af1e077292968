package grounding

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"testing"
)

// The scanners scanItemOptions and scanLastFour read tool results without
// decoding them; whatever they accept must give what decoding with
// encoding/json and walking the value gives (findOptions, findLastFour),
// and they must accept only valid JSON. These tests hold them to that on
// hand-written edge cases, on every message of the real τ-bench logs when
// ../shared is present, and under the fuzzer.

// decodedItems is itemsOf's answer by decoding: nil when s is no JSON.
func decodedItems(s string, r *ItemOptionsRule) map[string]map[string]string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return nil
	}
	items := map[string]map[string]string{}
	findOptions(v, r, items)
	return items
}

// decodedLastFour is lastFourOf's answer for one message by decoding.
func decodedLastFour(s, id string) (string, bool) {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return "", false
	}
	return findLastFour(v, id)
}

var itemRule = &ItemOptionsRule{ID: "item_id", Options: "options"}

func checkItemScan(t *testing.T, s string) bool {
	t.Helper()
	got, ok := scanItemOptions(s, itemRule)
	if !ok {
		return false
	}
	if !json.Valid([]byte(s)) {
		t.Errorf("scanItemOptions accepted invalid JSON %.200q", s)
	}
	if want := decodedItems(s, itemRule); !reflect.DeepEqual(got, want) {
		t.Errorf("scanItemOptions(%.200q) = %v, decoding gives %v", s, got, want)
	}
	return true
}

var idField = regexp.MustCompile(`"id": ?"([^"\\]*)"`)

func checkFourScan(t *testing.T, s string) {
	t.Helper()
	ids := []string{"a", "zzz"}
	for _, m := range idField.FindAllStringSubmatch(s, -1) {
		ids = append(ids, m[1])
	}
	for _, id := range ids {
		four, seen, ok := scanLastFour(s, id)
		if !ok {
			continue
		}
		if wf, ws := decodedLastFour(s, id); four != wf || seen != ws {
			t.Errorf("scanLastFour(%.200q, %q) = %q %v, decoding gives %q %v", s, id, four, seen, wf, ws)
		}
	}
}

var scanCases = []string{
	`{"item_id":"1","options":{"a":"b","c":1,"d":{"item_id":"2","options":{}}}}`,
	`{"item_id":"1","options":{"a":"b"},"item_id":"3"}`,
	`[{"item_id":"1","options":{"a":"b"}},{"item_id":"1","options":{"a":"c"}}]`,
	`{"item_id":1,"options":{"a":"b"}}`,
	`{"item_id":"1","options":[1]}`,
	`{"x":1e400,"item_id":"1","options":{"a":"b"}}`,
	`{"x":true,"y":false,"z":null,"w":-0.5,"item_id":"1","options":{"a":"b","e":"é"}}`,
	`{"item_id":"1","options":{"a":"b\u0041"}}`,
	`{"item_id":"1","options":{"a":"b"}} x`,
	`{"":"x","item_id":"1","options":{"":"q","k":{"":"z"}}}`,
	` [ ] `, `[1,]`, `{"a":1,}`, `{"a" 1}`, `01`, `-`, `1.`, `.5`, `-0.0`, `tru`, `truex`, `nul`, `[1 2]`, `{"a":"b"`, `"abc`, "\"a\x01\"",
	`[`, `{,}`, `{"a":1}}`, `[-01]`, `1e5`, `[true,false,null]`, `{"item_id":"1","options":{"a":"b"},}`, `"s"`, `12`, ``, `{}`,
	`{"item_id" : "7" , "options" : { "k" : "v" , "n" : [ 1 , {"item_id":"8","options":{"z":"y"}} ] } }`,
	`{"id":"a","last_four":"1234"}`, `{"id":"a","last_four":1234}`, `{"id":"a"}`,
	`[{"id":"a","last_four":"1"},{"id":"a","last_four":"1"}]`, `{"id":1,"x":{"id":"a","last_four":"9"}}`,
	`{"id":"a","last_four":"1","id":"b"}`, `{"x":{"id":"a","last_four":"\u0031"}}`,
	"{\"item_id\":\"1\",\"options\":{\"a\":\"\xff\"}}",
}

func TestScannersMatchDecoding(t *testing.T) {
	for _, s := range scanCases {
		checkItemScan(t, s)
		checkFourScan(t, s)
	}
}

// TestScannersMatchDecodingOnRealLogs: every message of both τ-bench logs.
func TestScannersMatchDecodingOnRealLogs(t *testing.T) {
	for _, path := range []string{tauAirline, tauRetail} {
		f, err := os.Open(path)
		if err != nil {
			t.Skipf("real logs not present (%v): they live in ../shared/realdata", err)
		}
		scanned, all := 0, 0
		for tr, err := range Read(f, path, FormatAuto) {
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range tr.Messages {
				all++
				if checkItemScan(t, m.Content) {
					scanned++
				}
				checkFourScan(t, m.Content)
			}
		}
		f.Close()
		t.Logf("%s: %d of %d messages scanned without decoding", path, scanned, all)
	}
}

// FuzzScanners: on any input, what the scanners accept is valid JSON and
// reads as decoding does.
func FuzzScanners(f *testing.F) {
	for _, s := range scanCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkItemScan(t, s)
		checkFourScan(t, s)
	})
}
