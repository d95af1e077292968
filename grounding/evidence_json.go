package grounding

import (
	"bytes"
	"encoding/json"
	"strconv"
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
		dst = appendJSONString(dst, a.Path)
		dst = append(dst, `,"value":`...)
		var err error
		if dst, err = appendRawValue(dst, a.Value); err != nil {
			return dst, err
		}
		dst = append(dst, `,"role":`...)
		dst = appendJSONString(dst, a.Role)
		dst = append(dst, `,"status":`...)
		dst = appendJSONString(dst, a.Status)
		if a.Reason != "" {
			dst = append(dst, `,"reason":`...)
			dst = appendJSONString(dst, a.Reason)
		}
		dst = append(dst, `,"where":`...)
		dst = appendEvidenceWhere(dst, &a.Where)
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

func appendEvidenceWhere(dst []byte, e *Evidence) []byte {
	dst = append(dst, `{"found":`...)
	dst = appendJSONString(dst, e.Found)
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
			dst = appendJSONString(dst, f.val)
		}
	}
	dst = append(dst, `,"hidden_entry":`...)
	dst = strconv.AppendInt(dst, int64(e.HiddenEntry), 10)
	dst = append(dst, `,"hidden_message":`...)
	dst = strconv.AppendInt(dst, int64(e.HiddenMessage), 10)
	if e.Note != "" {
		dst = append(dst, `,"note":`...)
		dst = appendJSONString(dst, e.Note)
	}
	if r := e.Record; r != nil {
		dst = append(dst, `,"record":{"message":`...)
		dst = strconv.AppendInt(dst, int64(r.Message), 10)
		dst = append(dst, `,"id":`...)
		dst = appendJSONString(dst, r.ID)
		dst = append(dst, `,"start":`...)
		dst = strconv.AppendInt(dst, int64(r.Start), 10)
		dst = append(dst, `,"end":`...)
		dst = strconv.AppendInt(dst, int64(r.End), 10)
		dst = append(dst, '}')
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
