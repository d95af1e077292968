package web

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"
)

func TestSessionCodec(t *testing.T) {
	deadline := time.Date(2026, 12, 8, 9, 30, 0, 123456789, time.UTC)
	for _, tt := range []struct {
		name   string
		values map[string]any
		json   bool
	}{
		{"signed in", map[string]any{"user_id": int64(42)}, true},
		{"ids and strings", map[string]any{"user_id": int64(-1 << 62), "flash": "saved <b>", "empty": ""}, true},
		{"nothing", map[string]any{}, true},
		{"another kind of value stays gob", map[string]any{"user_id": int64(7), "remember": true}, false},
	} {
		b, err := sessionCodec{}.Encode(deadline, tt.values)
		if err != nil {
			t.Fatalf("%s: Encode: %v", tt.name, err)
		}
		if got := bytes.HasPrefix(b, sessionPrefix); got != tt.json {
			t.Errorf("%s: encoded as JSON = %v, want %v: %q", tt.name, got, tt.json, b)
		}
		d, values, err := sessionCodec{}.Decode(b)
		if err != nil || !d.Equal(deadline) || !reflect.DeepEqual(values, tt.values) {
			t.Errorf("%s: Decode = %v, %#v, %v; want %v, %#v", tt.name, d, values, err, deadline, tt.values)
		}
	}

	// Sessions written by scs's gob codec (before this one) still sign in.
	old, err := scs.GobCodec{}.Encode(deadline, map[string]any{"user_id": int64(42)})
	if err != nil {
		t.Fatal(err)
	}
	d, values, err := sessionCodec{}.Decode(old)
	if err != nil || !d.Equal(deadline) || values["user_id"] != int64(42) {
		t.Errorf("Decode(gob session) = %v, %#v, %v", d, values, err)
	}
	if _, _, err := (sessionCodec{}).Decode([]byte(`{"d":"not a time"}`)); err == nil {
		t.Error("a corrupt session decoded")
	}
}
