package grounding

// AppendJSONString appends s as a JSON string, byte for byte as
// encoding/json writes it with HTML escaping off (see appendJSONString).
// The store encodes the JSON columns of an import with it.
func AppendJSONString(dst []byte, s string) []byte { return appendJSONString(dst, s) }
