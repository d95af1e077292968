package grounding

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Format names a log format an importer understands (SPEC §2).
type Format string

// Log formats. FormatAuto detects the format from the content.
const (
	FormatAuto      Format = "auto"
	FormatCanonical Format = "canonical"
	FormatTauBench  Format = "tau-bench"
	FormatOpenAI    Format = "openai-jsonl"
)

// ParseFormat maps a user-supplied format name to a Format. It accepts "",
// "auto", "canonical", "tau-bench" and "openai-jsonl" (ignoring case and
// surrounding space); "" means FormatAuto. Any other name is an error
// wrapping ErrInvalid that lists the accepted values.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case "", FormatAuto:
		return FormatAuto, nil
	case FormatCanonical, FormatTauBench, FormatOpenAI:
		return f, nil
	}
	return "", fmt.Errorf("grounding: unknown log format %q, expected one of auto, canonical, tau-bench, openai-jsonl: %w", s, ErrInvalid)
}

// MaxRecordBytes caps one record (a JSONL line or one τ-bench list element).
const MaxRecordBytes = 64 << 20

// recordLimit is the cap actually enforced; it is MaxRecordBytes except in
// tests, which lower it to exercise the cap without 64 MiB inputs.
var recordLimit = MaxRecordBytes

// readBufferSize is the bufio buffer Read reads through. It also bounds what
// Detect can peek at: the first MiB of the input.
const readBufferSize = 1 << 20

var utf8BOM = []byte("\xef\xbb\xbf")

// readers recycles Read's 1 MiB buffers across files.
var importReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferSize) }}

// Read decodes the trajectories of one log file from r and yields them in
// source order. It streams: memory stays bounded by the largest record, never
// by the input size (except for the set of trajectory ids, kept to refuse
// duplicates). file names the input in errors and in Trajectory.Source.File;
// for τ-bench and id-less OpenAI records its base name also prefixes the ids.
//
// With FormatAuto (or "") it calls Detect first. Every yielded trajectory has
// Source.Format, File, Index (0-based record index) and Line (1-based line of
// the record's start) set.
//
// A problem with the content is yielded as an *ImportError (which wraps
// ErrInvalid), after which the sequence stops. A failure of r itself is
// yielded as a plain wrapped error instead, so callers do not blame the
// user's file for a broken connection or disk.
func Read(r io.Reader, file string, format Format) iter.Seq2[*Trajectory, error] {
	return func(yield func(*Trajectory, error) bool) {
		br := importReaders.Get().(*bufio.Reader)
		br.Reset(r)
		defer func() {
			br.Reset(nil) // drop r
			importReaders.Put(br)
		}()
		if p, _ := br.Peek(len(utf8BOM)); bytes.Equal(p, utf8BOM) {
			br.Discard(len(utf8BOM))
		}
		if format == "" || format == FormatAuto {
			f, err := Detect(br)
			if err != nil {
				yield(nil, withFileName(err, file))
				return
			}
			format = f
		}
		imp := &fileImport{file: file, base: fileBaseName(file), format: format, ids: make(map[string]int)}
		switch format {
		case FormatCanonical, FormatOpenAI:
			imp.readLines(br, yield)
		case FormatTauBench:
			imp.readTau(br, yield)
		case FormatSWEAgent, FormatMiniSWE, FormatOpenHands:
			imp.readSWE(br, yield)
		case FormatSWEInstances, FormatSWEResults:
			yield(nil, sweNotTrajectories(file, format))
		default:
			yield(nil, &ImportError{File: file, Record: -1,
				Expected: "a format among auto, canonical, tau-bench, openai-jsonl", Got: quoteShort(string(format))})
		}
	}
}

// ImportError says what is wrong with an input so a user can fix it.
type ImportError struct {
	File     string
	Record   int    // 0-based record index, -1 when not about one record
	Line     int    // 1-based line when known, else 0
	Field    string // JSON path of the field, e.g. "messages[3].tool_calls[0].function.arguments"
	Expected string // what was expected
	Got      string // what was found (short, truncated to ~80 chars, never the whole payload)
	Err      error  // underlying error if any
}

