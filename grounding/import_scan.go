package grounding

import (
	"bytes"
	"encoding/json"
)

// The importers validate each record once (json.Valid, or json.Decoder for
// τ-bench elements) and then split it level by level with the functions
// below. They assume valid JSON, so they only track strings and nesting; on
// anything else they stop early rather than fail. The values they return
// share memory with the record.

// members calls set for each member of the JSON object raw, in order, with
// the member's unquoted key and its raw value.
func jsonMembers(raw []byte, set func(key []byte, val json.RawMessage)) {
	i := jsonSkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return
	}
	i++
	for {
		i = jsonSkipSpace(raw, i)
		if i >= len(raw) || raw[i] == '}' {
			return
		}
		if raw[i] == ',' {
			i++
			continue
		}
		if raw[i] != '"' {
			return
		}
		end := jsonSkipString(raw, i)
		if end-1 <= i {
			return
		}
		key := raw[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var s string
			if json.Unmarshal(raw[i:end], &s) != nil {
				return
			}
			key = []byte(s)
		}
		i = jsonSkipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return
		}
		i = jsonSkipSpace(raw, i+1)
		vend := jsonSkipValue(raw, i)
		if vend <= i {
			return
		}
		set(key, raw[i:vend])
		i = vend
	}
}

// elements returns the raw elements of the JSON array raw.
func jsonElements(raw []byte) []json.RawMessage {
	i := jsonSkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil
	}
	var out []json.RawMessage
	i++
	for {
		i = jsonSkipSpace(raw, i)
		if i >= len(raw) || raw[i] == ']' {
			return out
		}
		if raw[i] == ',' {
			i++
			continue
		}
		end := jsonSkipValue(raw, i)
		if end <= i {
			return out
		}
		out = append(out, raw[i:end])
		i = end
	}
}

func jsonSkipSpace(p []byte, i int) int {
	for i < len(p) {
		switch p[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string starting at p[i] == '"'.
func jsonSkipString(p []byte, i int) int {
	start := i + 1
	i = start
	for {
		j := bytes.IndexByte(p[i:], '"')
		if j < 0 {
			return len(p)
		}
		i += j
		backslashes := 0
		for k := i - 1; k >= start && p[k] == '\\'; k-- {
			backslashes++
		}
		i++
		if backslashes%2 == 0 {
			return i
		}
	}
}

// skipValue returns the index just past the value starting at p[i].
func jsonSkipValue(p []byte, i int) int {
	depth := 0
	for i < len(p) {
		switch p[i] {
		case '"':
			i = jsonSkipString(p, i)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth <= 0 {
				return i + 1
			}
		default:
			if depth == 0 { // a number, true, false or null
				for i < len(p) {
					switch p[i] {
					case ',', '}', ']', ' ', '\t', '\r', '\n':
						return i
					}
					i++
				}
				return i
			}
		}
		i++
	}
	return i
}
