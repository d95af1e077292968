package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/alexedwards/scs/v2"
)

// sessionCodec encodes groundwork's sessions (the signed-in user's id, and
// any other int64 or string values) as a few bytes of JSON. scs's default
// GobCodec builds a gob decoder, and compiles its type information, on
// every request that carries a session cookie: 6% of a page's server CPU
// on the queue and review screens, for one number. Sessions with other
// kinds of values, and every session written before this codec, stay gob:
// Decode recognises JSON by its prefix and hands anything else to gob.
type sessionCodec struct{}

type sessionData struct {
	Deadline time.Time         `json:"d"`
	Ints     map[string]int64  `json:"i,omitempty"`
	Strings  map[string]string `json:"s,omitempty"`
}

// sessionPrefix starts every JSON session; a gob stream cannot start with
// it (its first byte is a message length, its second a negative type id).
var sessionPrefix = []byte(`{"d":`)

func (sessionCodec) Encode(deadline time.Time, values map[string]any) ([]byte, error) {
	d := sessionData{Deadline: deadline}
	for k, v := range values {
		switch v := v.(type) {
		case int64:
			if d.Ints == nil {
				d.Ints = map[string]int64{}
			}
			d.Ints[k] = v
		case string:
			if d.Strings == nil {
				d.Strings = map[string]string{}
			}
			d.Strings[k] = v
		default:
			return scs.GobCodec{}.Encode(deadline, values)
		}
	}
	return json.Marshal(d)
}

func (sessionCodec) Decode(b []byte) (time.Time, map[string]any, error) {
	if !bytes.HasPrefix(b, sessionPrefix) {
		return scs.GobCodec{}.Decode(b)
	}
	var d sessionData
	if err := json.Unmarshal(b, &d); err != nil {
		return time.Time{}, nil, fmt.Errorf("session: %w", err)
	}
	values := make(map[string]any, len(d.Ints)+len(d.Strings))
	for k, v := range d.Ints {
		values[k] = v
	}
	for k, v := range d.Strings {
		values[k] = v
	}
	return d.Deadline, values, nil
}
