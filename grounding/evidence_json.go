package grounding

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// AppendEvidenceJSON appends args as JSON, byte for byte what encoding/json
// writes for them with HTML escaping off (the store keeps evidence that
// way). An import encodes the evidence of every decision, 117 MB for a
// 35,000-trajectory pool; encoding/json spent most of that time on
// reflection and on validating and compacting each raw value. A value that
// is not valid JSON is an error, as with encoding/json.
func AppendEvidenceJSON(dst []byte, args []ArgEvidence) ([]byte, error) {
	if args == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i := range args {
		a := &args[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"path":`...)
		dst = appendMarshalString(dst, a.Path)
		dst = append(dst, `,"value":`...)
		var err error
		if dst, err = appendRawValue(dst, a.Value); err != nil {
			return dst, err
		}
		dst = append(dst, `,"role":`...)
		dst = appendMarshalString(dst, a.Role)
		dst = append(dst, `,"status":`...)
		dst = appendMarshalString(dst, a.Status)
		if a.Reason != "" {
			dst = append(dst, `,"reason":`...)
			dst = appendMarshalString(dst, a.Reason)
		}
		dst = append(dst, `,"where":`...)
		dst = appendEvidenceWhere(dst, &a.Where)
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

func appendEvidenceWhere(dst []byte, e *Evidence) []byte {
	dst = append(dst, `{"found":`...)
	dst = appendMarshalString(dst, e.Found)
	dst = append(dst, `,"message":`...)
	dst = strconv.AppendInt(dst, int64(e.Message), 10)
	dst = append(dst, `,"start":`...)
	dst = strconv.AppendInt(dst, int64(e.Start), 10)
	dst = append(dst, `,"end":`...)
	dst = strconv.AppendInt(dst, int64(e.End), 10)
	for _, f := range [...]struct{ key, val string }{
		{`,"json_path":`, e.JSONPath}, {`,"normalization":`, e.Normalization},
		{`,"derivation":`, e.Derivation}, {`,"hidden":`, e.Hidden},
	} {
		if f.val != "" {
			dst = append(dst, f.key...)
			dst = appendMarshalString(dst, f.val)
		}
	}
	dst = append(dst, `,"hidden_entry":`...)
	dst = strconv.AppendInt(dst, int64(e.HiddenEntry), 10)
	dst = append(dst, `,"hidden_message":`...)
	dst = strconv.AppendInt(dst, int64(e.HiddenMessage), 10)
	if e.Note != "" {
		dst = append(dst, `,"note":`...)
		dst = appendMarshalString(dst, e.Note)
	}
	return append(dst, '}')
}

// appendRawValue appends a raw JSON value as encoding/json does: null when
// empty, else validated and compacted.
func appendRawValue(dst []byte, v json.RawMessage) ([]byte, error) {
	if len(v) == 0 {
		return append(dst, "null"...), nil
	}
	n := len(dst)
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, v); err != nil {
		return dst[:n], err
	}
	return buf.Bytes(), nil
}

// appendMarshalString appends s as a JSON string exactly as encoding/json
// writes it with HTML escaping off: \b, \f, \n, \r and \t by name, other
// control characters as \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029
// escaped.
func appendMarshalString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
