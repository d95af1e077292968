package grounding

import (
	"fmt"
	"strconv"
)

// The visible messages of a trajectory never change after import; only
// the weights of its assistant messages do, with the verdicts. So the
// store renders each trajectory's "messages" array of the SFT format once,
// when it imports it, with "weight":0 on every assistant message, and
// keeps beside it an SFTMark per assistant message: where that weight's
// digit is and what the message trains on. An export then copies the
// rendering and sets the digits of the supervised messages to 1, instead
// of reading, decoding and rendering every message again.

// SFTMark locates one assistant message in a rendered messages array.
type SFTMark struct {
	Message int // the message's index in the log
	Offset  int // byte offset of the digit of its "weight":0
	Tokens  int // its target tokens (see targetTokens)
}

// AppendSFTMessages appends the SFT "messages" array of msgs (a
// trajectory's messages in order, with Index set) and returns it with the
// marks of its assistant messages, in order. Hidden messages are skipped,
// and so is a visible tool message that answers no visible call (its call
// was made in a hidden message): a chat sample cannot hold an answer to a
// call it does not contain. Offsets count from the start of the array,
// not of dst.
func AppendSFTMessages(dst []byte, msgs []Message) ([]byte, []SFTMark) {
	start := len(dst)
	var marks []SFTMark
	open := map[string]int{} // visible calls not answered yet, by id
	dst = append(dst, '[')
	first := true
	for i := range msgs {
		m := &msgs[i]
		if m.IsHidden() {
			continue
		}
		if m.Role == RoleTool {
			if open[m.ToolCallID] == 0 {
				continue
			}
			open[m.ToolCallID]--
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, `{"role":`...)
		dst = appendJSONString(dst, m.Role)
		if m.Role == RoleTool {
			dst = append(dst, `,"tool_call_id":`...)
			dst = appendJSONString(dst, m.ToolCallID)
		}
		if m.Name != "" {
			dst = append(dst, `,"name":`...)
			dst = appendJSONString(dst, m.Name)
		}
		dst = append(dst, `,"content":`...)
		if m.ContentNull {
			dst = append(dst, "null"...)
		} else {
			dst = appendJSONString(dst, m.Content)
		}
		if len(m.ToolCalls) > 0 {
			dst = append(dst, `,"tool_calls":[`...)
			for k := range m.ToolCalls {
				c := &m.ToolCalls[k]
				if k > 0 {
					dst = append(dst, ',')
				}
				if c.ID != "" {
					open[c.ID]++
				}
				dst = append(dst, `{"id":`...)
				dst = appendJSONString(dst, c.ID)
				dst = append(dst, `,"type":"function","function":{"name":`...)
				dst = appendJSONString(dst, c.Name)
				dst = append(dst, `,"arguments":`...)
				dst = appendJSONString(dst, argumentString(c))
				dst = append(dst, "}}"...)
			}
			dst = append(dst, ']')
		}
		if m.Role == RoleAssistant {
			dst = append(dst, `,"weight":`...)
			marks = append(marks, SFTMark{Message: m.Index, Offset: len(dst) - start, Tokens: targetTokens(m)})
			dst = append(dst, '0')
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), marks
}

// AppendSFTMarks appends marks as text the store keeps: "message offset
// tokens" triples, separated by ";".
func AppendSFTMarks(dst []byte, marks []SFTMark) []byte {
	for i, k := range marks {
		if i > 0 {
			dst = append(dst, ';')
		}
		dst = strconv.AppendInt(dst, int64(k.Message), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(k.Offset), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(k.Tokens), 10)
	}
	return dst
}

// ParseSFTMarks reads the text of AppendSFTMarks, appending to dst.
func ParseSFTMarks(dst []SFTMark, s string) ([]SFTMark, error) {
	if s == "" {
		return dst, nil
	}
	var k SFTMark
	field, n := 0, 0
	digits := false
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if n > 1<<40 {
				return dst, fmt.Errorf("grounding: SFT marks: number too large at byte %d", i)
			}
			n = n*10 + int(s[i]-'0')
			digits = true
			continue
		}
		sep := byte(';') // the end of the text ends a mark
		if i < len(s) {
			sep = s[i]
		}
		if !digits || (sep != ' ' && sep != ';') || (sep == ' ') != (field < 2) {
			return dst, fmt.Errorf("grounding: SFT marks: malformed at byte %d of %.40q", i, s)
		}
		switch field {
		case 0:
			k.Message = n
		case 1:
			k.Offset = n
		case 2:
			k.Tokens = n
			dst = append(dst, k)
		}
		field, n, digits = (field+1)%3, 0, false
	}
	return dst, nil
}

// CheckSFTMarks reports whether every mark points, in ascending order, at
// the digit of a "weight": in rendering, so that a mark which does not
// belong to its rendering is an error rather than a byte changed elsewhere.
func CheckSFTMarks(rendering string, marks []SFTMark) error {
	const key = `"weight":`
	prev := -1
	for _, k := range marks {
		if k.Offset <= prev || k.Offset < len(key) || k.Offset >= len(rendering) ||
			rendering[k.Offset] != '0' || rendering[k.Offset-len(key):k.Offset] != key {
			return fmt.Errorf("grounding: SFT mark of message %d: offset %d holds no weight of the rendering", k.Message, k.Offset)
		}
		prev = k.Offset
	}
	return nil
}

// appendWeighted appends rendering with the weight digit of each mark set
// to weights[i].
func appendWeighted(dst []byte, rendering string, marks []SFTMark, weights []int) []byte {
	at := 0
	for i, k := range marks {
		if i < len(weights) && weights[i] == 1 {
			dst = append(dst, rendering[at:k.Offset]...)
			dst = append(dst, '1')
			at = k.Offset + 1
		}
	}
	return append(dst, rendering[at:]...)
}