// Error renders the problem on one line, for example
// `airline.jsonl: record 3 (line 4): messages[2].role: expected one of system, user, assistant, tool; got "robot"`.
func (e *ImportError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	switch {
	case e.Record >= 0 && e.Line > 0:
		fmt.Fprintf(&b, "record %d (line %d): ", e.Record, e.Line)
	case e.Record >= 0:
		fmt.Fprintf(&b, "record %d: ", e.Record)
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	switch {
	case e.Expected != "":
		b.WriteString("expected ")
		b.WriteString(e.Expected)
		if e.Got != "" {
			b.WriteString("; got ")
			b.WriteString(e.Got)
		}
	case e.Err != nil:
		b.WriteString(e.Err.Error())
	default:
		b.WriteString("invalid input")
	}
	return b.String()
}

// Unwrap returns ErrInvalid joined with Err, so both errors.Is(err,
// ErrInvalid) and errors.As on the underlying error hold.
func (e *ImportError) Unwrap() error {
	if e.Err == nil {
		return ErrInvalid
	}
	return errors.Join(ErrInvalid, e.Err)
}

var (
	errEmptyFile = errors.New("file is empty")
	// errTooLarge is returned by the τ-bench byte counter to stop the JSON
	// decoder from buffering an element beyond the cap.
	errRecordTooLarge = errors.New("record too large")
)

func tooLargeError(file string, record, line int) *ImportError {
	return &ImportError{File: file, Record: record, Line: line,
		Err: fmt.Errorf("record exceeds %s", byteSize(recordLimit))}
}

func byteSize(n int) string {
	if n%(1<<20) == 0 {
		return strconv.Itoa(n>>20) + " MiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// withFile sets the file name on an *ImportError coming from Detect; other
// errors are I/O failures and get wrapped.
func withFileName(err error, file string) error {
	var ie *ImportError
	if errors.As(err, &ie) {
		ie.File = file
		return ie
	}
	return fmt.Errorf("grounding: read %s: %w", file, err)
}

// importer holds the per-file state of one Read.
type fileImport struct {
	file   string
	base   string // file's base name without extension, "" when unknown
	format Format
	ids    map[string]int // trajectory id → record index, to refuse duplicates
}

func (imp *fileImport) newDecoder(record, line int) *recordDecoder {
	return &recordDecoder{format: imp.format, file: imp.file, record: record, line: line}
}

// unique records t's id, or reports which earlier record already used it.
func (imp *fileImport) unique(t *Trajectory, field string) *ImportError {
	if prev, ok := imp.ids[t.ID]; ok {
		return &ImportError{File: imp.file, Record: t.Source.Index, Line: t.Source.Line, Field: field,
			Expected: "a trajectory id unique within the file",
			Got:      fmt.Sprintf("%s, already used by record %d", quoteShort(t.ID), prev)}
	}
	imp.ids[t.ID] = t.Source.Index
	return nil
}

// invalidUTF8 describes the first invalid byte of p for an error message.
func invalidUTF8At(p []byte) string {
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n <= 1 {
			return fmt.Sprintf("invalid byte 0x%02x at byte %d of the record", p[i], i)
		}
		i += n
	}
	return "invalid UTF-8"
}

// baseName returns the last element of a slash- or backslash-separated file
// name without its extension: "runs/gpt-4o-airline.json" → "gpt-4o-airline".
func fileBaseName(file string) string {
	if i := strings.LastIndexAny(file, `/\`); i >= 0 {
		file = file[i+1:]
	}
	if i := strings.LastIndexByte(file, '.'); i > 0 {
		file = file[:i]
	} else if i == 0 {
		file = ""
	}
	return file
}

// quote renders s for an error message, shortened to about 60 characters.
func quoteShort(s string) string {
	const max = 60
	if utf8.RuneCountInString(s) <= max {
		return strconv.Quote(s)
	}
	n := 0
	for i := range s {
		if n == max {
			return strconv.Quote(s[:i]) + "…"
		}
		n++
	}
	return strconv.Quote(s)
}

// describe names a raw JSON value for the Got part of an error: strings are
// quoted (shortened), numbers and booleans shown, containers only named.
func describeRaw(raw json.RawMessage) string {
	switch jsonKind(raw) {
	case 0:
		return "nothing (the field is missing)"
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "an invalid string"
		}
		return quoteShort(s)
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean (" + string(bytes.TrimSpace(raw)) + ")"
	}
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return "a number (" + s + ")"
}

// kind returns the first non-space byte of a raw JSON value, 0 when empty.
func jsonKind(raw []byte) byte {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// present reports whether a field was given with a non-null value.
func jsonPresent(raw json.RawMessage) bool {
	k := jsonKind(raw)
	return k != 0 && k != 'n'
}

// syntaxProblem turns a JSON decoding error into the Expected and Got parts
// of an ImportError.
func jsonSyntaxProblem(err error) (expected, got string) {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "a complete JSON value", "truncated JSON (the input ends inside the record)"
	case isMaxDepth(err):
		return "JSON nested at most 10000 levels deep", "deeper nesting"
	case errors.As(err, &se) && strings.Contains(se.Error(), "unexpected end"):
		return "a complete JSON value", "truncated JSON (" + se.Error() + ")"
	case errors.As(err, &se):
		return "valid JSON", fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	return "valid JSON", err.Error()
}

// isMaxDepth reports encoding/json's refusal of nesting deeper than 10,000
// levels (maxJSONDepth).
func isMaxDepth(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se) && strings.Contains(se.Error(), "max depth")
}

// tooDeepField names where p, a JSON value, first nests deeper than
// maxJSONDepth: messages[1].tool_calls[0].arguments.a[0][0]…, its first
// segments only. It scans without recursion; "" when p does not nest that
// deep.
func tooDeepField(p []byte) string {
	const shown = 8
	type frame struct {
		obj   bool
		key   string
		index int
	}
	var st []frame
	expectKey := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '"':
			j := i + 1
			for j < len(p) && p[j] != '"' {
				if p[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(p) {
				return ""
			}
			if expectKey && len(st) <= shown {
				var k string
				if json.Unmarshal(p[i:j+1], &k) != nil {
					k = string(p[i+1 : j])
				}
				st[len(st)-1].key = k
			}
			expectKey = false
			i = j
		case '{', '[':
			if len(st) == maxJSONDepth {
				var b strings.Builder
				for n, f := range st[:min(len(st), shown)] {
					switch {
					case !f.obj:
						b.WriteString("[" + strconv.Itoa(f.index) + "]")
					case plainKey(f.key) && len(f.key) <= 60:
						if n > 0 {
							b.WriteByte('.')
						}
						b.WriteString(f.key)
					default:
						b.WriteString("[" + quoteShort(f.key) + "]")
					}
				}
				b.WriteString(pathCut)
				return b.String()
			}
			st = append(st, frame{obj: c == '{'})
			expectKey = c == '{'
		case '}', ']':
			if len(st) == 0 {
				return ""
			}
			st = st[:len(st)-1]
			expectKey = false
		case ',':
			if n := len(st); n > 0 {
				if st[n-1].obj {
					expectKey = true
				} else {
					st[n-1].index++
				}
			}
		}
	}
	return ""
}
